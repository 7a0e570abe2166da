//! Workspaces: one rollout's private, writable view of a base checkout, with its sandbox.
//!
//! Strategies: `overlay` (an overlayfs whose lower layer is the base, mounted inside the
//! sandbox's private mount namespace: creation costs a few directory entries whatever the
//! size of the base), `reflink` (a copy-on-write clone of every file, on btrfs/XFS), `copy`
//! (a plain recursive copy), and `auto` (overlay, else reflink-or-copy). Hard links are not
//! offered: they are not copy-on-write, so a command writing a file in place would change
//! the base. Destroying a workspace ends its processes and deletes its layer.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use swerve_core::{ExecOutcome, Shell};

use crate::cgroup::CgroupSupport;
use crate::identity::{IdMap, hand_over};
use crate::init::LayerSpec;
use crate::quota::DiskQuota;
use crate::sandbox::{Layer, Placement};
use crate::tree::remove_tree;
use crate::{
    BaseCheckout, Cache, Isolation, IsolationInForce, Patch, PatchOptions, Sandbox, SandboxConfig,
    SandboxError, Userland,
};

/// How a workspace's writable layer is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    /// Overlay where namespaces allow it, else reflink-or-copy.
    #[default]
    Auto,
    /// overlayfs in the sandbox's mount namespace.
    Overlay,
    /// `cp --reflink=always`: fails where the filesystem cannot clone files.
    Reflink,
    /// A plain recursive copy.
    Copy,
}

/// Options for creating a workspace.
#[derive(Debug, Clone, Default)]
pub struct WorkspaceOptions {
    /// Layer strategy.
    pub strategy: Strategy,
    /// The sandbox's configuration.
    pub sandbox: SandboxConfig,
    /// Directories mounted besides the repository, e.g. a prepared Python environment.
    pub extra_layers: Vec<ExtraLayer>,
    /// Saved changes (see [`Workspace::keep_changes`]) stacked over the base, topmost first:
    /// e.g. the build products an environment's install step left in the repository.
    /// They need the overlay strategy.
    pub repository_layers: Vec<PathBuf>,
}

/// A host directory shown inside the sandbox at a fixed path. Extra layers need namespaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtraLayer {
    /// The host directory.
    pub source: PathBuf,
    /// Where it appears inside the sandbox. Its top-level directory must not be one the
    /// sandbox needs from the host (`/usr`, `/lib`, …): pick a new one such as `/swerve-env`.
    pub mount_point: PathBuf,
    /// How commands may change it.
    pub access: LayerAccess,
    /// Saved changes (see [`Workspace::keep_changes_with_layers`]) stacked over `source`,
    /// topmost first: e.g. what a commit's project install wrote into a venv shared by
    /// every commit. Only for [`LayerAccess::CopyOnWrite`]; ignored otherwise.
    pub layers: Vec<PathBuf>,
}

/// How commands may change an [`ExtraLayer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayerAccess {
    /// Writable, but writes go to the workspace's own upper layer (the source is untouched).
    CopyOnWrite,
    /// Read-only.
    ReadOnly,
    /// Writes go to the source directory itself (used to build an environment).
    ReadWrite,
}

/// An image unpacked for the sandbox: its layers (topmost first) and its configuration.
/// Built by `swerve-image`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageRoot {
    /// The image's reference, for messages.
    pub reference: String,
    /// Unpacked layer directories, topmost first.
    pub layers: Vec<PathBuf>,
    /// The image's `Env`.
    pub env: Vec<(String, String)>,
    /// The image's `WorkingDir`.
    pub working_dir: Option<PathBuf>,
    /// The image's `User`.
    pub user: Option<String>,
}

