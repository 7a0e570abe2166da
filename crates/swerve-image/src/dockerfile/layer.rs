//! Writing a build's layers: uncompressed OCI layer tars, hashed as they are written, stored
//! as blobs by digest. A `RUN`'s layer is the diff its sandbox's writable (upper) layer
//! holds: overlayfs whiteouts become `.wh.NAME` entries and opaque directories a
//! `.wh..wh..opq` entry, as the OCI image spec's layer format has them, and owners are mapped
//! back from the sandbox's host ids to the image's.

use std::collections::HashMap;
use std::io::{BufWriter, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::tree::{is_opaque, is_whiteout};
use crate::unpack::IdMapping;

/// A writer that hashes what it writes.
struct Hashing<W> {
    inner: W,
    hasher: Sha256,
    written: u64,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// An entry's owner and mode, as the image has them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Attributes {
    /// Owner (in the image).
    pub uid: u64,
    /// Group (in the image).
    pub gid: u64,
    /// Permission bits.
    pub mode: u32,
    /// Modification time, seconds.
    pub mtime: u64,
}

/// A layer tar being written to a temporary file.
pub struct LayerTar {
    builder: tar::Builder<Hashing<BufWriter<std::fs::File>>>,
    path: PathBuf,
    entries: usize,
    links: HashMap<(u64, u64), String>,
}

/// A finished layer blob: its digest (also its diff id: layers are stored uncompressed) and
/// size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// `sha256:…` of the tar.
    pub digest: String,
    /// Bytes.
    pub size: u64,
    /// The temporary file holding it.
    pub path: PathBuf,
}

impl LayerTar {
    /// Starts a tar in the directory `dir`.
    pub fn create(dir: &Path) -> std::io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join(format!(
            "layer-{}-{}.tar",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        ));
        let file = std::fs::File::create(&path)?;
        let mut builder = tar::Builder::new(Hashing {
            inner: BufWriter::new(file),
            hasher: Sha256::new(),
            written: 0,
        });
        builder.mode(tar::HeaderMode::Complete);
        builder.follow_symlinks(false);
        Ok(Self {
            builder,
            path,
            entries: 0,
            links: HashMap::new(),
        })
    }

    fn header(kind: tar::EntryType, attributes: Attributes, size: u64) -> tar::Header {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(kind);
        header.set_mode(attributes.mode & 0o7777);
        header.set_uid(attributes.uid);
        header.set_gid(attributes.gid);
        header.set_mtime(attributes.mtime);
        header.set_size(size);
        header
    }

    /// A directory at `path` (relative, no leading `/`).
    pub fn dir(&mut self, path: &str, attributes: Attributes) -> std::io::Result<()> {
        let mut header = Self::header(tar::EntryType::Directory, attributes, 0);
        self.entries += 1;
        self.builder
            .append_data(&mut header, format!("{path}/"), std::io::empty())
    }

    /// A regular file with `data`.
    pub fn data(&mut self, path: &str, attributes: Attributes, data: &[u8]) -> std::io::Result<()> {
        let mut header = Self::header(tar::EntryType::Regular, attributes, data.len() as u64);
        self.entries += 1;
        self.builder.append_data(&mut header, path, data)
    }

    /// A regular file with the contents of the host file `source` (a hard link to an earlier
    /// entry when `source` is a link to a file already written).
    pub fn file(
        &mut self,
        path: &str,
        attributes: Attributes,
        source: &Path,
    ) -> std::io::Result<()> {
        let meta = std::fs::symlink_metadata(source)?;
        if meta.nlink() > 1 {
            let key = (meta.dev(), meta.ino());
            if let Some(first) = self.links.get(&key) {
                let mut header = Self::header(tar::EntryType::Link, attributes, 0);
                self.entries += 1;
                return self.builder.append_link(&mut header, path, first.clone());
            }
            self.links.insert(key, path.to_owned());
        }
        let mut header = Self::header(tar::EntryType::Regular, attributes, meta.len());
        self.entries += 1;
        self.builder
            .append_data(&mut header, path, std::fs::File::open(source)?)
    }

    /// A symbolic link to `target`.
    pub fn symlink(
        &mut self,
        path: &str,
        attributes: Attributes,
        target: &Path,
    ) -> std::io::Result<()> {
        let mut header = Self::header(tar::EntryType::Symlink, attributes, 0);
        self.entries += 1;
        self.builder.append_link(&mut header, path, target)
    }

    /// An entry copied from another archive (`ADD`'s extraction), renamed to `path`.
    pub fn entry(
        &mut self,
        path: &str,
        header: &tar::Header,
        link: Option<&Path>,
        data: &mut dyn std::io::Read,
    ) -> std::io::Result<()> {
        let mut header = header.clone();
        self.entries += 1;
        match link {
            Some(link) => self.builder.append_link(&mut header, path, link),
            None => self.builder.append_data(&mut header, path, data),
        }
    }

    /// A whiteout deleting `path`.
    pub fn whiteout(&mut self, path: &str) -> std::io::Result<()> {
        let (dir, name) = match path.rsplit_once('/') {
            Some((dir, name)) => (format!("{dir}/"), name),
            None => (String::new(), path),
        };
        let attributes = Attributes {
            uid: 0,
            gid: 0,
            mode: 0o644,
            mtime: 0,
        };
        self.data(&format!("{dir}.wh.{name}"), attributes, &[])
    }

    /// Finishes the tar; `None` when it has no entry (no layer).
    pub fn finish(self) -> std::io::Result<Option<Written>> {
        let entries = self.entries;
        let path = self.path.clone();
        let mut hashing = self.builder.into_inner()?;
        hashing.flush()?;
        if entries == 0 {
            let _ = std::fs::remove_file(&path);
            return Ok(None);
        }
        Ok(Some(Written {
            digest: format!("sha256:{:x}", hashing.hasher.finalize()),
            size: hashing.written,
            path,
        }))
    }
}

