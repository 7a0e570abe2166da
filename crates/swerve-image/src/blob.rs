//! Content-addressed blobs: `blobs/sha256/<hex>`, written only once verified.
//!
//! A blob being fetched lives in `partial/<hex>` under the lock `locks/<hex>.lock` (one
//! `flock` per blob, so concurrent pulls of one layer, in one process or several, fetch it
//! once: the others wait and find it done). An interrupted fetch leaves its partial file,
//! and the next one resumes from its end. A finished blob's size and sha256 are checked
//! before it is renamed into `blobs/`; a mismatch deletes the partial file.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};
use sha2::{Digest, Sha256};

use crate::ImageError;
use crate::reference::check_digest;

/// Where blobs, partial downloads and locks live.
#[derive(Debug, Clone)]
pub struct BlobDirs {
    root: PathBuf,
}

impl BlobDirs {
    /// The blob directories under the store `root` (`blobs/sha256`, `partial`, `locks`),
    /// created if missing.
    pub fn new(root: &Path) -> Result<Self, ImageError> {
        for dir in ["blobs/sha256", "partial", "locks"] {
            std::fs::create_dir_all(root.join(dir)).map_err(ImageError::io(format!(
                "creating {}",
                root.join(dir).display()
            )))?;
        }
        Ok(Self {
            root: root.to_path_buf(),
        })
    }

    /// The path of blob `digest` (whether or not it is there).
    pub fn path(&self, digest: &str) -> PathBuf {
        let hex = digest.strip_prefix("sha256:").unwrap_or(digest);
        self.root.join("blobs/sha256").join(hex)
    }

    /// Whether blob `digest` is stored (complete and verified: only verified blobs are
    /// moved into place).
    pub fn has(&self, digest: &str) -> bool {
        self.path(digest).is_file()
    }

    /// Takes the blob's lock (waiting for another fetch of it to end); then either the blob
    /// is there, or the returned [`Partial`] resumes its fetch.
    pub fn begin(
        &self,
        digest: &str,
        size: Option<u64>,
        reference: &str,
    ) -> Result<Slot, ImageError> {
        let hex = check_digest(digest)
            .map_err(|why| ImageError::Registry {
                registry: reference.to_owned(),
                detail: why,
            })?
            .to_owned();
        let lock_path = self.root.join("locks").join(format!("{hex}.lock"));
        let lock_file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(ImageError::io(format!("opening {}", lock_path.display())))?;
        let lock = Flock::lock(lock_file, FlockArg::LockExclusive).map_err(|(_, errno)| {
            ImageError::Io {
                context: format!("locking {}", lock_path.display()),
                source: errno.into(),
            }
        })?;
        if self.has(digest) {
            return Ok(Slot::Present);
        }
        let part = self.root.join("partial").join(&hex);
        let mut file = File::options()
            .create(true)
            .read(true)
            .append(true)
            .open(&part)
            .map_err(ImageError::io(format!("opening {}", part.display())))?;
        let mut hasher = Sha256::new();
        let mut buffer = vec![0u8; 1 << 16];
        let mut written = 0u64;
        loop {
            let n = file
                .read(&mut buffer)
                .map_err(ImageError::io(format!("reading {}", part.display())))?;
            if n == 0 {
                break;
            }
            hasher.update(&buffer[..n]);
            written += n as u64;
        }
        if size.is_some_and(|size| written > size) {
            file.set_len(0)
                .map_err(ImageError::io(format!("truncating {}", part.display())))?;
            hasher = Sha256::new();
            written = 0;
        }
        Ok(Slot::Fetch(Box::new(Partial {
            digest: digest.to_owned(),
            size,
            reference: reference.to_owned(),
            part,
            dest: self.path(digest),
            file,
            hasher,
            written,
            _lock: lock,
        })))
    }

    /// Stores `reader`'s bytes as blob `digest`, verified (for imports).
    pub fn store_reader(
        &self,
        digest: &str,
        size: Option<u64>,
        reference: &str,
        what: &str,
        reader: &mut dyn Read,
    ) -> Result<(), ImageError> {
        let Slot::Fetch(mut partial) = self.begin(digest, size, reference)? else {
            return Ok(());
        };
        partial.restart()?;
        let mut buffer = vec![0u8; 1 << 16];
        loop {
            let n = reader
                .read(&mut buffer)
                .map_err(ImageError::io(format!("reading {what}")))?;
            if n == 0 {
                break;
            }
            partial.write(&buffer[..n])?;
        }
        partial.finish(what)
    }

    /// Every stored blob's digest and size.
    pub fn list(&self) -> Vec<(String, u64)> {
        let Ok(entries) = std::fs::read_dir(self.root.join("blobs/sha256")) else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|entry| {
                let size = entry.metadata().ok()?.len();
                Some((format!("sha256:{}", entry.file_name().to_str()?), size))
            })
            .collect()
    }
}

/// The state of a blob once its lock is held.
pub enum Slot {
    /// Already stored.
    Present,
    /// To fetch, from [`Partial::offset`].
    Fetch(Box<Partial>),
}

/// A blob being written; holds its lock.
pub struct Partial {
    digest: String,
    size: Option<u64>,
    reference: String,
    part: PathBuf,
    dest: PathBuf,
    file: File,
    hasher: Sha256,
    written: u64,
    _lock: Flock<File>,
}

impl Partial {
    /// Bytes already there (what a resumed download asks the rest after).
    pub fn offset(&self) -> u64 {
        self.written
    }

    /// Drops what was there (the server ignored a range request).
    pub fn restart(&mut self) -> Result<(), ImageError> {
        self.file.set_len(0).map_err(ImageError::io(format!(
            "truncating {}",
            self.part.display()
        )))?;
        self.hasher = Sha256::new();
        self.written = 0;
        Ok(())
    }

    /// Appends the next bytes of the blob. Fails, discarding the partial file, once more
    /// bytes arrive than the descriptor announced.
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), ImageError> {
        self.file
            .write_all(bytes)
            .map_err(ImageError::io(format!("writing {}", self.part.display())))?;
        self.hasher.update(bytes);
        self.written += bytes.len() as u64;
        if let Some(size) = self.size
            && self.written > size
        {
            let _ = std::fs::remove_file(&self.part);
            return Err(ImageError::DigestMismatch {
                reference: self.reference.clone(),
                what: format!("blob {}", self.digest),
                expected: format!("{size} bytes"),
                actual: format!("more than {size} bytes"),
            });
        }
        Ok(())
    }

    /// Checks size and digest and moves the blob into place; a mismatch deletes it.
    pub fn finish(mut self, what: &str) -> Result<(), ImageError> {
        if let Some(size) = self.size
            && self.written < size
        {
            return Err(ImageError::Truncated {
                reference: self.reference.clone(),
                what: what.to_owned(),
                got: self.written,
                expected: size,
            });
        }
        let actual = format!("sha256:{:x}", self.hasher.clone().finalize());
        if actual != self.digest {
            let _ = std::fs::remove_file(&self.part);
            return Err(ImageError::DigestMismatch {
                reference: self.reference.clone(),
                what: what.to_owned(),
                expected: self.digest.clone(),
                actual,
            });
        }
        self.file
            .sync_all()
            .map_err(ImageError::io(format!("syncing {}", self.part.display())))?;
        std::fs::rename(&self.part, &self.dest).map_err(ImageError::io(format!(
            "moving {} into the store",
            self.part.display()
        )))?;
        self.written = 0;
        Ok(())
    }
}

/// sha256 of `bytes` as a digest.
pub fn digest_of(bytes: &[u8]) -> String {
    format!("sha256:{:x}", Sha256::digest(bytes))
}
