//! Images from files, for machines without registry access: an OCI image layout directory
//! (`oci-layout`, `index.json`, `blobs/`), or a tar archive of one or of `docker save`'s
//! format (`manifest.json` naming a config and layer tars). Blobs are copied into the store
//! verified, as pulls are.

use std::io::Read;
use std::path::Path;

use serde::Deserialize;

use crate::ImageError;
use crate::manifest::{self, Descriptor, Document, OCI_MANIFEST};
use crate::store::{ImageRecord, Store};

const REF_NAME: &str = "org.opencontainers.image.ref.name";

/// Importing lives here, beside the archive reading it drives, so that the store does not
/// import this module.
impl Store {
    /// Imports an OCI image layout directory (or a `docker save` / OCI archive, a tar file)
    /// at `path`, storing its image `name` (the layout's only image, or the one whose
    /// `org.opencontainers.image.ref.name` or repo tag is `name`) as reference `as_name`.
    pub fn import(
        &self,
        path: &Path,
        name: Option<&str>,
        as_name: &str,
    ) -> Result<ImageRecord, ImageError> {
        import(self, path, name, as_name)
    }
}

fn import(
    store: &Store,
    path: &Path,
    name: Option<&str>,
    as_name: &str,
) -> Result<ImageRecord, ImageError> {
    let bad = |detail: String| ImageError::BadArchive {
        path: path.display().to_string(),
        detail,
    };
    let meta =
        std::fs::metadata(path).map_err(ImageError::io(format!("opening {}", path.display())))?;
    if meta.is_dir() {
        return import_layout(store, path, path, name, as_name);
    }
    let staging = tempfile::Builder::new()
        .prefix(".import-")
        .tempdir_in(store.root())
        .map_err(ImageError::io("creating a staging directory"))?;
    let file =
        std::fs::File::open(path).map_err(ImageError::io(format!("opening {}", path.display())))?;
    let mut reader = std::io::BufReader::new(file);
    let gz = {
        use std::io::BufRead;
        let head = reader
            .fill_buf()
            .map_err(ImageError::io(format!("reading {}", path.display())))?;
        head.starts_with(&[0x1f, 0x8b])
    };
    let stream: Box<dyn Read> = if gz {
        Box::new(flate2::read::MultiGzDecoder::new(reader))
    } else {
        Box::new(reader)
    };
    tar::Archive::new(stream)
        .unpack(staging.path())
        .map_err(|error| bad(format!("not a readable tar archive: {error}")))?;
    let dir = staging.path();
    if dir.join("index.json").is_file() && dir.join("blobs").is_dir() {
        return import_layout(store, path, dir, name, as_name);
    }
    if dir.join("manifest.json").is_file() {
        return import_docker_save(store, path, dir, name, as_name);
    }
    Err(bad(
        "neither an OCI image layout (index.json, blobs/) nor a `docker save` archive (manifest.json)".into(),
    ))
}

