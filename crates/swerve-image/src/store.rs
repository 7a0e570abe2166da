//! The image store: blobs (content-addressed, shared by all images), unpacked layers (once
//! per layer and id mapping), and one record per image reference.
//!
//! ```text
//! <store>/blobs/sha256/<hex>          verified blobs: manifests, configs, layers
//! <store>/partial/<hex>               downloads in progress (resumed by the next pull)
//! <store>/locks/<hex>.lock            one flock per blob and per unpacked layer
//! <store>/layers/<ids>/<hex>/         a layer unpacked for one id mapping
//! <store>/images/<reference>.json     what a reference resolved to
//! ```
//!
//! Everything is written beside its place and renamed into it, so a crash leaves only
//! `partial/` files and `layers/<ids>/.tmp-*` directories (removed by `prune`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use nix::fcntl::{Flock, FlockArg};
use serde::{Deserialize, Serialize};

use swerve_sandbox::ImageRoot;

use crate::blob::BlobDirs;
use crate::manifest::{self, Descriptor, Document, ImageConfig};
use crate::reference::Reference;
use crate::registry::{Progress, RegistryClient};
use crate::unpack::{IdMapping, unpack_layer};
use crate::{ImageError, ImagesConfig};

/// What a reference resolved to, as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageRecord {
    /// The reference as named (after rewrites).
    pub reference: String,
    /// Where it came from (a registry, mirror, layout directory or archive).
    pub source: String,
    /// The digest of the image's manifest (for this platform), `sha256:…`.
    pub manifest_digest: String,
    /// The digest of its configuration blob.
    pub config_digest: String,
    /// Its configuration: platform, environment, working directory, user.
    pub config: ImageConfig,
    /// Layers, bottom first.
    pub layers: Vec<Descriptor>,
}

impl ImageRecord {
    /// Compressed size of the image's blobs.
    pub fn size(&self) -> u64 {
        self.layers.iter().map(|layer| layer.size).sum()
    }
}

/// The image store.
pub struct Store {
    root: PathBuf,
    blobs: BlobDirs,
    config: ImagesConfig,
    client: std::sync::OnceLock<Arc<RegistryClient>>,
}

impl Store {
    /// Opens (creating) the store at `root`.
    pub fn open(root: &Path, config: &ImagesConfig) -> Result<Self, ImageError> {
        for dir in ["images", "layers"] {
            std::fs::create_dir_all(root.join(dir)).map_err(ImageError::io(format!(
                "creating {}",
                root.join(dir).display()
            )))?;
        }
        Ok(Self {
            root: root.to_path_buf(),
            blobs: BlobDirs::new(root)?,
            config: config.clone(),
            client: std::sync::OnceLock::new(),
        })
    }

    /// The store's directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The `[images]` configuration it was opened with.
    pub fn config(&self) -> &ImagesConfig {
        &self.config
    }

    /// Its blob directories.
    pub fn blobs(&self) -> &BlobDirs {
        &self.blobs
    }

    fn client(&self) -> Result<Arc<RegistryClient>, ImageError> {
        if let Some(client) = self.client.get() {
            return Ok(client.clone());
        }
        let client = Arc::new(RegistryClient::new(&self.config)?);
        Ok(self.client.get_or_init(|| client).clone())
    }

    fn record_path(&self, reference: &Reference) -> PathBuf {
        self.root
            .join("images")
            .join(format!("{}.json", reference.store_key()))
    }

