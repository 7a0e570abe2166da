//! A workspace's patch: its diff against the base commit, as `git diff` writes it.
//!
//! Computed by `git` run with the sandbox's view of the repository and a throwaway index
//! (`GIT_INDEX_FILE`), so the agent's own index and staging are untouched: read the base
//! tree, add everything (honouring `.gitignore`), diff against the base commit with
//! `--binary`. New, deleted, renamed, mode-changed and binary files are all included, and
//! `git apply` on a fresh checkout reproduces the tree.

use std::ffi::OsString;

use serde::{Deserialize, Serialize};

use crate::{Sandbox, SandboxError, git};

/// Which paths the patch leaves out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct PatchOptions {
    /// Git pathspec patterns excluded from the patch (e.g. `*.orig`, `reproduce_issue.py`).
    pub exclude: Vec<String>,
}

impl Default for PatchOptions {
    fn default() -> Self {
        Self {
            exclude: vec!["*.orig".into(), "*.rej".into()],
        }
    }
}

/// A unified diff and the paths it touches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Patch {
    /// The diff text (empty when nothing changed).
    pub diff: String,
    /// The paths the diff changes, relative to the repository root.
    pub files: Vec<String>,
}

impl Patch {
    /// The diff of `sandbox`'s repository against `base_commit`.
    pub fn of_sandbox(
        sandbox: &Sandbox,
        base_commit: &str,
        options: &PatchOptions,
    ) -> Result<Self, SandboxError> {
        let scratch = sandbox.scratch().map_err(SandboxError::io(
            "creating a scratch directory for the patch",
        ))?;
        let index = scratch.inside.join("index");
        let attributes_inside = scratch.inside.join("attributes");
        let attributes_host = scratch.host.join("attributes");
        let dir = sandbox.host_root();
        let run = |args: Vec<String>| -> Result<Vec<u8>, SandboxError> {
            let mut command = sandbox
                .host_command("git")
                .map_err(SandboxError::io("preparing git"))?;
            git::configure(&mut command).env("GIT_INDEX_FILE", &index);
            if attributes_host.exists() {
                command.arg("-c").arg(format!(
                    "core.attributesFile={}",
                    attributes_inside.display()
                ));
            }
            command.args(&args);
            let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
            Ok(git::checked(command, dir, &args)?.stdout)
        };
        let pathspec: Vec<String> = std::iter::once("--".to_owned())
            .chain(std::iter::once(".".to_owned()))
            .chain(
                options
                    .exclude
                    .iter()
                    .map(|pattern| format!(":(exclude){pattern}")),
            )
            .collect();
        let with_pathspec = |head: &[&str]| -> Vec<String> {
            head.iter()
                .map(|arg| arg.to_string())
                .chain(pathspec.iter().cloned())
                .collect()
        };
        run(vec!["read-tree".into(), base_commit.into()])?;
        run(with_pathspec(&["add", "-A"]))?;
        let names = run(with_pathspec(&[
            "diff",
            "--cached",
            "--name-only",
            "-z",
            "--no-renames",
            base_commit,
        ]))?;
        let files: Vec<String> = String::from_utf8_lossy(&names)
            .split('\0')
            .filter(|name| !name.is_empty())
            .map(str::to_owned)
            .collect();
        let diff_args = with_pathspec(&[
            "diff",
            "--cached",
            "--binary",
            "--no-color",
            "--no-ext-diff",
            base_commit,
        ]);
        let mut diff = run(diff_args.clone())?;
        if std::str::from_utf8(&diff).is_err() {
            // Text that is not UTF-8 cannot live in a JSON string unchanged: mark such files
            // (and deleted ones, whose old text may be the culprit) binary, so git encodes them
            // in base85, which `git apply` restores byte for byte.
            let not_utf8: String = files
                .iter()
                .filter(|file| {
                    std::fs::read(dir.join(file))
                        .map_or(true, |bytes| std::str::from_utf8(&bytes).is_err())
                })
                .map(|file| format!("/{} binary\n", file.replace(' ', "[[:space:]]")))
                .collect();
            sandbox
                .create_as_owner(|| std::fs::write(&attributes_host, not_utf8))
                .map_err(SandboxError::io("writing git attributes"))?;
            diff = run(diff_args)?;
        }
        Ok(Self {
            diff: String::from_utf8_lossy(&diff).into_owned(),
            files,
        })
    }

    /// True when the workspace has no changes.
    pub fn is_empty(&self) -> bool {
        self.diff.is_empty()
    }
}
