//! Shared test helpers: a temporary workspace mapped at `/testbed`, and a real-process
//! [`Shell`] running `/bin/sh -c` in the workspace directory.

#![allow(dead_code)] // each test binary uses a different subset

use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use swerve_core::{ExecOutcome, Shell, ToolCall};
use swerve_tools::{ToolConfig, ToolResult, Toolbox, WorkspaceFs};
use tempfile::TempDir;

/// Runs commands with `/bin/sh -c` in `dir`, killing the whole process group on timeout.
pub struct HostShell {
    pub dir: PathBuf,
}

impl Shell for HostShell {
    fn run(&self, command: &str, timeout: Duration) -> std::io::Result<ExecOutcome> {
        let started = Instant::now();
        let mut child = Command::new("/bin/sh")
            .arg("-c")
            .arg(command)
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()?;
        let reader = |mut stream: Box<dyn Read + Send>| {
            thread::spawn(move || {
                let mut buffer = Vec::new();
                let _ = stream.read_to_end(&mut buffer);
                buffer
            })
        };
        let stdout = reader(Box::new(child.stdout.take().expect("piped")));
        let stderr = reader(Box::new(child.stderr.take().expect("piped")));
        let mut timed_out = false;
        let status = loop {
            if let Some(status) = child.try_wait()? {
                break status;
            }
            if started.elapsed() >= timeout {
                // SAFETY: plain syscall on the process group we created.
                unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
                timed_out = true;
                break child.wait()?;
            }
            thread::sleep(Duration::from_millis(5));
        };
        Ok(ExecOutcome {
            stdout: stdout.join().expect("reader"),
            stderr: stderr.join().expect("reader"),
            exit_code: status.code(),
            signal: status.signal(),
            timed_out,
            duration: started.elapsed(),
            ..ExecOutcome::default()
        })
    }
}

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
        let shell = Arc::new(HostShell {
            dir: dir.path().to_path_buf(),
        });
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