    /// The stored record of `text` (rewrites applied), if pulled.
    pub fn record(&self, text: &str) -> Result<Option<ImageRecord>, ImageError> {
        let reference = self.config.resolve(text)?;
        let path = self.record_path(&reference);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|error| ImageError::Io {
                    context: format!("reading {}", path.display()),
                    source: std::io::Error::other(error),
                }),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(ImageError::io(format!("reading {}", path.display()))(error)),
        }
    }

    fn write_record(&self, reference: &Reference, record: &ImageRecord) -> Result<(), ImageError> {
        let path = self.record_path(reference);
        // A temporary file of its own per writer (threads of one process included), renamed
        // into place.
        swerve_core::atomic::write_json_atomically(&path, record)
            .map_err(ImageError::io(format!("writing {}", path.display())))
    }

    /// Pulls `text` (mirrors first) unless its record and blobs are all stored; returns the
    /// record.
    pub async fn pull(
        &self,
        text: &str,
        progress: Option<Progress>,
    ) -> Result<ImageRecord, ImageError> {
        let reference = self.config.resolve(text)?;
        if let Some(record) = self.record(text)?
            && record
                .layers
                .iter()
                .all(|layer| self.blobs.has(&layer.digest))
            && reference.digest.is_none()
        {
            return Ok(record);
        }
        self.pull_fresh(&reference, progress).await
    }

    /// Pulls `reference` from its registry (or mirrors), whatever is stored.
    pub async fn pull_fresh(
        &self,
        reference: &Reference,
        progress: Option<Progress>,
    ) -> Result<ImageRecord, ImageError> {
        let mut last = None;
        for source in self.config.sources(reference) {
            match self.pull_from(reference, &source, progress.clone()).await {
                Ok(record) => return Ok(record),
                Err(error) if source != *reference => {
                    tracing::warn!(
                        "mirror {}: {error}; trying the next source",
                        source.registry
                    );
                    last = Some(error);
                }
                Err(error) => return Err(error),
            }
        }
        Err(last.unwrap_or_else(|| ImageError::Config("no source to pull from".into())))
    }

    async fn pull_from(
        &self,
        reference: &Reference,
        source: &Reference,
        progress: Option<Progress>,
    ) -> Result<ImageRecord, ImageError> {
        let client = self.client()?;
        let name = reference.to_string();
        let platform = self.config.platform()?;
        let (mut bytes, mut content_type, mut digest) =
            client.manifest(source, source.manifest_reference()).await?;
        let (config_descriptor, layers) = loop {
            match Document::parse(&bytes, &content_type, &name)? {
                Document::Index(manifests) => {
                    let chosen = manifest::choose_platform(&manifests, &platform, &name)?;
                    let chosen = chosen.digest.clone();
                    (bytes, content_type, digest) = client.manifest(source, &chosen).await?;
                }
                Document::Manifest { config, layers } => break (config, layers),
            }
        };
        client
            .blob(
                source,
                &config_descriptor,
                &self.blobs,
                "the image configuration",
                None,
            )
            .await?;
        let config = self.read_config(&config_descriptor.digest, &name)?;
        check_platform(&config, &platform, &name)?;
        if config.rootfs.diff_ids.len() != layers.len() && !config.rootfs.diff_ids.is_empty() {
            return Err(ImageError::BadLayer {
                reference: name,
                detail: format!(
                    "the configuration lists {} layers, the manifest {}",
                    config.rootfs.diff_ids.len(),
                    layers.len()
                ),
            });
        }
        let total = layers.len();
        let fetches = layers.iter().enumerate().map(|(index, layer)| {
            let client = client.clone();
            let progress = progress.clone();
            async move {
                let what = format!("layer {}/{total}", index + 1);
                client
                    .blob(source, layer, &self.blobs, &what, progress.as_ref())
                    .await
            }
        });
        for result in join_all_limited(fetches.collect(), 3).await {
            result?;
        }
        let record = ImageRecord {
            reference: name,
            source: source.to_string(),
            manifest_digest: digest.clone(),
            config_digest: config_descriptor.digest.clone(),
            config,
            layers,
        };
        std::fs::write(self.blobs.path(&digest), &bytes)
            .map_err(ImageError::io("storing the manifest"))?;
        self.write_record(reference, &record)?;
        Ok(record)
    }

    fn read_config(&self, digest: &str, name: &str) -> Result<ImageConfig, ImageError> {
        let path = self.blobs.path(digest);
        let bytes =
            std::fs::read(&path).map_err(ImageError::io(format!("reading {}", path.display())))?;
        serde_json::from_slice(&bytes).map_err(|error| ImageError::UnsupportedMediaType {
            reference: name.to_owned(),
            what: format!("the image configuration is not an OCI image config: {error}"),
            media_type: "application/vnd.oci.image.config.v1+json".into(),
        })
    }

    /// Pulls `text` from a blocking context (any thread, inside a tokio runtime or not).
    pub fn pull_blocking(&self, text: &str) -> Result<ImageRecord, ImageError> {
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .map_err(ImageError::io("starting a runtime for the pull"))?;
                    runtime.block_on(self.pull(text, None))
                })
                .join()
                .unwrap_or_else(|_| Err(ImageError::Config("the pull panicked".into())))
        })
    }

    /// Stores a record built by an import.
    pub(crate) fn finish_import(
        &self,
        as_name: &str,
        source: String,
        manifest_bytes: &[u8],
        config_digest: String,
        layers: Vec<Descriptor>,
    ) -> Result<ImageRecord, ImageError> {
        let reference = self.config.resolve(as_name)?;
        let name = reference.to_string();
        let config = self.read_config(&config_digest, &name)?;
        check_platform(&config, &self.config.platform()?, &name)?;
        let manifest_digest = crate::blob::digest_of(manifest_bytes);
        self.blobs.store_reader(
            &manifest_digest,
            Some(manifest_bytes.len() as u64),
            &name,
            "the manifest",
            &mut &manifest_bytes[..],
        )?;
        let record = ImageRecord {
            reference: name,
            source,
            manifest_digest,
            config_digest,
            config,
            layers,
        };
        self.write_record(&reference, &record)?;
        Ok(record)
    }

    /// The image's root: its layers unpacked for `ids` (each once, shared by every image),
    /// topmost first, and its configuration.
    pub fn root_for(&self, record: &ImageRecord, ids: IdMapping) -> Result<ImageRoot, ImageError> {
        let dir = self.root.join("layers").join(ids.key());
        std::fs::create_dir_all(&dir)
            .map_err(ImageError::io(format!("creating {}", dir.display())))?;
        let mut layers = Vec::with_capacity(record.layers.len());
        for (index, layer) in record.layers.iter().enumerate() {
            let hex = crate::reference::check_digest(&layer.digest)
                .map_err(|why| ImageError::BadLayer {
                    reference: record.reference.clone(),
                    detail: why,
                })?
                .to_owned();
            let target = dir.join(&hex);
            if !target.is_dir() {
                let diff_id = record.config.rootfs.diff_ids.get(index).map(String::as_str);
                self.unpack_once(record, layer, diff_id, &dir, &hex, ids)?;
            }
            layers.push(target);
        }
        layers.reverse();
        let env = record
            .config
            .config
            .env
            .iter()
            .flatten()
            .filter_map(|pair| pair.split_once('='))
            .map(|(name, value)| (name.to_owned(), value.to_owned()))
            .collect();
        Ok(ImageRoot {
            reference: record.reference.clone(),
            layers,
            env,
            working_dir: record
                .config
                .config
                .working_dir
                .as_deref()
                .filter(|dir| !dir.is_empty())
                .map(PathBuf::from),
            user: record
                .config
                .config
                .user
                .clone()
                .filter(|user| !user.is_empty()),
        })
    }

    fn unpack_once(
        &self,
        record: &ImageRecord,
        layer: &Descriptor,
        diff_id: Option<&str>,
        dir: &Path,
        hex: &str,
        ids: IdMapping,
    ) -> Result<(), ImageError> {
        let lock_path = self
            .root
            .join("locks")
            .join(format!("unpack-{}-{hex}.lock", ids.key()));
        let file = std::fs::File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(ImageError::io(format!("opening {}", lock_path.display())))?;
        let _lock =
            Flock::lock(file, FlockArg::LockExclusive).map_err(|(_, errno)| ImageError::Io {
                context: format!("locking {}", lock_path.display()),
                source: errno.into(),
            })?;
        let target = dir.join(hex);
        if target.is_dir() {
            return Ok(());
        }
        let blob = self.blobs.path(&layer.digest);
        if !blob.is_file() {
            return Err(ImageError::NotInStore(record.reference.clone()));
        }
        let compression = manifest::layer_compression(&layer.media_type).map_err(|what| {
            ImageError::UnsupportedMediaType {
                reference: record.reference.clone(),
                what,
                media_type: layer.media_type.clone(),
            }
        })?;
        let staging = dir.join(format!(".tmp-{hex}-{}", std::process::id()));
        crate::remove_tree(&staging);
        std::fs::create_dir(&staging)
            .map_err(ImageError::io(format!("creating {}", staging.display())))?;
        let result = unpack_layer(
            &blob,
            compression,
            diff_id,
            &staging,
            ids,
            &record.reference,
        )
        .and_then(|()| {
            std::fs::rename(&staging, &target).map_err(ImageError::io(format!(
                "moving {} into place",
                target.display()
            )))
        });
        if result.is_err() {
            crate::remove_tree(&staging);
        }
        result
    }

    /// Every stored image record.
    pub fn list(&self) -> Vec<ImageRecord> {
        let Ok(entries) = std::fs::read_dir(self.root.join("images")) else {
            return Vec::new();
        };
        let mut records: Vec<ImageRecord> = entries
            .flatten()
            .filter(|entry| entry.path().extension().is_some_and(|ext| ext == "json"))
            .filter_map(|entry| serde_json::from_slice(&std::fs::read(entry.path()).ok()?).ok())
            .collect();
        records.sort_by(|a, b| a.reference.cmp(&b.reference));
        records
    }

    /// Forgets the image `text` (its blobs stay until [`Store::prune`]); whether it was there.
    pub fn remove(&self, text: &str) -> Result<bool, ImageError> {
        let reference = self.config.resolve(text)?;
        match std::fs::remove_file(self.record_path(&reference)) {
            Ok(()) => Ok(true),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(error) => Err(ImageError::io("removing the image record")(error)),
        }
    }

    /// Deletes blobs, unpacked layers, partial downloads and staging directories no stored
    /// image uses; returns the bytes freed.
    pub fn prune(&self) -> Result<u64, ImageError> {
        let records = self.list();
        let mut keep = std::collections::HashSet::new();
        for record in &records {
            keep.insert(record.manifest_digest.clone());
            keep.insert(record.config_digest.clone());
            keep.extend(record.layers.iter().map(|layer| layer.digest.clone()));
        }
        let mut freed = 0;
        for (digest, size) in self.blobs.list() {
            if !keep.contains(&digest) && std::fs::remove_file(self.blobs.path(&digest)).is_ok() {
                freed += size;
            }
        }
        for dir in [self.root.join("partial")] {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                freed += entry.metadata().map(|m| m.len()).unwrap_or(0);
                let _ = std::fs::remove_file(entry.path());
            }
        }
        for ids in std::fs::read_dir(self.root.join("layers"))
            .into_iter()
            .flatten()
            .flatten()
        {
            for layer in std::fs::read_dir(ids.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                let name = layer.file_name().to_string_lossy().into_owned();
                if name.starts_with(".tmp-") || !keep.contains(&format!("sha256:{name}")) {
                    freed += disk_usage(&layer.path());
                    crate::remove_tree(&layer.path());
                }
            }
        }
        Ok(freed)
    }

    /// Bytes the store uses on disk: (blobs, unpacked layers).
    pub fn usage(&self) -> (u64, u64) {
        (
            disk_usage(&self.root.join("blobs")),
            disk_usage(&self.root.join("layers")),
        )
    }

    /// Bytes of the unpacked layers of `record` (for any id mapping).
    pub fn unpacked_size(&self, record: &ImageRecord) -> u64 {
        let mut total = 0;
        for ids in std::fs::read_dir(self.root.join("layers"))
            .into_iter()
            .flatten()
            .flatten()
        {
            for layer in &record.layers {
                let hex = layer.digest.trim_start_matches("sha256:");
                let path = ids.path().join(hex);
                if path.is_dir() {
                    total += disk_usage(&path);
                }
            }
        }
        total
    }
}

