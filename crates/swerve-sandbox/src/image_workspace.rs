//! Workspaces over a container image, whose repository is scrubbed once per image.
//!
//! [`Workspace::create_from_image`] shows an image's layers as the sandbox's root with the
//! repository's git directory scrubbed (`scrub.rs`: remotes, later refs and tags, reflogs and
//! every object the kept history does not reach). The scrub runs once per image and mount
//! point, confined in a workspace of the image itself ([`Workspace::create_in_image`], with
//! the image's own `git`), and its result is a layer cached in `<cache>/scrubbed/<key>/`
//! stacked over the image's layers for every later rollout. A task that starts from the
//! image's code with a patch applied (SWE-smith's bug) gets its own layer, made the same way
//! from the patched tree committed alone ([`Workspace::create_from_image`] with a starting patch).

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::scrub::{RepoAt, scrub, start_from_patch};
use crate::workspace::{
    ImageRoot, Strategy, Workspace, WorkspaceOptions, refuse_unsupported_image_options,
};
use crate::{Cache, SandboxError};

/// The format of scrubbed image layers, part of their cache key: raised whenever what
/// [`scrub`] removes changes, so layers scrubbed by an older swerve are made again.
pub const IMAGE_SCRUB_FORMAT: u32 = 2;

impl Workspace {
    /// Creates a workspace whose sandbox's root is `image` (its layers read-only, stacked,
    /// under the workspace's writable layer): the repository is where the image has it
    /// (`mount_point`, `/testbed` for SWE-bench's images), commands run with the image's
    /// `Env`, and the base commit of patches is the repository's `HEAD` in the image.
    /// The repository is scrubbed of everything after `HEAD` as a base checkout is (its
    /// remotes, other branches, newer tags, reflogs and unreachable objects), once per image:
    /// the scrubbed git directory is a layer cached in `cache` (see [`scrubbed_image`]).
    /// Needs namespaces; extra layers are mounted as usual, repository layers are refused.
    ///
    /// With a `starting_patch` (a SWE-smith row's bug), the task starts from the image's code
    /// with the patch applied, and the patched tree is the repository's one commit, with no
    /// history before it, since the code before the patch is the task's solution (`scrub.rs`,
    /// [`start_from_patch`]); made once per image and patch, like the scrub. A patch that does
    /// not apply is [`SandboxError::StartingPatch`].
    pub fn create_from_image(
        cache: &Cache,
        image: &ImageRoot,
        options: &WorkspaceOptions,
        starting_patch: Option<&str>,
    ) -> Result<Self, SandboxError> {
        // Refused before the scrub, which would otherwise run for nothing.
        refuse_unsupported_image_options(image, options)?;
        let scrubbed = scrubbed_image(cache, image, options, starting_patch)?;
        Self::create_in_image(cache, &scrubbed, options)
    }
}

/// `image` with its repository (at `options.sandbox.mount_point`) scrubbed: the image's
/// layers under one more, cached in `cache` (`scrubbed/<key>/`) and made on first use by
/// [`scrub`] run in a workspace of the image, so rollouts pay for it once per image. The key
/// covers the image's unpacked layers (their digests and id mapping), the mount point and
/// [`IMAGE_SCRUB_FORMAT`] and the starting patch. Without a starting patch the layer holds
/// only the repository's `.git` changes, and the scrub keeps `HEAD`'s history and tags as for
/// a base; with one, the repository's changes (the patched files too) and one commit.
pub(crate) fn scrubbed_image(
    cache: &Cache,
    image: &ImageRoot,
    options: &WorkspaceOptions,
    starting_patch: Option<&str>,
) -> Result<ImageRoot, SandboxError> {
    let mount_point = &options.sandbox.mount_point;
    let mut hasher = Sha256::new();
    hasher.update(format!(
        "scrub v{IMAGE_SCRUB_FORMAT}\n{}\n",
        mount_point.display()
    ));
    if let Some(patch) = starting_patch {
        hasher.update(format!("starting patch {}\n", patch.len()));
        hasher.update(patch.as_bytes());
    }
    for layer in &image.layers {
        hasher.update(layer.as_os_str().as_encoded_bytes());
        hasher.update(b"\n");
    }
    let key: String = hasher
        .finalize()
        .iter()
        .take(16)
        .map(|byte| format!("{byte:02x}"))
        .collect();
    let dir = cache.root().join("scrubbed");
    std::fs::create_dir_all(&dir)
        .map_err(SandboxError::io(format!("creating {}", dir.display())))?;
    let layer = dir.join(&key);
    if !layer.is_dir() {
        let lock_path = dir.join(format!("{key}.lock"));
        let _lock = crate::cache::lock_exclusive(&lock_path)?;
        if !layer.is_dir() {
            // Under the lock, any staging directory of this key is a crashed scrub's.
            let prefix = format!(".staging-{key}-");
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                if entry.file_name().to_string_lossy().starts_with(&prefix) {
                    let _ = crate::tree::remove_tree(&entry.path());
                }
            }
            let staging = dir.join(format!("{prefix}{}", std::process::id()));
            scrub_image_into(cache, image, options, starting_patch, &staging)
                .and_then(|()| {
                    std::fs::rename(&staging, &layer).map_err(SandboxError::io(format!(
                        "moving the scrubbed layer into {}",
                        layer.display()
                    )))
                })
                .inspect_err(|_| {
                    let _ = crate::tree::remove_tree(&staging);
                })
                .map_err(|error| match error {
                    SandboxError::StartingPatch { .. } => error,
                    error => SandboxError::Setup(format!(
                        "image {}: scrubbing the repository at {}: {error}",
                        image.reference,
                        mount_point.display()
                    )),
                })?;
        }
    }
    Ok(ImageRoot {
        layers: std::iter::once(layer)
            .chain(image.layers.iter().cloned())
            .collect(),
        ..image.clone()
    })
}

