//! Unpacking one layer (a tar, plain, gzip or zstd) into a directory that overlayfs stacks
//! as a lower layer of an image's root.
//!
//! - Whiteouts (`.wh.NAME`) become overlayfs whiteouts (a `0:0` character device at NAME);
//!   an opaque marker (`.wh..wh..opq`) sets `user.overlay.opaque` on its directory (the
//!   sandbox mounts overlays with `userxattr`).
//! - Hard links are linked inside the layer; device nodes are skipped (the sandbox's `/dev`
//!   is its own); FIFOs are created; set-user-id and set-group-id bits are dropped (the
//!   sandbox mounts everything `nosuid` anyway, and these files live on the host).
//! - Ownership is mapped to the sandbox's ids: id `n` in the layer becomes host id
//!   `root + n` when `n` is below the map's size, else the sandbox's `nobody`; with a one-id
//!   map (swerve not running as root) everything belongs to the invoking user.
//! - Paths are resolved inside the layer only: `..` components and paths through symlinks
//!   are refused, so a hostile layer cannot write outside its directory.
//! - The tar stream is checked against the image's `diff_id` (sha256 of the uncompressed tar).

use std::ffi::CString;
use std::io::{BufReader, Read};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::ImageError;
use crate::manifest::Compression;

/// The host ids of a sandbox's users: id `n < count` inside is `uid + n` / `gid + n` outside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdMapping {
    /// The host uid of id 0 inside.
    pub uid: u32,
    /// The host gid of id 0 inside.
    pub gid: u32,
    /// How many consecutive ids are mapped.
    pub count: u32,
}

impl IdMapping {
    /// The mapping of the sandboxes `config` starts.
    pub fn for_sandbox(config: &swerve_sandbox::SandboxConfig) -> Result<Self, ImageError> {
        let (uid, gid, count) = swerve_sandbox::sandbox_ids(config)
            .map_err(|error| ImageError::Config(error.to_string()))?;
        Ok(Self { uid, gid, count })
    }

    /// A short key naming this mapping in the layer cache.
    pub fn key(&self) -> String {
        format!("{}-{}-{}", self.uid, self.gid, self.count)
    }

    fn map(&self, uid: u64, gid: u64) -> (u32, u32) {
        let one = |id: u64, base: u32| {
            if self.count <= 1 {
                base
            } else if id < u64::from(self.count) {
                base + id as u32
            } else {
                base + 65534.min(self.count - 1)
            }
        };
        (one(uid, self.uid), one(gid, self.gid))
    }
}

struct HashingReader<R> {
    inner: R,
    hasher: Sha256,
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
}

