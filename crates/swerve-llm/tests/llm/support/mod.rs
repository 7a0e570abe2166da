//! What the HTTP model's tests add to the shared loopback model server
//! ([`swerve_testing::ModelServer`], re-exported here with its constants): captured tracing
//! output and a time bound for calls that must not hang.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use swerve_testing::server::{
    COMPLETION_IDS, CONTENT, LOGPROBS, ModelServer, PROMPT_IDS, REASONING, Reply,
};

/// Everything logged on this thread while the guard lives, as text.
pub struct Logs(Arc<Mutex<Vec<u8>>>);

impl Logs {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

struct LogWriter(Arc<Mutex<Vec<u8>>>);

impl Write for LogWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Captures all tracing output (every level) of the current thread. Use with
/// a current-thread runtime so everything the client does runs here.
pub fn capture_logs() -> (tracing::subscriber::DefaultGuard, Logs) {
    let buffer = Arc::new(Mutex::new(Vec::new()));
    let writer = buffer.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || LogWriter(writer.clone()))
        .finish();
    (tracing::subscriber::set_default(subscriber), Logs(buffer))
}

/// Fails the test instead of hanging it.
pub async fn bounded<T>(limit: Duration, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(limit, future)
        .await
        .expect("the call did not finish in time: it hangs")
}
