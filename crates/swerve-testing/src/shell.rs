//! [`HostShell`]: a real-process [`Shell`] for tests of the layers above the sandbox (tools,
//! agent, SWE-Edit, SWE-World, replay). It runs `/bin/sh -c` in a directory on the host, with
//! no isolation, and kills the command's whole process group when it overruns its timeout.

use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use swerve_core::{ExecOutcome, Shell};

/// Runs commands with `/bin/sh -c` in `dir`, killing the whole process group on timeout.
pub struct HostShell {
    /// The working directory of every command.
    pub dir: PathBuf,
}

impl HostShell {
    /// A shell whose commands run in `dir`.
    pub fn new(dir: impl AsRef<Path>) -> Self {
        Self {
            dir: dir.as_ref().to_path_buf(),
        }
    }
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