/// Unpacks the layer blob at `blob` into the empty directory `dest`, checking `diff_id`
/// when given. `reference` names the image in errors.
pub fn unpack_layer(
    blob: &Path,
    compression: Compression,
    diff_id: Option<&str>,
    dest: &Path,
    ids: IdMapping,
    reference: &str,
) -> Result<(), ImageError> {
    let bad = |detail: String| ImageError::BadLayer {
        reference: reference.to_owned(),
        detail: format!("{}: {detail}", blob.display()),
    };
    let mut file = BufReader::new(
        std::fs::File::open(blob).map_err(ImageError::io(format!("opening {}", blob.display())))?,
    );
    let compression = match compression {
        Compression::Detect => {
            let mut magic = [0u8; 4];
            let head = {
                use std::io::BufRead;
                file.fill_buf()
                    .map_err(ImageError::io(format!("reading {}", blob.display())))?
            };
            let n = head.len().min(4);
            magic[..n].copy_from_slice(&head[..n]);
            if magic[..2] == [0x1f, 0x8b] {
                Compression::Gzip
            } else if magic == [0x28, 0xb5, 0x2f, 0xfd] {
                Compression::Zstd
            } else {
                Compression::None
            }
        }
        other => other,
    };
    let decoder: Box<dyn Read> = match compression {
        Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(file)),
        Compression::Zstd => Box::new(
            ruzstd::decoding::StreamingDecoder::new(file)
                .map_err(|error| bad(format!("not zstd: {error}")))?,
        ),
        _ => Box::new(file),
    };
    let mut hashing = HashingReader {
        inner: decoder,
        hasher: Sha256::new(),
    };
    let mut directories: Vec<(PathBuf, u32, u64)> = Vec::new();
    {
        let mut archive = tar::Archive::new(&mut hashing);
        let entries = archive
            .entries()
            .map_err(|error| bad(format!("not a tar archive: {error}")))?;
        let mut last = PathBuf::new();
        for entry in entries {
            let mut entry = match entry {
                Ok(entry) => entry,
                // Some writers (umoci) end the archive without padding its last entry or
                // writing the end-of-archive blocks: every entry was read whole.
                Err(error) if error.to_string().contains("during skip") => break,
                Err(error) => {
                    return Err(bad(format!(
                        "truncated or corrupt after {}: {error}",
                        last.display()
                    )));
                }
            };
            let raw_path = entry
                .path()
                .map_err(|error| bad(format!("bad path: {error}")))?
                .into_owned();
            let Some(relative) = clean(&raw_path) else {
                return Err(bad(format!(
                    "entry {} leaves the layer",
                    raw_path.display()
                )));
            };
            last = relative.clone();
            if relative.as_os_str().is_empty() {
                continue;
            }
            let target = dest.join(&relative);
            check_parents(dest, &relative).map_err(&bad)?;
            let name = relative
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default();
            let parent = target.parent().unwrap_or(dest).to_path_buf();
            create_parents(dest, &relative, ids)?;
            if name == ".wh..wh..opq" {
                xattr_set(&parent, "user.overlay.opaque", b"y").map_err(&bad)?;
                continue;
            }
            if let Some(hidden) = name.strip_prefix(".wh.") {
                let whiteout = parent.join(hidden);
                remove_any(&whiteout);
                nix::sys::stat::mknod(
                    &whiteout,
                    nix::sys::stat::SFlag::S_IFCHR,
                    nix::sys::stat::Mode::empty(),
                    0,
                )
                .map_err(|error| {
                    bad(format!(
                        "cannot create the whiteout {}: {error}",
                        whiteout.display()
                    ))
                })?;
                chown(&whiteout, ids.map(0, 0));
                continue;
            }
            let header = entry.header();
            let mode = header.mode().unwrap_or(0o644) & 0o1777;
            let (uid, gid) = ids.map(header.uid().unwrap_or(0), header.gid().unwrap_or(0));
            let mtime = header.mtime().unwrap_or(0);
            let kind = header.entry_type();
            if !kind.is_dir() {
                remove_any(&target);
            }
            match kind {
                tar::EntryType::Directory => {
                    if !target.is_dir() {
                        remove_any(&target);
                        std::fs::create_dir(&target)
                            .map_err(ImageError::io(format!("creating {}", target.display())))?;
                    }
                    directories.push((target.clone(), mode, mtime));
                }
                tar::EntryType::Regular | tar::EntryType::Continuous => {
                    let mut out = std::fs::File::create(&target)
                        .map_err(ImageError::io(format!("creating {}", target.display())))?;
                    std::io::copy(&mut entry, &mut out).map_err(|error| {
                        bad(format!("truncated at {}: {error}", relative.display()))
                    })?;
                    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(mode))
                        .map_err(ImageError::io(format!("chmod {}", target.display())))?;
                }
                tar::EntryType::Symlink => {
                    let link = entry
                        .link_name()
                        .map_err(|error| bad(format!("bad link: {error}")))?
                        .ok_or_else(|| {
                            bad(format!("symlink {} has no target", relative.display()))
                        })?;
                    std::os::unix::fs::symlink(&link, &target)
                        .map_err(ImageError::io(format!("creating {}", target.display())))?;
                }
                tar::EntryType::Link => {
                    let link = entry
                        .link_name()
                        .map_err(|error| bad(format!("bad link: {error}")))?
                        .ok_or_else(|| {
                            bad(format!("hard link {} has no target", relative.display()))
                        })?;
                    let Some(source) = clean(&link) else {
                        return Err(bad(format!(
                            "hard link {} leaves the layer",
                            link.display()
                        )));
                    };
                    check_parents(dest, &source).map_err(&bad)?;
                    let source = dest.join(source);
                    match std::fs::symlink_metadata(&source) {
                        Ok(meta) if !meta.is_dir() => std::fs::hard_link(&source, &target)
                            .map_err(ImageError::io(format!("linking {}", target.display())))?,
                        _ => {
                            tracing::warn!(
                                "{reference}: hard link {} to {} outside this layer; skipped",
                                relative.display(),
                                link.display()
                            );
                        }
                    }
                    continue;
                }
                tar::EntryType::Fifo => {
                    nix::unistd::mkfifo(&target, nix::sys::stat::Mode::from_bits_truncate(mode))
                        .map_err(|error| bad(format!("mkfifo {}: {error}", target.display())))?;
                }
                tar::EntryType::Char | tar::EntryType::Block => continue,
                // PAX and GNU extension headers are consumed by the tar reader.
                _ => continue,
            }
            chown(&target, (uid, gid));
            if !kind.is_dir() {
                set_mtime(&target, mtime);
            }
        }
    }
    // The rest of the stream (tar padding) counts toward the diff id.
    std::io::copy(&mut hashing, &mut std::io::sink())
        .map_err(|error| bad(format!("truncated or corrupt: {error}")))?;
    if let Some(expected) = diff_id {
        let actual = format!("sha256:{:x}", hashing.hasher.finalize());
        if actual != expected {
            return Err(ImageError::DigestMismatch {
                reference: reference.to_owned(),
                what: format!("the uncompressed layer {}", blob.display()),
                expected: expected.to_owned(),
                actual,
            });
        }
    }
    for (dir, mode, mtime) in directories.iter().rev() {
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(*mode));
        set_mtime(dir, *mtime);
    }
    chown(dest, ids.map(0, 0));
    Ok(())
}

