//! [`WorkspaceFs`]: maps the paths the agent sees (`/testbed/...`) onto the host directory
//! that holds the repository, resolving symlinks one component at a time so nothing can
//! leave the workspace, and reads and writes files safely.
//!
//! The host root may be a magic link such as `/proc/1234/root/testbed` into another mount
//! namespace, so it is never canonicalized: resolution starts at the host root as given and
//! only ever inspects components below it. Absolute symlink targets are read as sandbox
//! paths (they are what the link means inside the sandbox). A resolved path contains no
//! symlinks at the moment it is resolved; a process in the sandbox swapping a directory for
//! a symlink between resolution and use is not guarded against.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};

use swerve_core::FileOwner;

/// Where the repository lives inside the sandbox unless told otherwise.
pub const DEFAULT_SANDBOX_ROOT: &str = "/testbed";

/// Symlinks followed while resolving one path before giving up (Linux's `MAXSYMLINKS`).
const MAX_SYMLINK_HOPS: usize = 40;

/// A repository seen at `sandbox_root` by the agent and stored at `host_root` on the host.
#[derive(Debug, Clone)]
pub struct WorkspaceFs {
    host_root: PathBuf,
    sandbox_root: String,
    root_parts: Vec<String>,
    /// Who new files and directories are created as (the sandbox's root, when it is not
    /// this process); see [`swerve_core::owner`].
    owner: Option<FileOwner>,
}

/// What a resolved path points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// Nothing exists there (yet).
    Missing,
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A socket, fifo or device.
    Other,
}

/// A sandbox path resolved inside the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The path as the agent sees it (absolute under the sandbox root). made absolute and tidied like Python's `Path`
    /// (repeated `/`, `.` components and a trailing `/` removed). Messages show this.
    pub display: String,
    /// The sandbox path after following symlinks and `..`.
    pub sandbox: String,
    /// The same location on the host.
    pub host: PathBuf,
    /// What is there.
    pub kind: EntryKind,
}

