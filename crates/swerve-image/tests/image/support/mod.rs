//! Real components for the image tests: the images built by `scripts/test-images.sh`
//! (debootstrap + umoci, cached), a CNCF distribution registry (Debian's `docker-registry`)
//! on loopback, `skopeo` to push, and a counting TCP proxy in front of the registry.
//!
//! Without root or the tools the tests are skipped with a note, unless
//! `SWERVE_REQUIRE_IMAGES=1` (CI), where that is a failure.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// The OCI layout holding `base`, `swe` and `r2e`, or `None` (skip) where it cannot be built.
pub fn layout() -> Option<PathBuf> {
    static LAYOUT: OnceLock<Option<PathBuf>> = OnceLock::new();
    LAYOUT
        .get_or_init(|| {
            let required = std::env::var("SWERVE_REQUIRE_IMAGES").as_deref() == Ok("1");
            let missing: Vec<&str> = [
                "docker-registry",
                "skopeo",
                "umoci",
                "debootstrap",
                "htpasswd",
            ]
            .into_iter()
            .filter(|tool| !which(tool))
            .collect();
            let why = if !nix::unistd::Uid::effective().is_root() {
                Some("not root".to_owned())
            } else if !missing.is_empty() {
                Some(format!("missing {}", missing.join(", ")))
            } else {
                None
            };
            if let Some(why) = why {
                assert!(!required, "image tests required but {why}");
                eprintln!(
                    "skipping image tests: {why} (scripts/prerequisites.sh installs the tools)"
                );
                return None;
            }
            let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/test-images.sh");
            let output = Command::new("bash").arg(script).output().unwrap();
            assert!(
                output.status.success(),
                "scripts/test-images.sh failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
            Some(PathBuf::from(
                String::from_utf8_lossy(&output.stdout)
                    .trim()
                    .lines()
                    .last()
                    .unwrap(),
            ))
        })
        .clone()
}

fn which(tool: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {tool}"))
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn wait_for_port(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "nothing listens on port {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A `docker-registry` on loopback, killed when dropped.
pub struct Registry {
    pub port: u16,
    pub dir: tempfile::TempDir,
    child: Child,
    pub creds: Option<(String, String)>,
}

impl Registry {
    /// Starts a registry; with `creds`, it asks for them (htpasswd, basic auth).
    pub fn start(creds: Option<(&str, &str)>) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let mut config = format!(
            "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:{port}\n",
            dir.path().join("data").display()
        );
        if let Some((user, password)) = creds {
            let out = Command::new("htpasswd")
                .args(["-Bbn", user, password])
                .output()
                .unwrap();
            std::fs::write(dir.path().join("htpasswd"), out.stdout).unwrap();
            config.push_str(&format!(
                "auth:\n  htpasswd:\n    realm: swerve-test\n    path: {}\n",
                dir.path().join("htpasswd").display()
            ));
        }
        std::fs::write(dir.path().join("config.yml"), config).unwrap();
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(dir.path().join("config.yml"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_for_port(port);
        Self {
            port,
            dir,
            child,
            creds: creds.map(|(u, p)| (u.to_owned(), p.to_owned())),
        }
    }

    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Pushes `tag` of the layout as `repository:latest`.
    pub fn push(&self, layout: &Path, tag: &str, repository: &str) {
        let mut command = Command::new("skopeo");
        command.args(["copy", "--quiet", "--dest-tls-verify=false"]);
        if let Some((user, password)) = &self.creds {
            command.arg(format!("--dest-creds={user}:{password}"));
        }
        let output = command
            .arg(format!("oci:{}:{tag}", layout.display()))
            .arg(format!("docker://{}/{repository}:latest", self.host()))
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "skopeo copy failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A TCP proxy in front of a port, counting blob requests and range requests.
pub struct Proxy {
    pub port: u16,
    pub blob_gets: Arc<AtomicUsize>,
    pub range_gets: Arc<AtomicUsize>,
}

impl Proxy {
    pub fn start(upstream: u16) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let blob_gets = Arc::new(AtomicUsize::new(0));
        let range_gets = Arc::new(AtomicUsize::new(0));
        let (blobs, ranges) = (blob_gets.clone(), range_gets.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
                    continue;
                };
                let (blobs, ranges) = (blobs.clone(), ranges.clone());
                let (mut client_read, mut server_write) =
                    (client.try_clone().unwrap(), server.try_clone().unwrap());
                std::thread::spawn(move || {
                    let mut buffer = [0u8; 65536];
                    while let Ok(n) = client_read.read(&mut buffer) {
                        if n == 0 {
                            break;
                        }
                        let text = String::from_utf8_lossy(&buffer[..n]).to_ascii_lowercase();
                        for line in text.lines() {
                            if line.starts_with("get /v2/") && line.contains("/blobs/sha256:") {
                                blobs.fetch_add(1, Ordering::SeqCst);
                            }
                            if line.starts_with("range: bytes=") {
                                ranges.fetch_add(1, Ordering::SeqCst);
                            }
                        }
                        if server_write.write_all(&buffer[..n]).is_err() {
                            break;
                        }
                    }
                    let _ = server_write.shutdown(std::net::Shutdown::Write);
                });
                let (mut server_read, mut client_write) = (server, client);
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut server_read, &mut client_write);
                    let _ = client_write.shutdown(std::net::Shutdown::Write);
                });
            }
        });
        Self {
            port,
            blob_gets,
            range_gets,
        }
    }

    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