/// `path` without `.`, a leading `/`, or `None` when it has `..`.
fn clean(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => out.push(part),
            Component::CurDir | Component::RootDir => {}
            Component::ParentDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// Refuses a path whose parent directories inside `dest` include a symlink.
fn check_parents(dest: &Path, relative: &Path) -> Result<(), String> {
    let mut current = dest.to_path_buf();
    let mut components = relative.components().peekable();
    while let Some(component) = components.next() {
        if components.peek().is_none() {
            break;
        }
        current.push(component);
        if let Ok(meta) = std::fs::symlink_metadata(&current)
            && meta.file_type().is_symlink()
        {
            return Err(format!(
                "entry {} goes through the symlink {}",
                relative.display(),
                current.display()
            ));
        }
    }
    Ok(())
}

/// Creates the missing parent directories of `relative` inside `dest`, owned by the
/// sandbox's root (a layer may list a file without its directories).
fn create_parents(dest: &Path, relative: &Path, ids: IdMapping) -> Result<(), ImageError> {
    let mut current = dest.to_path_buf();
    let mut components = relative.components().peekable();
    while let Some(component) = components.next() {
        if components.peek().is_none() {
            break;
        }
        current.push(component);
        if std::fs::symlink_metadata(&current).is_err() {
            std::fs::create_dir(&current)
                .map_err(ImageError::io(format!("creating {}", current.display())))?;
            chown(&current, ids.map(0, 0));
        }
    }
    Ok(())
}

fn remove_any(path: &Path) {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => {
            let _ = std::fs::remove_dir_all(path);
        }
        Ok(_) => {
            let _ = std::fs::remove_file(path);
        }
        Err(_) => {}
    }
}

fn chown(path: &Path, (uid, gid): (u32, u32)) {
    if nix::unistd::Uid::effective().is_root() {
        let _ = std::os::unix::fs::lchown(path, Some(uid), Some(gid));
    }
}

fn set_mtime(path: &Path, mtime: u64) {
    let time = nix::sys::time::TimeSpec::new(mtime as i64, 0);
    let _ = nix::sys::stat::utimensat(
        nix::fcntl::AT_FDCWD,
        path,
        &time,
        &time,
        nix::sys::stat::UtimensatFlags::NoFollowSymlink,
    );
}

fn xattr_set(path: &Path, name: &str, value: &[u8]) -> Result<(), String> {
    let c_path = CString::new(path.as_os_str().as_bytes()).map_err(|e| e.to_string())?;
    let c_name = CString::new(name).map_err(|e| e.to_string())?;
    // SAFETY: valid NUL-terminated strings and a live buffer of the given length.
    let result = unsafe {
        libc::lsetxattr(
            c_path.as_ptr(),
            c_name.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        )
    };
    if result == 0 {
        Ok(())
    } else {
        Err(format!(
            "cannot set {name} on {}: {} (the image store needs a filesystem with user xattrs)",
            path.display(),
            std::io::Error::last_os_error()
        ))
    }
}