/// Refuses what a workspace over `image` cannot do: run without namespaces (nothing could
/// show the image as `/`), or stack repository layers over it.
pub(crate) fn refuse_unsupported_image_options(
    image: &ImageRoot,
    options: &WorkspaceOptions,
) -> Result<(), SandboxError> {
    if options.sandbox.isolation == Isolation::None {
        return Err(SandboxError::Unsupported(format!(
            "image {} needs namespaces (isolation = \"none\" cannot show an image as /)",
            image.reference
        )));
    }
    if !options.repository_layers.is_empty() {
        return Err(SandboxError::Unsupported(
            "repository layers cannot be stacked over an image".into(),
        ));
    }
    Ok(())
}

/// One rollout's workspace. Dropping it destroys it.
pub struct Workspace {
    sandbox: Option<Arc<Sandbox>>,
    dir: PathBuf,
    base: BaseCheckout,
    strategy: Strategy,
    image: Option<String>,
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

impl Workspace {
    /// Creates a workspace over `base` in `cache`.
    pub fn create(
        cache: &Cache,
        base: &BaseCheckout,
        options: &WorkspaceOptions,
    ) -> Result<Self, SandboxError> {
        let name = format!(
            "{}-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0)
        );
        let dir = cache.workspaces_dir().join(&name);
        std::fs::create_dir(&dir).map_err(SandboxError::io(format!(
            "creating workspace {}",
            dir.display()
        )))?;
        std::fs::write(dir.join("owner"), std::process::id().to_string())
            .map_err(SandboxError::io(format!("writing {}/owner", dir.display())))?;
        let mut workspace = Self {
            sandbox: None,
            dir,
            base: base.clone(),
            strategy: options.strategy,
            image: None,
        };
        let ids = if options.sandbox.isolation == Isolation::None {
            IdMap::current()
        } else {
            IdMap::for_this_process(options.sandbox.subordinate_ids).map_err(SandboxError::Setup)?
        };
        let owner = ids.root_owner();
        let home = workspace.private_dir("home", owner)?;
        let hide = [cache.root().to_path_buf()];
        let system_root = match options.sandbox.userland {
            Userland::Host => None,
            Userland::Base => Some(cache.base_root(&options.sandbox.base_userland)?.path),
        };
        let sandbox_name = format!("ws-{name}");
        let ExtraLayerMounts {
            specs: extra_layers,
            mut written,
        } = workspace.extra_layer_specs(&options.extra_layers, owner)?;
        written.push(home.clone());
        let quota = |written: Vec<PathBuf>| {
            options
                .sandbox
                .limits
                .disk_bytes
                .map(|limit| Arc::new(DiskQuota::new(limit, written)))
        };
        let start = |layer: Layer<'_>, quota| {
            let placement = Placement {
                name: &sandbox_name,
                hide: &hide,
                cgroups: CgroupSupport::detect(),
                extra_layers: &extra_layers,
                ids: &ids,
                home: &home,
                quota,
                system_root: system_root.as_deref(),
            };
            Sandbox::start(layer, &options.sandbox, &placement)
        };
        let wants_overlay = matches!(options.strategy, Strategy::Overlay)
            || (options.strategy == Strategy::Auto && options.sandbox.isolation != Isolation::None);
        let mut overlay_error = None;
        if wants_overlay {
            let upper = workspace.private_dir("upper", owner)?;
            let work = workspace.private_dir("work", owner)?;
            let lowers: Vec<PathBuf> = options
                .repository_layers
                .iter()
                .cloned()
                .chain([base.path.clone()])
                .collect();
            for lower in &lowers {
                hand_over(lower, owner)?;
            }
            let mut written = written.clone();
            written.push(upper.clone());
            match start(
                Layer::Overlay {
                    lowers: &lowers,
                    upper: &upper,
                    work: &work,
                },
                quota(written),
            ) {
                Ok(sandbox) => {
                    workspace.strategy = Strategy::Overlay;
                    workspace.sandbox = Some(Arc::new(sandbox));
                    return Ok(workspace);
                }
                Err(error) if options.strategy == Strategy::Auto => overlay_error = Some(error),
                Err(error) => return Err(error),
            }
        }
        if !options.repository_layers.is_empty() {
            return Err(overlay_error.unwrap_or_else(|| {
                SandboxError::Unsupported(format!(
                    "repository layers need the overlay strategy, not {:?}",
                    options.strategy
                ))
            }));
        }
        let copy = workspace.dir.join("copy");
        let reflink = match options.strategy {
            Strategy::Reflink => "--reflink=always",
            Strategy::Copy => "--reflink=never",
            _ => "--reflink=auto",
        };
        copy_tree(&base.path, &copy, reflink)?;
        hand_over(&copy, owner)?;
        workspace.strategy = if options.strategy == Strategy::Auto {
            Strategy::Copy
        } else {
            options.strategy
        };
        if let Some(error) = overlay_error {
            tracing::debug!("overlay unavailable ({error}); using a copy");
        }
        written.push(copy.clone());
        let sandbox = start(Layer::Directory(&copy), quota(written))?;
        if sandbox.isolation() == IsolationInForce::None {
            // Namespaces were unavailable: the copy's commands run as this process.
            hand_over(&copy, IdMap::current().root_owner())?;
        }
        workspace.sandbox = Some(Arc::new(sandbox));
        Ok(workspace)
    }