fn import_layout(
    store: &Store,
    origin: &Path,
    dir: &Path,
    name: Option<&str>,
    as_name: &str,
) -> Result<ImageRecord, ImageError> {
    let bad = |detail: String| ImageError::BadArchive {
        path: origin.display().to_string(),
        detail,
    };
    let blob_path = |digest: &str| -> Result<std::path::PathBuf, ImageError> {
        let hex = crate::reference::check_digest(digest).map_err(&bad)?;
        Ok(dir.join("blobs/sha256").join(hex))
    };
    let index = std::fs::read(dir.join("index.json"))
        .map_err(|error| bad(format!("index.json: {error}")))?;
    let Document::Index(manifests) = Document::parse(&index, manifest::OCI_INDEX, as_name)? else {
        return Err(bad("index.json is not an index".into()));
    };
    let chosen: Vec<&Descriptor> = manifests
        .iter()
        .filter(|descriptor| match name {
            None => true,
            Some(name) => descriptor
                .annotations
                .as_ref()
                .and_then(|a| a.get(REF_NAME))
                .and_then(|v| v.as_str())
                .is_some_and(|ref_name| {
                    ref_name == name || name.ends_with(&format!(":{ref_name}"))
                }),
        })
        .collect();
    let platform = store.config().platform()?;
    let mut descriptor = match chosen.as_slice() {
        [one] => (*one).clone(),
        [] => {
            return Err(bad(format!(
                "no image named {} (it has: {})",
                name.unwrap_or("?"),
                manifests
                    .iter()
                    .filter_map(|d| d
                        .annotations
                        .as_ref()?
                        .get(REF_NAME)?
                        .as_str()
                        .map(str::to_owned))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        many => {
            let owned: Vec<Descriptor> = many.iter().map(|d| (*d).clone()).collect();
            manifest::choose_platform(&owned, &platform, as_name)?.clone()
        }
    };
    loop {
        let bytes = std::fs::read(blob_path(&descriptor.digest)?)
            .map_err(|error| bad(format!("manifest {}: {error}", descriptor.digest)))?;
        if crate::blob::digest_of(&bytes) != descriptor.digest {
            return Err(ImageError::DigestMismatch {
                reference: as_name.to_owned(),
                what: "the manifest".into(),
                expected: descriptor.digest.clone(),
                actual: crate::blob::digest_of(&bytes),
            });
        }
        match Document::parse(&bytes, &descriptor.media_type, as_name)? {
            Document::Index(inner) => {
                descriptor = manifest::choose_platform(&inner, &platform, as_name)?.clone();
            }
            Document::Manifest { config, layers } => {
                for (blob, what) in std::iter::once((&config, "the image configuration".to_owned()))
                    .chain(
                        layers
                            .iter()
                            .enumerate()
                            .map(|(i, l)| (l, format!("layer {}", i + 1))),
                    )
                {
                    let path = blob_path(&blob.digest)?;
                    let mut file = std::fs::File::open(&path)
                        .map_err(|error| bad(format!("{what} {}: {error}", blob.digest)))?;
                    store.blobs().store_reader(
                        &blob.digest,
                        (blob.size > 0).then_some(blob.size),
                        as_name,
                        &what,
                        &mut file,
                    )?;
                }
                return store.finish_import(
                    as_name,
                    origin.display().to_string(),
                    &bytes,
                    config.digest,
                    layers,
                );
            }
        }
    }
}

#[derive(Deserialize)]
struct SaveEntry {
    #[serde(rename = "Config")]
    config: String,
    #[serde(rename = "RepoTags", default)]
    repo_tags: Option<Vec<String>>,
    #[serde(rename = "Layers")]
    layers: Vec<String>,
}

fn import_docker_save(
    store: &Store,
    origin: &Path,
    dir: &Path,
    name: Option<&str>,
    as_name: &str,
) -> Result<ImageRecord, ImageError> {
    let bad = |detail: String| ImageError::BadArchive {
        path: origin.display().to_string(),
        detail,
    };
    let text = std::fs::read(dir.join("manifest.json"))
        .map_err(|error| bad(format!("manifest.json: {error}")))?;
    let entries: Vec<SaveEntry> =
        serde_json::from_slice(&text).map_err(|error| bad(format!("manifest.json: {error}")))?;
    let entry = match name {
        Some(name) => entries.iter().find(|entry| {
            entry.repo_tags.iter().flatten().any(|tag| {
                tag == name
                    || crate::Reference::parse(tag).ok() == crate::Reference::parse(name).ok()
            })
        }),
        None if entries.len() == 1 => entries.first(),
        None => None,
    }
    .ok_or_else(|| {
        bad(format!(
            "no single image named {} in manifest.json",
            name.unwrap_or("?")
        ))
    })?;
    let inside = |relative: &str| -> Result<std::path::PathBuf, ImageError> {
        let path = Path::new(relative);
        if path
            .components()
            .any(|c| !matches!(c, std::path::Component::Normal(_)))
        {
            return Err(bad(format!("{relative} is not a path inside the archive")));
        }
        Ok(dir.join(path))
    };
    let store_file = |path: &Path, what: &str| -> Result<(String, u64, bool), ImageError> {
        let bytes_digest = {
            let mut file =
                std::fs::File::open(path).map_err(|error| bad(format!("{what}: {error}")))?;
            let mut hasher = <sha2::Sha256 as sha2::Digest>::new();
            std::io::copy(&mut file, &mut hasher)
                .map_err(|error| bad(format!("{what}: {error}")))?;
            format!("sha256:{:x}", sha2::Digest::finalize(hasher))
        };
        let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        let mut file =
            std::fs::File::open(path).map_err(|error| bad(format!("{what}: {error}")))?;
        let mut magic = [0u8; 2];
        let gz = file.read_exact(&mut magic).is_ok() && magic == [0x1f, 0x8b];
        let mut file =
            std::fs::File::open(path).map_err(|error| bad(format!("{what}: {error}")))?;
        store
            .blobs()
            .store_reader(&bytes_digest, Some(size), as_name, what, &mut file)?;
        Ok((bytes_digest, size, gz))
    };
    let (config_digest, config_size, _) =
        store_file(&inside(&entry.config)?, "the image configuration")?;
    let mut layers = Vec::new();
    for (index, layer) in entry.layers.iter().enumerate() {
        let (digest, size, gz) = store_file(&inside(layer)?, &format!("layer {}", index + 1))?;
        layers.push(Descriptor {
            media_type: if gz {
                "application/vnd.oci.image.layer.v1.tar+gzip".into()
            } else {
                "application/vnd.oci.image.layer.v1.tar".into()
            },
            digest,
            size,
            platform: None,
            annotations: None,
        });
    }
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "config": {
            "mediaType": "application/vnd.oci.image.config.v1+json",
            "digest": config_digest,
            "size": config_size,
        },
        "layers": layers,
    });
    let bytes = serde_json::to_vec(&manifest).expect("manifest serializes");
    store.finish_import(
        as_name,
        origin.display().to_string(),
        &bytes,
        config_digest,
        layers,
    )
}
