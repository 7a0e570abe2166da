//! `HttpModel` over https against a real TLS server on loopback whose
//! self-signed certificate is made at test time: trusted through `ca_cert`
//! the call succeeds; untrusted, or issued for another host, it fails at once
//! (one connection, no retries) with an error that says what to do; a
//! `ca_cert` that is missing or not PEM is a configuration error.

use crate::support;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rcgen::{CertifiedKey, KeyPair};
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use serde_json::json;
use support::bounded;
use swerve_llm::{HttpModel, HttpModelConfig, Message, Model, ModelError, ModelRequest};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::task::AbortHandle;
use tokio_rustls::TlsAcceptor;

/// Ceiling for any single call; hangs fail instead of blocking.
const LIMIT: Duration = Duration::from_secs(20);
const CONTENT: &str = "Hello over TLS.";

/// A certificate for `names` (DNS names or IP addresses), signed by its own key.
fn self_signed(names: &[&str]) -> CertifiedKey<KeyPair> {
    let names: Vec<String> = names.iter().map(|name| name.to_string()).collect();
    rcgen::generate_simple_self_signed(names).unwrap()
}

/// A directory under the system's temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let path =
            std::env::temp_dir().join(format!("swerve-llm-tls-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        Self(path)
    }

    fn write(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, contents).unwrap();
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// An HTTPS server on 127.0.0.1 answering every request with a minimal
/// chat completion. It counts the TCP connections it accepts and records the
/// paths of the requests that got through the handshake.
struct TlsServer {
    addr: SocketAddr,
    connections: Arc<AtomicUsize>,
    paths: Arc<Mutex<Vec<String>>>,
    accept: AbortHandle,
}

impl TlsServer {
    async fn start(certified: &CertifiedKey<KeyPair>) -> Self {
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
            certified.signing_key.serialize_der(),
        ));
        let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![certified.cert.der().clone()], key)
        .unwrap();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let connections = Arc::new(AtomicUsize::new(0));
        let paths = Arc::new(Mutex::new(Vec::new()));
        let (count, seen) = (connections.clone(), paths.clone());
        let accept = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                let (acceptor, seen) = (acceptor.clone(), seen.clone());
                tokio::spawn(async move {
                    // A client that rejects the certificate ends the handshake.
                    if let Ok(stream) = acceptor.accept(stream).await {
                        serve(stream, seen).await;
                    }
                });
            }
        })
        .abort_handle();
        Self {
            addr,
            connections,
            paths,
            accept,
        }
    }

    fn base_url(&self) -> String {
        format!("https://{}/v1", self.addr)
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    fn paths(&self) -> Vec<String> {
        self.paths.lock().unwrap().clone()
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

/// Reads one HTTP/1.1 request and answers it, closing the connection.
async fn serve<S>(mut stream: S, paths: Arc<Mutex<Vec<String>>>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(end) = buffer.windows(4).position(|window| window == b"\r\n\r\n") {
            break end;
        }
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let path = head.split(' ').nth(1).unwrap_or_default().to_owned();
    let length: usize = head
        .lines()
        .filter_map(|line| line.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, value)| value.trim().parse().ok())
        .unwrap_or(0);
    while buffer.len() < head_end + 4 + length {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
        }
    }
    paths.lock().unwrap().push(path);
    let body = json!({
        "id": "chatcmpl-tls",
        "object": "chat.completion",
        "model": "test-model",
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": CONTENT},
            "finish_reason": "stop"
        }],
        "usage": {"prompt_tokens": 5, "completion_tokens": 4, "total_tokens": 9}
    })
    .to_string();
    let response = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// A config for `base_url` with the default retries (5) and a back-off that
/// would make any retry visible in the connection count.
fn config(base_url: String, ca_cert: Option<&Path>) -> HttpModelConfig {
    HttpModelConfig {
        api_key_env: "SWERVE_LLM_TEST_UNSET_KEY_VAR".into(),
        timeout_secs: 5.0,
        backoff_base_secs: 0.01,
        backoff_max_secs: 0.05,
        ca_cert: ca_cert.map(Path::to_path_buf),
        ..HttpModelConfig::new(base_url, "test-model")
    }
}

fn chat() -> ModelRequest {
    ModelRequest::chat(vec![Message::user("Hi")])
}