    /// [`create_from_image`](Self::create_from_image) over `image` as it is, unscrubbed.
    pub(crate) fn create_in_image(
        cache: &Cache,
        image: &ImageRoot,
        options: &WorkspaceOptions,
    ) -> Result<Self, SandboxError> {
        let mut workspace = Self::create_over_layers(cache, image, options)?;
        let mount_point = &options.sandbox.mount_point;
        workspace.base.commit = crate::git::head_commit(workspace.sandbox()).map_err(|error| {
            SandboxError::Setup(format!(
                "image {}: no git repository at {} ({error})\nhint: set sandbox.mount_point to where the image keeps the repository",
                image.reference,
                mount_point.display()
            ))
        })?;
        Ok(workspace)
    }

    /// A workspace whose root is `image`'s layers under a writable layer, with no repository
    /// in it: what an image build runs each `RUN` in (`swerve-image`'s Dockerfile builder),
    /// keeping the writable layer with [`keep_changes`](Self::keep_changes). `base()` is
    /// empty. Needs namespaces.
    pub fn create_over_layers(
        cache: &Cache,
        image: &ImageRoot,
        options: &WorkspaceOptions,
    ) -> Result<Self, SandboxError> {
        refuse_unsupported_image_options(image, options)?;
        if let Some(user) = &image.user
            && !matches!(user.as_str(), "root" | "0" | "0:0" | "root:root")
        {
            tracing::warn!(
                "image {} sets User {user}; swerve runs its commands as the sandbox's root",
                image.reference
            );
        }
        let name = format!(
            "{}-{}-img",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let dir = cache.workspaces_dir().join(&name);
        std::fs::create_dir(&dir).map_err(SandboxError::io(format!(
            "creating workspace {}",
            dir.display()
        )))?;
        std::fs::write(dir.join("owner"), std::process::id().to_string())
            .map_err(SandboxError::io(format!("writing {}/owner", dir.display())))?;
        let mount_point = options.sandbox.mount_point.clone();
        let mut workspace = Self {
            sandbox: None,
            dir,
            base: BaseCheckout {
                path: image
                    .layers
                    .iter()
                    .map(|layer| layer.join(mount_point.strip_prefix("/").unwrap_or(&mount_point)))
                    .find(|repo| repo.join(".git").exists())
                    .unwrap_or_default(),
                commit: String::new(),
            },
            strategy: Strategy::Overlay,
            image: Some(image.reference.clone()),
        };
        let ids = IdMap::for_this_process(options.sandbox.subordinate_ids)
            .map_err(SandboxError::Setup)?;
        let owner = ids.root_owner();
        let home = workspace.private_dir("home", owner)?;
        let upper = workspace.private_dir("upper", owner)?;
        let work = workspace.private_dir("work", owner)?;
        let ExtraLayerMounts {
            specs: extra_layers,
            mut written,
        } = workspace.extra_layer_specs(&options.extra_layers, owner)?;
        written.push(upper.clone());
        let quota = options
            .sandbox
            .limits
            .disk_bytes
            .map(|limit| Arc::new(DiskQuota::new(limit, written)));
        let sandbox_name = format!("ws-{name}");
        let placement = Placement {
            name: &sandbox_name,
            hide: &[],
            cgroups: CgroupSupport::detect(),
            extra_layers: &extra_layers,
            ids: &ids,
            home: &home,
            quota,
            system_root: None,
        };
        let sandbox = Sandbox::start(
            Layer::Image {
                lowers: &image.layers,
                upper: &upper,
                work: &work,
                env: &image.env,
            },
            &options.sandbox,
            &placement,
        )?;
        workspace.sandbox = Some(Arc::new(sandbox));
        Ok(workspace)
    }

    /// The image this workspace runs in, if any.
    pub fn image(&self) -> Option<&str> {
        self.image.as_deref()
    }

    /// Creates the workspace's directory `name`, owned by the sandbox's root.
    fn private_dir(&self, name: &str, owner: (u32, u32)) -> Result<PathBuf, SandboxError> {
        let dir = self.dir.join(name);
        std::fs::create_dir(&dir)
            .map_err(SandboxError::io(format!("creating {}", dir.display())))?;
        hand_over(&dir, owner)?;
        Ok(dir)
    }

    /// The sandbox running this workspace's commands.
    pub fn sandbox(&self) -> &Sandbox {
        self.sandbox
            .as_ref()
            .expect("a live workspace has a sandbox")
    }

    /// The mount specifications of `layers`, creating the upper layers of copy-on-write
    /// ones, and the host directories their writes land in. Layers the sandbox may change are
    /// handed to its root first.
    fn extra_layer_specs(
        &self,
        layers: &[ExtraLayer],
        owner: (u32, u32),
    ) -> Result<ExtraLayerMounts, SandboxError> {
        let mut specs = Vec::with_capacity(layers.len());
        let mut written = Vec::new();
        for (index, layer) in layers.iter().enumerate() {
            let source = layer.source.clone();
            let spec = match layer.access {
                LayerAccess::ReadOnly => LayerSpec::ReadOnly { source },
                LayerAccess::ReadWrite => {
                    hand_over(&source, owner)?;
                    written.push(source.clone());
                    LayerSpec::Bind { source }
                }
                LayerAccess::CopyOnWrite => {
                    let lowers: Vec<PathBuf> =
                        layer.layers.iter().cloned().chain([source]).collect();
                    for lower in &lowers {
                        hand_over(lower, owner)?;
                    }
                    let upper = self.private_dir(&format!("layer{index}-upper"), owner)?;
                    let work = self.private_dir(&format!("layer{index}-work"), owner)?;
                    written.push(upper.clone());
                    LayerSpec::Overlay {
                        lowers,
                        upper,
                        work,
                    }
                }
            };
            specs.push((layer.mount_point.clone(), spec));
        }
        Ok(ExtraLayerMounts { specs, written })
    }

    /// A shell for this workspace that does not keep it alive: once the workspace is
    /// destroyed, its commands fail with an error instead of running.
    pub fn shell(&self) -> Arc<dyn Shell> {
        Arc::new(WorkspaceShell(Arc::downgrade(
            self.sandbox
                .as_ref()
                .expect("a live workspace has a sandbox"),
        )))
    }

    /// Where the host sees the repository (what tools read and write).
    pub fn host_root(&self) -> &Path {
        self.sandbox().host_root()
    }

    /// The strategy actually in use.
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// The base this workspace was made from.
    pub fn base(&self) -> &BaseCheckout {
        &self.base
    }

    /// The workspace's changes against the base commit.
    pub fn patch(&self, options: &PatchOptions) -> Result<Patch, SandboxError> {
        Patch::of_sandbox(self.sandbox(), &self.base.commit, options)
    }

    /// Ends every process of the workspace and moves its changes to the repository (the
    /// overlay's upper layer, deletions included) to `dest`, for use as a repository layer of
    /// later workspaces. Only for overlay workspaces.
    pub fn keep_changes(mut self, dest: &Path) -> Result<(), SandboxError> {
        if self.strategy != Strategy::Overlay {
            return Err(SandboxError::Unsupported(
                "only overlay workspaces can keep their changes as a layer".into(),
            ));
        }
        drop(self.sandbox.take());
        std::fs::rename(self.dir.join("upper"), dest).map_err(SandboxError::io(format!(
            "moving the workspace's changes to {}",
            dest.display()
        )))?;
        self.teardown()
    }

    /// Like [`keep_changes`](Self::keep_changes), and also moves the changes to copy-on-write
    /// extra layers: `layers` pairs an index into the options' `extra_layers` with where its
    /// changes go (for use in [`ExtraLayer::layers`] of later workspaces).
    pub fn keep_changes_with_layers(
        mut self,
        dest: &Path,
        layers: &[(usize, PathBuf)],
    ) -> Result<(), SandboxError> {
        if self.strategy != Strategy::Overlay {
            return Err(SandboxError::Unsupported(
                "only overlay workspaces can keep their changes as a layer".into(),
            ));
        }
        drop(self.sandbox.take());
        for (index, layer_dest) in layers {
            let upper = self.dir.join(format!("layer{index}-upper"));
            std::fs::rename(&upper, layer_dest).map_err(SandboxError::io(format!(
                "moving the changes to extra layer {index} to {}",
                layer_dest.display()
            )))?;
        }
        std::fs::rename(self.dir.join("upper"), dest).map_err(SandboxError::io(format!(
            "moving the workspace's changes to {}",
            dest.display()
        )))?;
        self.teardown()
    }

    /// Ends every process of the workspace and deletes its layer.
    pub fn destroy(mut self) -> Result<(), SandboxError> {
        self.teardown()
    }

    fn teardown(&mut self) -> Result<(), SandboxError> {
        drop(self.sandbox.take());
        remove_tree(&self.dir).map_err(SandboxError::io(format!(
            "removing workspace {}",
            self.dir.display()
        )))
    }
}

impl Drop for Workspace {
    /// Also runs when creation failed half-way, so a failed create leaves nothing behind.
    fn drop(&mut self) {
        if let Err(error) = self.teardown() {
            tracing::warn!("{error}");
        }
    }
}

/// How a workspace's extra layers are mounted, and the host directories their writes land in.
struct ExtraLayerMounts {
    specs: Vec<(PathBuf, LayerSpec)>,
    written: Vec<PathBuf>,
}

/// A [`Shell`] holding a weak reference to a workspace's sandbox.
struct WorkspaceShell(Weak<Sandbox>);

impl Shell for WorkspaceShell {
    fn run(&self, command: &str, timeout: Duration) -> std::io::Result<ExecOutcome> {
        match self.0.upgrade() {
            Some(sandbox) => sandbox.run(command, timeout),
            None => Err(std::io::Error::other("the workspace has been destroyed")),
        }
    }
}

/// Copies `from` to `to` with `cp -a` and the given reflink mode.
fn copy_tree(from: &Path, to: &Path, reflink: &str) -> Result<(), SandboxError> {
    let output = Command::new("cp")
        .arg("-a")
        .arg(reflink)
        .arg("--")
        .arg(from)
        .arg(to)
        .output()
        .map_err(SandboxError::io("running cp"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(SandboxError::Unsupported(format!(
            "cannot copy the base into the workspace ({reflink}): {}",
            String::from_utf8_lossy(&output.stderr).trim()
        )))
    }
}