/// The image's owner of a host file of the sandbox `ids` (the inverse of unpacking's map).
pub fn image_owner(ids: IdMapping, meta: &std::fs::Metadata) -> (u64, u64) {
    let one = |id: u32, base: u32| {
        if ids.count > 1 && id >= base && id - base < ids.count {
            u64::from(id - base)
        } else if ids.count > 1 {
            65534
        } else {
            0
        }
    };
    (one(meta.uid(), ids.uid), one(meta.gid(), ids.gid))
}

/// The attributes of the host entry `meta` as the image has them.
pub fn attributes(ids: IdMapping, meta: &std::fs::Metadata) -> Attributes {
    let (uid, gid) = image_owner(ids, meta);
    Attributes {
        uid,
        gid,
        mode: meta.mode() & 0o7777,
        mtime: meta.mtime().max(0) as u64,
    }
}

/// Writes the overlayfs upper layer `upper` (a sandbox's changes) into `tar` as an OCI
/// layer diff, entries sorted by name.
pub fn diff_upper(tar: &mut LayerTar, upper: &Path, ids: IdMapping) -> std::io::Result<()> {
    walk(tar, upper, "", ids)
}

fn walk(tar: &mut LayerTar, dir: &Path, relative: &str, ids: IdMapping) -> std::io::Result<()> {
    let mut names: Vec<_> = std::fs::read_dir(dir)?
        .map(|entry| entry.map(|entry| entry.file_name()))
        .collect::<Result<_, _>>()?;
    names.sort();
    for name in names {
        let host = dir.join(&name);
        let path = super::tree::join(relative, &name.to_string_lossy());
        let meta = std::fs::symlink_metadata(&host)?;
        let file_type = meta.file_type();
        if is_whiteout(&meta) {
            tar.whiteout(&path)?;
        } else if file_type.is_dir() {
            tar.dir(&path, attributes(ids, &meta))?;
            if is_opaque(&host) {
                tar.data(
                    &format!("{path}/.wh..wh..opq"),
                    Attributes {
                        uid: 0,
                        gid: 0,
                        mode: 0o644,
                        mtime: 0,
                    },
                    &[],
                )?;
            }
            walk(tar, &host, &path, ids)?;
        } else if file_type.is_symlink() {
            tar.symlink(&path, attributes(ids, &meta), &std::fs::read_link(&host)?)?;
        } else if file_type.is_file() {
            tar.file(&path, attributes(ids, &meta), &host)?;
        } else if file_type.is_fifo() {
            let mut header = LayerTar::header(tar::EntryType::Fifo, attributes(ids, &meta), 0);
            tar.entries += 1;
            tar.builder
                .append_data(&mut header, &path, std::io::empty())?;
        }
        // Sockets and device nodes are not part of an image (the sandbox's /dev is its own).
    }
    Ok(())
}