#[tokio::test]
async fn trusted_through_ca_cert_the_call_succeeds() {
    let certified = self_signed(&["localhost", "127.0.0.1"]);
    let dir = TempDir::new("trusted");
    let pem = dir.write("server.pem", certified.cert.pem());
    let server = TlsServer::start(&certified).await;
    let model = HttpModel::new(config(server.base_url(), Some(&pem))).unwrap();
    assert_eq!(model.url().scheme(), "https");

    let response = bounded(LIMIT, model.complete(&chat())).await.unwrap();
    assert_eq!(response.content, CONTENT);
    assert_eq!(response.attempts, 1);
    assert_eq!(response.usage.completion_tokens, 4);
    assert_eq!(server.paths(), ["/v1/chat/completions"]);
}

/// Calls `model` once, checks it failed with a connection error within 500 ms, and returns
/// the error's text.
async fn fails_at_once(model: &HttpModel) -> String {
    let started = Instant::now();
    let error = bounded(LIMIT, model.complete(&chat())).await.unwrap_err();
    let elapsed = started.elapsed();
    let text = error.to_string();
    assert!(matches!(error, ModelError::Connection { .. }), "{text}");
    assert!(elapsed < Duration::from_millis(500), "took {elapsed:?}");
    text
}

#[tokio::test]
async fn untrusted_certificate_fails_at_once_and_names_ca_cert() {
    let certified = self_signed(&["localhost", "127.0.0.1"]);
    let server = TlsServer::start(&certified).await;
    let model = HttpModel::new(config(server.base_url(), None)).unwrap();

    let text = fails_at_once(&model).await;
    assert!(text.contains("certificate"), "{text}");
    assert!(text.contains("not trusted"), "{text}");
    assert!(text.contains("`ca_cert`"), "{text}");
    assert_eq!(server.connections(), 1, "the failure was retried: {text}");
    assert!(server.paths().is_empty());
}

#[tokio::test]
async fn certificate_for_another_host_fails_at_once() {
    // Trusted through `ca_cert`, but issued for a name the URL does not use.
    let certified = self_signed(&["model.example"]);
    let dir = TempDir::new("other-host");
    let pem = dir.write("server.pem", certified.cert.pem());
    let server = TlsServer::start(&certified).await;
    let model = HttpModel::new(config(server.base_url(), Some(&pem))).unwrap();

    let text = fails_at_once(&model).await;
    assert!(text.contains("certificate"), "{text}");
    assert!(text.contains("another host name"), "{text}");
    assert!(text.contains("`ca_cert`"), "{text}");
    assert_eq!(server.connections(), 1, "the failure was retried: {text}");
}

#[tokio::test]
async fn plain_http_server_on_an_https_url_fails_at_once() {
    // Answers whatever arrives (here a ClientHello) with an HTTP 400, as
    // uvicorn or nginx do, then closes.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let connections = Arc::new(AtomicUsize::new(0));
    let count = connections.clone();
    let accept = tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            let mut chunk = [0u8; 4096];
            let _ = stream.read(&mut chunk).await;
            let _ = stream
                .write_all(
                    b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                )
                .await;
            let _ = stream.shutdown().await;
        }
    })
    .abort_handle();
    let model = HttpModel::new(config(format!("https://{addr}/v1"), None)).unwrap();

    let text = fails_at_once(&model).await;
    accept.abort();
    assert!(text.contains("TLS handshake"), "{text}");
    assert!(text.contains("http://"), "{text}");
    assert_eq!(connections.load(Ordering::SeqCst), 1, "retried: {text}");
}

#[test]
fn missing_or_non_pem_ca_cert_is_a_config_error_naming_the_path() {
    let dir = TempDir::new("bad-ca");
    let missing = dir.0.join("missing.pem");
    let not_pem = dir.write("not.pem", "this is not a certificate\n");
    let der = dir.write(
        "server.der",
        self_signed(&["localhost"]).cert.der().as_ref(),
    );
    for (path, needle) in [
        (&missing, "cannot be read"),
        (&not_pem, "holds no certificate"),
        (&der, "holds no certificate"),
    ] {
        let error =
            HttpModel::new(config("https://127.0.0.1:1/v1".into(), Some(path))).unwrap_err();
        let text = error.to_string();
        assert!(matches!(error, ModelError::Config { .. }), "{text}");
        assert!(text.contains(&path.display().to_string()), "{text}");
        assert!(text.contains(needle), "{text} lacks {needle}");
        assert!(text.contains("PEM"), "{text}");
    }
}