/// The image's platform must be the one wanted.
fn check_platform(
    config: &ImageConfig,
    wanted: &(String, String),
    name: &str,
) -> Result<(), ImageError> {
    if (config.os.is_empty() || config.os == wanted.0)
        && (config.architecture.is_empty() || config.architecture == wanted.1)
    {
        return Ok(());
    }
    Err(ImageError::WrongArchitecture {
        reference: name.to_owned(),
        wanted: format!("{}/{}", wanted.0, wanted.1),
        found: format!("{}/{}", config.os, config.architecture),
    })
}

/// Allocated bytes of a tree (hard links counted once).
pub fn disk_usage(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let mut seen = std::collections::HashSet::new();
    let mut total = 0;
    let mut pending = vec![path.to_path_buf()];
    while let Some(current) = pending.pop() {
        let Ok(meta) = std::fs::symlink_metadata(&current) else {
            continue;
        };
        if meta.nlink() > 1 && !meta.is_dir() && !seen.insert((meta.dev(), meta.ino())) {
            continue;
        }
        total += meta.blocks() * 512;
        if meta.is_dir() {
            for entry in std::fs::read_dir(&current).into_iter().flatten().flatten() {
                pending.push(entry.path());
            }
        }
    }
    total
}

/// Runs `futures` with at most `limit` at once, results in order.
async fn join_all_limited<F: std::future::Future>(futures: Vec<F>, limit: usize) -> Vec<F::Output> {
    let semaphore = tokio::sync::Semaphore::new(limit.max(1));
    let wrapped = futures.into_iter().map(|future| {
        let semaphore = &semaphore;
        async move {
            let _permit = semaphore.acquire().await.expect("semaphore open");
            future.await
        }
    });
    let mut outputs = Vec::new();
    let mut pinned: Vec<_> = wrapped.map(Box::pin).collect();
    // Poll all concurrently.
    let results = std::sync::Mutex::new(Vec::new());
    {
        let mut set = Vec::new();
        for (index, future) in pinned.drain(..).enumerate() {
            let results = &results;
            set.push(async move {
                let output = future.await;
                results.lock().unwrap().push((index, output));
            });
        }
        join_vec(set).await;
    }
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|(index, _)| *index);
    outputs.extend(results.into_iter().map(|(_, output)| output));
    outputs
}

/// Awaits every future of `futures` concurrently.
async fn join_vec<F: std::future::Future<Output = ()>>(futures: Vec<F>) {
    let mut futures: Vec<std::pin::Pin<Box<F>>> = futures.into_iter().map(Box::pin).collect();
    std::future::poll_fn(move |cx| {
        futures.retain_mut(|future| future.as_mut().poll(cx).is_pending());
        if futures.is_empty() {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await
}