/// Why a path cannot be used. The texts are written for the agent; tools print them as
/// `ERROR: {text}`.
#[derive(Debug, thiserror::Error)]
pub enum FsError {
    /// The path is not under the sandbox root, or `..` climbs above it.
    #[error(
        "The path '{path}' is outside the repository {root}. Only paths under {root} can be used."
    )]
    Outside {
        /// The path as the agent sees it (absolute under the sandbox root).
        path: String,
        /// The sandbox root, as the agent sees it.
        root: String,
    },
    /// A symlink on the way points outside the sandbox root.
    #[error(
        "The path '{path}' leads outside the repository {root}: the symbolic link '{link}' points to '{target}'."
    )]
    SymlinkEscape {
        /// The path as the agent sees it (absolute under the sandbox root).
        path: String,
        /// The sandbox root, as the agent sees it.
        root: String,
        /// The symlink on the way, as a sandbox path.
        link: String,
        /// What the symlink points to, as stored in it.
        target: String,
    },
    /// Too many symlinks (probably a loop).
    #[error("The path '{path}' has too many levels of symbolic links.")]
    SymlinkLoop {
        /// The path as the agent sees it (absolute under the sandbox root).
        path: String,
    },
    /// The file is over the configured size cap.
    #[error(
        "The file '{path}' is too large to load ({size} bytes; the limit is {limit} bytes). Use `grep -n` to find the lines you need and print them with `sed -n 'START,ENDp' {path}` instead."
    )]
    TooLarge {
        /// The path as the agent sees it (absolute under the sandbox root).
        path: String,
        /// The file's size, in bytes.
        size: u64,
        /// The configured cap, in bytes.
        limit: u64,
    },
    /// The file contains NUL bytes.
    #[error(
        "The file '{path}' is a binary file (it contains NUL bytes); only text files can be viewed or edited."
    )]
    Binary {
        /// The path as the agent sees it (absolute under the sandbox root).
        path: String,
    },
    /// The file is not UTF-8.
    #[error(
        "The file '{path}' is not valid UTF-8 (first invalid byte at offset {offset}); only UTF-8 text files can be viewed or edited. Inspect it with execute_bash instead (e.g. `file`, `iconv`, `grep -n`)."
    )]
    NotUtf8 {
        /// The path as the agent sees it (absolute under the sandbox root).
        path: String,
        /// The byte offset of the first byte that is not UTF-8.
        offset: usize,
    },
    /// Any other I/O failure.
    #[error("Could not access '{path}': {source}")]
    Io {
        /// The path as the agent sees it (absolute under the sandbox root).
        path: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

/// A symlink met during resolution, kept to explain an escape.
struct Link {
    link: String,
    target: String,
}

impl WorkspaceFs {
    /// A workspace stored at `host_root` and seen at [`DEFAULT_SANDBOX_ROOT`].
    pub fn new(host_root: impl Into<PathBuf>) -> Self {
        Self::with_sandbox_root(host_root, DEFAULT_SANDBOX_ROOT)
    }

    /// A workspace stored at `host_root` and seen at `sandbox_root` (an absolute path).
    pub fn with_sandbox_root(host_root: impl Into<PathBuf>, sandbox_root: &str) -> Self {
        let root_parts: Vec<String> = sandbox_root
            .split('/')
            .filter(|part| !part.is_empty() && *part != ".")
            .map(str::to_owned)
            .collect();
        Self {
            host_root: host_root.into(),
            sandbox_root: format!("/{}", root_parts.join("/")),
            root_parts,
            owner: None,
        }
    }

    /// Creates new files and directories as `owner` (the sandbox's `Sandbox::file_owner`).
    pub fn owned_by(mut self, owner: Option<FileOwner>) -> Self {
        self.owner = owner;
        self
    }

    /// The repository's path inside the sandbox, e.g. `/testbed`.
    pub fn sandbox_root(&self) -> &str {
        &self.sandbox_root
    }

    /// The repository's directory on the host, exactly as given.
    pub fn host_root(&self) -> &Path {
        &self.host_root
    }

    /// `input` made absolute (relative paths are taken from the sandbox root) and tidied
    /// the way Python's `Path` prints it; `..` is kept.
    pub fn display_path(&self, input: &str) -> String {
        let parts = if input.starts_with('/') {
            Vec::new()
        } else {
            self.root_parts.iter().map(String::as_str).collect()
        };
        let parts: Vec<&str> = parts
            .into_iter()
            .chain(input.split('/').filter(|p| !p.is_empty() && *p != "."))
            .collect();
        format!("/{}", parts.join("/"))
    }

    /// The sandbox path of a host path under the host root, if it is under it.
    pub fn to_sandbox(&self, host: &Path) -> Option<String> {
        let relative = host.strip_prefix(&self.host_root).ok()?;
        Some(self.sandbox_of(relative.components().map(Component::as_os_str)))
    }

    fn sandbox_of<'a>(&self, parts: impl IntoIterator<Item = &'a OsStr>) -> String {
        let mut path = self.sandbox_root.clone();
        for part in parts {
            if !path.ends_with('/') {
                path.push('/');
            }
            path.push_str(&part.to_string_lossy());
        }
        path
    }

    /// Resolves a sandbox path (absolute, or relative to the sandbox root) component by
    /// component, following symlinks as the sandbox would, and refusing anything that
    /// leaves the workspace. A path that does not exist resolves with
    /// [`EntryKind::Missing`].
    pub fn resolve(&self, input: &str) -> Result<Resolved, FsError> {
        let display = self.display_path(input);
        let outside = || FsError::Outside {
            path: display.clone(),
            root: self.sandbox_root.clone(),
        };
        let parts: Vec<&str> = display.split('/').filter(|p| !p.is_empty()).collect();
        let root_len = self.root_parts.len();
        if parts.len() < root_len || parts[..root_len] != self.root_parts[..] {
            return Err(outside());
        }
        let mut pending: VecDeque<(OsString, Option<Rc<Link>>)> = parts[root_len..]
            .iter()
            .map(|part| (OsString::from(part), None))
            .collect();
        let mut stack: Vec<OsString> = Vec::new();
        let mut kind = EntryKind::Dir;
        let mut hops = 0;
        while let Some((name, via)) = pending.pop_front() {
            if name == ".." {
                if stack.pop().is_none() {
                    return Err(match via {
                        Some(link) => self.escape(&display, &link),
                        None => outside(),
                    });
                }
                if kind != EntryKind::Missing {
                    kind = EntryKind::Dir;
                }
                continue;
            }
            if kind == EntryKind::Missing {
                stack.push(name);
                continue;
            }
            let candidate = self
                .host_root
                .join(stack.iter().collect::<PathBuf>())
                .join(&name);
            let metadata = match fs::symlink_metadata(&candidate) {
                Ok(metadata) => metadata,
                Err(err)
                    if matches!(
                        err.kind(),
                        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                    ) =>
                {
                    kind = EntryKind::Missing;
                    stack.push(name);
                    continue;
                }
                Err(source) => {
                    return Err(FsError::Io {
                        path: display,
                        source,
                    });
                }
            };
            if !metadata.file_type().is_symlink() {
                kind = if metadata.is_dir() {
                    EntryKind::Dir
                } else if metadata.is_file() {
                    EntryKind::File
                } else {
                    EntryKind::Other
                };
                stack.push(name);
                continue;
            }
            hops += 1;
            if hops > MAX_SYMLINK_HOPS {
                return Err(FsError::SymlinkLoop { path: display });
            }
            let target = fs::read_link(&candidate).map_err(|source| FsError::Io {
                path: display.clone(),
                source,
            })?;
            let link = Rc::new(Link {
                link: self.sandbox_of(stack.iter().map(OsString::as_os_str).chain([&*name])),
                target: target.to_string_lossy().into_owned(),
            });
            let mut target_parts = target.components().filter_map(|component| match component {
                Component::Normal(part) => Some(part.to_owned()),
                Component::ParentDir => Some(OsString::from("..")),
                Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
            });
            if target.is_absolute() {
                let inside = self
                    .root_parts
                    .iter()
                    .all(|root_part| target_parts.next().is_some_and(|part| part == **root_part));
                if !inside {
                    return Err(self.escape(&display, &link));
                }
                stack.clear();
                kind = EntryKind::Dir;
            }
            let target_parts: Vec<OsString> = target_parts.collect();
            for part in target_parts.into_iter().rev() {
                pending.push_front((part, Some(Rc::clone(&link))));
            }
        }
        Ok(Resolved {
            display,
            sandbox: self.sandbox_of(stack.iter().map(OsString::as_os_str)),
            host: self.host_root.join(stack.iter().collect::<PathBuf>()),
            kind,
        })
    }

    fn escape(&self, path: &str, link: &Link) -> FsError {
        FsError::SymlinkEscape {
            path: path.to_owned(),
            root: self.sandbox_root.clone(),
            link: link.link.clone(),
            target: link.target.clone(),
        }
    }

    /// Reads a resolved file as UTF-8 text, refusing files over `max_bytes`, binary files
    /// (NUL bytes) and files that are not UTF-8.
    pub fn read_text(&self, file: &Resolved, max_bytes: u64) -> Result<String, FsError> {
        let io_error = |source| FsError::Io {
            path: file.display.clone(),
            source,
        };
        let size = fs::metadata(&file.host).map_err(io_error)?.len();
        if size > max_bytes {
            return Err(FsError::TooLarge {
                path: file.display.clone(),
                size,
                limit: max_bytes,
            });
        }
        let bytes = fs::read(&file.host).map_err(io_error)?;
        if bytes.contains(&0) {
            return Err(FsError::Binary {
                path: file.display.clone(),
            });
        }
        String::from_utf8(bytes).map_err(|err| FsError::NotUtf8 {
            path: file.display.clone(),
            offset: err.utf8_error().valid_up_to(),
        })
    }

    /// Replaces (or creates, with any missing parent directories) a resolved file's
    /// contents atomically: the data goes to a temporary file in the same directory, which
    /// takes the old file's permissions and owner and is then renamed over it, so a crash
    /// leaves either the old or the new contents. There is no `fsync`: this protects against
    /// a process dying mid-write, not against power loss.
    pub fn write(&self, file: &Resolved, data: &[u8]) -> Result<(), FsError> {
        let io_error = |source| FsError::Io {
            path: file.display.clone(),
            source,
        };
        let create = || {
            if let Some(parent) = file.host.parent() {
                fs::create_dir_all(parent)?;
            }
            write_atomic(&file.host, data)
        };
        match self.owner {
            Some(owner) => owner.create_as(create),
            None => create(),
        }
        .map_err(io_error)
    }

    /// Deletes a resolved file.
    pub fn remove(&self, file: &Resolved) -> Result<(), FsError> {
        fs::remove_file(&file.host).map_err(|source| FsError::Io {
            path: file.display.clone(),
            source,
        })
    }
}

/// Writes `data` to a fresh temporary file next to `path`, then renames it over `path`.
fn write_atomic(path: &Path, data: &[u8]) -> io::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().unwrap_or(Path::new("."));
    let original = fs::metadata(path).ok();
    let (tmp, mut file) = loop {
        let tmp = dir.join(format!(
            ".swerve-{}-{}.tmp",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(file) => break (tmp, file),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(err) => return Err(err),
        }
    };
    let result = (|| {
        file.write_all(data)?;
        if let Some(original) = &original {
            file.set_permissions(original.permissions())?;
            let current = file.metadata()?;
            if (current.uid(), current.gid()) != (original.uid(), original.gid()) {
                // Only root may give a file away; keeping our own owner is acceptable.
                let _ =
                    std::os::unix::fs::fchown(&file, Some(original.uid()), Some(original.gid()));
            }
        }
        drop(file);
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}