/// A registry stand-in serving fixed responses by path (for bad input a real registry
/// refuses to store): `(path, status, content type, body, declared length)`.
pub struct FakeRegistry {
    pub port: u16,
}

pub struct Response {
    pub status: u16,
    pub content_type: String,
    pub body: Vec<u8>,
    /// Content-Length sent (more than the body: the connection drops early).
    pub length: usize,
}

impl FakeRegistry {
    pub fn start(routes: Vec<(String, Response)>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let routes = Arc::new(routes);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let routes = routes.clone();
                std::thread::spawn(move || {
                    let mut request = Vec::new();
                    let mut buffer = [0u8; 4096];
                    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                        match stream.read(&mut buffer) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => request.extend_from_slice(&buffer[..n]),
                        }
                    }
                    let text = String::from_utf8_lossy(&request);
                    let path = text.split_whitespace().nth(1).unwrap_or("").to_owned();
                    let found = routes.iter().find(|(route, _)| *route == path);
                    let head = match found {
                        Some((_, response)) => format!(
                            "HTTP/1.1 {} X\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                            response.status, response.content_type, response.length
                        ),
                        None => "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}".to_owned(),
                    };
                    let _ = stream.write_all(head.as_bytes());
                    if let Some((_, response)) = found {
                        let _ = stream.write_all(&response.body);
                    }
                });
            }
        });
        Self { port }
    }

    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

/// A stored image's record path name for blob checks.
pub fn sha256_hex(bytes: &[u8]) -> String {
    swerve_image::blob::digest_of(bytes)
        .trim_start_matches("sha256:")
        .to_owned()
}

/// A registry front that asks for a bearer token (the distribution spec's token flow, as
/// Docker Hub, GHCR and Harbor do): unauthenticated requests get `401` with a `Bearer`
/// challenge naming its `/token` endpoint, which hands out a token for `user:password` (basic
/// auth); requests with the token are passed to the registry behind it.
pub struct TokenGateway {
    pub port: u16,
    pub tokens_issued: Arc<AtomicUsize>,
}

impl TokenGateway {
    pub fn start(upstream: u16, user: &str, password: &str) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let expected = swerve_image::auth::Credentials {
            username: user.to_owned(),
            password: password.to_owned(),
        }
        .basic_header();
        let tokens_issued = Arc::new(AtomicUsize::new(0));
        let issued = tokens_issued.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let (expected, issued) = (expected.clone(), issued.clone());
                std::thread::spawn(move || {
                    let mut request = Vec::new();
                    let mut buffer = [0u8; 4096];
                    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                        match stream.read(&mut buffer) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => request.extend_from_slice(&buffer[..n]),
                        }
                    }
                    let text = String::from_utf8_lossy(&request).into_owned();
                    let mut lines = text.split("\r\n");
                    let request_line = lines.next().unwrap_or("").to_owned();
                    let headers: Vec<String> = lines
                        .filter(|line| !line.is_empty())
                        .map(str::to_owned)
                        .collect();
                    let authorization = headers
                        .iter()
                        .find_map(|h| {
                            let (name, value) = h.split_once(':')?;
                            name.eq_ignore_ascii_case("authorization")
                                .then(|| value.trim().to_owned())
                        })
                        .unwrap_or_default();
                    let path = request_line.split_whitespace().nth(1).unwrap_or("");
                    let reply = |stream: &mut TcpStream, status: &str, extra: &str, body: &str| {
                        let _ = stream.write_all(
                            format!(
                                "HTTP/1.1 {status}\r\n{extra}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                                body.len()
                            )
                            .as_bytes(),
                        );
                    };
                    if path.starts_with("/token") {
                        if authorization == expected {
                            issued.fetch_add(1, Ordering::SeqCst);
                            reply(&mut stream, "200 OK", "", r#"{"token":"t0k3n"}"#);
                        } else {
                            reply(&mut stream, "401 Unauthorized", "", r#"{"errors":[]}"#);
                        }
                        return;
                    }
                    if authorization != "Bearer t0k3n" {
                        let challenge = format!(
                            "WWW-Authenticate: Bearer realm=\"http://127.0.0.1:{port}/token\",service=\"swerve-test\",scope=\"repository:swerve/r2e:pull\"\r\n"
                        );
                        reply(
                            &mut stream,
                            "401 Unauthorized",
                            &challenge,
                            r#"{"errors":[{"code":"UNAUTHORIZED"}]}"#,
                        );
                        return;
                    }
                    let Ok(mut upstream) = TcpStream::connect(("127.0.0.1", upstream)) else {
                        return;
                    };
                    let mut head = format!("{request_line}\r\n");
                    for header in &headers {
                        let name = header.split(':').next().unwrap_or("").to_ascii_lowercase();
                        if name != "authorization" && name != "connection" {
                            head.push_str(header);
                            head.push_str("\r\n");
                        }
                    }
                    head.push_str("Connection: close\r\n\r\n");
                    let _ = upstream.write_all(head.as_bytes());
                    let _ = std::io::copy(&mut upstream, &mut stream);
                });
            }
        });
        Self {
            port,
            tokens_issued,
        }
    }

    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}
