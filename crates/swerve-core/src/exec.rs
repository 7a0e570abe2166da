//! The outcome of running one shell command, and the [`Shell`] seam that runs it.
//!
//! The sandbox crate implements [`Shell`] for its isolated workspaces; tools such as
//! `execute_bash` only see this trait, so they can be tested over any implementation.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// What one command did: its captured output (each stream capped), how it ended, how long it took.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecOutcome {
    /// Captured standard output, at most the configured byte cap.
    pub stdout: Vec<u8>,
    /// Captured standard error, at most the configured byte cap.
    pub stderr: Vec<u8>,
    /// The exit code when the command exited normally.
    pub exit_code: Option<i32>,
    /// The signal that ended the command, if one did.
    pub signal: Option<i32>,
    /// True when the command was killed because it ran past its timeout.
    pub timed_out: bool,
    /// True when stdout had more bytes than the cap (the rest was read and discarded).
    pub stdout_truncated: bool,
    /// True when stderr had more bytes than the cap.
    pub stderr_truncated: bool,
    /// The workspace's disk quota, in bytes, when the workspace went over it during (or by)
    /// this command: the sandbox stopped its commands, and stderr ends with a note saying so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_limit: Option<u64>,
    /// Wall-clock time from start to exit.
    #[serde(with = "duration_millis")]
    pub duration: Duration,
}

impl ExecOutcome {
    /// True when the command exited with status 0.
    pub fn success(&self) -> bool {
        self.exit_code == Some(0)
    }

    /// The exit status as a shell reports it: the code, or 128 + signal, or 124 on timeout
    /// (the convention of coreutils' `timeout`).
    pub fn shell_status(&self) -> i32 {
        if self.timed_out {
            124
        } else if let Some(code) = self.exit_code {
            code
        } else {
            128 + self.signal.unwrap_or(0)
        }
    }

    /// Standard output as text (invalid UTF-8 replaced).
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    /// Standard error as text (invalid UTF-8 replaced).
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
}

/// Runs shell commands inside one workspace (its working directory is the repository root).
pub trait Shell: Send + Sync {
    /// Runs `command` with `/bin/sh -c`, killing its whole process tree after `timeout`.
    fn run(&self, command: &str, timeout: Duration) -> std::io::Result<ExecOutcome>;
}

mod duration_millis {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(value: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(value.as_secs_f64() * 1000.0)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
        let millis = f64::deserialize(deserializer)?;
        Ok(Duration::from_secs_f64(millis.max(0.0) / 1000.0))
    }
}
