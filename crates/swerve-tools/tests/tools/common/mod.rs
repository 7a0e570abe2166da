//! Shared test helpers: a temporary workspace mapped at `/testbed`, and a real-process
//! [`Shell`] running `/bin/sh -c` in the workspace directory.

#![allow(dead_code)] // each test binary uses a different subset

use std::path::Path;
use std::sync::Arc;

use swerve_core::ToolCall;
use swerve_testing::HostShell;
use swerve_tools::{ToolConfig, ToolResult, Toolbox, WorkspaceFs};
use tempfile::TempDir;

/// A temporary repository seen at `/testbed`, with its toolbox.
pub struct Workspace {
    pub dir: TempDir,
    pub toolbox: Toolbox,
}

impl Workspace {
    pub fn new() -> Self {
        Self::with_config(ToolConfig::default())
    }

    pub fn with_config(config: ToolConfig) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let shell = Arc::new(HostShell::new(dir.path()));
        let toolbox = Toolbox::new(WorkspaceFs::new(dir.path()), shell, config);
        Self { dir, toolbox }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// Writes a file (creating parent directories) under the workspace.
    pub fn write(&self, relative: &str, content: impl AsRef<[u8]>) {
        let path = self.root().join(relative);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, content).expect("write");
    }

    pub fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.root().join(relative)).expect("read")
    }

    /// Calls a tool with string arguments.
    pub fn call(&mut self, name: &str, args: &[(&str, &str)]) -> ToolResult {
        let mut call = ToolCall::new(name);
        for (key, value) in args {
            call = call.arg(*key, *value);
        }
        self.toolbox.call(&call)
    }

    /// Calls `file_editor` and returns its raw output.
    pub fn edit(&mut self, args: &[(&str, &str)]) -> String {
        self.call("file_editor", args).output
    }
}