/// Scrubs `image`'s repository in a workspace of the image, from `starting_patch` applied when
/// given, and keeps the changes to its git directory (to the whole repository with a starting
/// patch) at `staging`.
fn scrub_image_into(
    cache: &Cache,
    image: &ImageRoot,
    options: &WorkspaceOptions,
    starting_patch: Option<&str>,
    staging: &Path,
) -> Result<(), SandboxError> {
    let mut sandbox = options.sandbox.clone();
    // The new pack is the scrub's, not a rollout's: the disk quota does not apply.
    sandbox.limits.disk_bytes = None;
    let options = WorkspaceOptions {
        strategy: Strategy::Overlay,
        sandbox,
        extra_layers: Vec::new(),
        repository_layers: Vec::new(),
    };
    let workspace = Workspace::create_in_image(cache, image, &options)?;
    let repo = RepoAt::Sandbox(workspace.sandbox());
    let git_dir = PathBuf::from(repo.git_text(&["rev-parse", "--absolute-git-dir"])?);
    let expected = options.sandbox.mount_point.join(".git");
    if git_dir != expected {
        return Err(SandboxError::Unsupported(format!(
            "the repository's git directory is {}, not {}: only a repository whose .git \
             directory is inside it can be scrubbed",
            git_dir.display(),
            expected.display()
        )));
    }
    let branch = repo
        .git_text(&["symbolic-ref", "--quiet", "HEAD"])
        .ok()
        .filter(|name| name.starts_with("refs/heads/"));
    let (commit, kept) = match starting_patch {
        Some(patch) => {
            let start = start_from_patch(&repo, patch, &image.reference)?;
            // The patched files' copies outside the repository are in their directories,
            // with the whiteouts of their byte-compiled caches.
            let mut kept = vec![options.sandbox.mount_point.clone()];
            kept.extend(
                start
                    .copies
                    .iter()
                    .filter_map(|copy| copy.parent())
                    .map(PathBuf::from),
            );
            (start.commit, kept)
        }
        None => (workspace.base().commit.clone(), vec![expected]),
    };
    scrub(&repo, &commit, branch.as_deref())?;
    workspace.keep_changes(staging)?;
    retain_only(staging, &kept)
}

/// Deletes everything in the layer `root` but the `kept` paths (absolute, as inside the
/// sandbox), what is under them and the directories leading to them: what the scrub's
/// workspace wrote besides the repository's changes.
fn retain_only(root: &Path, kept: &[PathBuf]) -> Result<(), SandboxError> {
    let kept: Vec<PathBuf> = kept
        .iter()
        .map(|path| path.strip_prefix("/").unwrap_or(path).to_path_buf())
        .collect();
    retain_under(root, Path::new(""), &kept)
}

/// [`retain_only`] in the layer's directory `dir`, which is `relative` inside the sandbox.
fn retain_under(dir: &Path, relative: &Path, kept: &[PathBuf]) -> Result<(), SandboxError> {
    let entries =
        std::fs::read_dir(dir).map_err(SandboxError::io(format!("reading {}", dir.display())))?;
    for entry in entries.flatten() {
        let inside = relative.join(entry.file_name());
        let entry_path = entry.path();
        let is_dir = entry.file_type().is_ok_and(|kind| kind.is_dir());
        if kept.iter().any(|path| inside.starts_with(path)) {
            continue;
        }
        if is_dir && kept.iter().any(|path| path.starts_with(&inside)) {
            retain_under(&entry_path, &inside, kept)?;
            continue;
        }
        let removed = if is_dir {
            crate::tree::remove_tree(&entry_path)
        } else {
            std::fs::remove_file(&entry_path)
        };
        removed.map_err(SandboxError::io(format!(
            "removing {}",
            entry_path.display()
        )))?;
    }
    Ok(())
}
