//! Shared fixtures for the sandbox tests: a small git repository and a cache.

#![allow(dead_code)]

use std::path::PathBuf;

use swerve_sandbox::{
    BaseCheckout, Cache, ImageRoot, Isolation, RepoSource, SandboxConfig, Strategy, Workspace,
    WorkspaceOptions,
};

use swerve_testing::repo;
pub use swerve_testing::sh;

/// A temporary directory with a git repository (`repo/`, two commits) and a cache (`cache/`).
pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub repo: PathBuf,
    pub cache: Cache,
    pub base_commit: String,
    pub later_commit: String,
}

impl Fixture {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        repo::init(&repo);
        repo::write(
            &repo,
            &[
                ("a.txt", "one\ntwo\nthree\n"),
                ("pkg/mod.py", "def f():\n    return 1\n"),
                ("script.sh", "#!/bin/sh\necho hi\n"),
                (".gitignore", "ignored/\n"),
            ],
        );
        std::fs::write(repo.join("blob.bin"), [0u8, 1, 2, 255, 0, 7]).unwrap();
        let base_commit = repo::commit_all(&repo, "base");
        repo::write(&repo, &[("future.txt", "the fix\n")]);
        let later_commit = repo::commit_all(&repo, "later commit with the fix");
        let cache = Cache::open(dir.path().join("cache")).unwrap();
        Self {
            dir,
            repo,
            cache,
            base_commit,
            later_commit,
        }
    }

    pub fn base(&self) -> BaseCheckout {
        self.cache
            .prepare_base(
                "test/repo",
                &RepoSource::Local(self.repo.clone()),
                &self.base_commit,
            )
            .unwrap()
    }

    pub fn workspace(&self, config: SandboxConfig) -> Workspace {
        self.workspace_with(Strategy::Auto, config)
    }

    pub fn workspace_with(&self, strategy: Strategy, sandbox: SandboxConfig) -> Workspace {
        if let Some(image) = self.image_root(&sandbox) {
            return Workspace::create_from_image(
                &self.cache,
                &image,
                &WorkspaceOptions {
                    sandbox,
                    ..Default::default()
                },
                None,
            )
            .unwrap();
        }
        Workspace::create(
            &self.cache,
            &self.base(),
            &WorkspaceOptions {
                strategy,
                sandbox,
                ..Default::default()
            },
        )
        .unwrap()
    }
}

impl Fixture {
    /// With `SWERVE_TEST_IMAGE_LAYERS` set (an image's unpacked layers, topmost first,
    /// separated by `:`; `swerve images root IMAGE` prints them), workspaces run in that
    /// image instead of over the host's system directories, with the fixture's repository
    /// as a layer at `/testbed` on top: the whole suite then runs inside an image's root.
    fn image_root(&self, sandbox: &SandboxConfig) -> Option<ImageRoot> {
        let layers = std::env::var("SWERVE_TEST_IMAGE_LAYERS").ok()?;
        let repo_layer = self.dir.path().join("image-repo-layer");
        if !repo_layer.exists() {
            let staging = self.dir.path().join("image-repo-layer.tmp");
            std::fs::create_dir_all(&staging).unwrap();
            sh(
                self.dir.path(),
                &format!(
                    "cp -a {} {}/testbed",
                    self.base().path.display(),
                    staging.display()
                ),
            );
            let (uid, gid, _) = swerve_sandbox::sandbox_ids(sandbox).unwrap();
            if nix::unistd::Uid::effective().is_root() {
                sh(
                    self.dir.path(),
                    &format!("chown -R {uid}:{gid} {}", staging.display()),
                );
            }
            std::fs::rename(&staging, &repo_layer).unwrap();
        }
        Some(ImageRoot {
            reference: "test-image".into(),
            layers: std::iter::once(repo_layer)
                .chain(layers.split(':').map(PathBuf::from))
                .collect(),
            env: vec![(
                "PATH".into(),
                "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".into(),
            )],
            working_dir: Some("/testbed".into()),
            user: None,
        })
    }
}

/// Whether the suite runs inside an image (`SWERVE_TEST_IMAGE_LAYERS`).
pub fn in_image() -> bool {
    std::env::var_os("SWERVE_TEST_IMAGE_LAYERS").is_some()
}

/// A closed sandbox configuration that insists on namespaces.
pub fn isolated() -> SandboxConfig {
    SandboxConfig {
        isolation: Isolation::Namespaces,
        ..SandboxConfig::default()
    }
}

/// Host PIDs whose command line contains `marker`.
pub fn host_processes_with(marker: &str) -> Vec<u32> {
    let me = std::process::id();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != me)
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|bytes| {
                    String::from_utf8_lossy(&bytes)
                        .replace('\0', " ")
                        .contains(marker)
                })
                .unwrap_or(false)
        })
        .collect()
}
