//! A real headless browser for tests and benches: Debian's `chromium`, started with a fresh
//! profile and driven over the Chrome DevTools Protocol (a WebSocket per page).
//!
//! [`Browser::start`] returns `None` when no `chromium` is installed, so tests skip, unless
//! `SWERVE_REQUIRE_BROWSER=1` (set by `scripts/test.sh`), when a missing browser fails the
//! test. `SWERVE_CHROMIUM` names another executable. The browser is started with the flags
//! that keep it off the network (the test machines refuse outside connections) and is
//! killed when the [`Browser`] is dropped.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{Value, json};
use tungstenite::WebSocket;
use tungstenite::stream::MaybeTlsStream;

/// A running headless Chromium with its own profile directory.
pub struct Browser {
    child: Child,
    port: u16,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts Chromium, or returns `None` (and says so on stderr) when it is not installed
    /// and `SWERVE_REQUIRE_BROWSER` is not `1`.
    pub fn start() -> Option<Browser> {
        let executable = std::env::var_os("SWERVE_CHROMIUM")
            .map(PathBuf::from)
            .or_else(|| find_on_path("chromium"));
        let Some(executable) = executable else {
            assert!(
                std::env::var("SWERVE_REQUIRE_BROWSER").as_deref() != Ok("1"),
                "SWERVE_REQUIRE_BROWSER=1 but no chromium on PATH (scripts/prerequisites.sh \
                 installs it)"
            );
            eprintln!("skipped: no chromium on PATH");
            return None;
        };
        let profile = tempfile::tempdir().unwrap();
        let mut child = Command::new(&executable)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-dev-shm-usage",
                "--hide-scrollbars",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start {}: {error}", executable.display()));
        let stderr = child.stderr.take().unwrap();
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut sender = Some(sender);
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.split("DevTools listening on ws://127.0.0.1:").nth(1)
                    && let Some(sender) = sender.take()
                {
                    let port: String = rest.chars().take_while(char::is_ascii_digit).collect();
                    let _ = sender.send(port.parse::<u16>().unwrap());
                }
            }
        });
        let port = receiver
            .recv_timeout(Duration::from_secs(60))
            .expect("chromium did not print its DevTools address within 60 s");
        Some(Browser {
            child,
            port,
            _profile: profile,
        })
    }

    /// A new tab, blank, with a 1280×900 viewport.
    pub fn page(&self) -> Page {
        let target = http(self.port, "PUT", "/json/new?about:blank");
        let target: Value = serde_json::from_str(&target).expect("a DevTools target");
        let url = target["webSocketDebuggerUrl"].as_str().unwrap().to_owned();
        let (socket, _) = tungstenite::connect(url.as_str()).expect("the page's DevTools socket");
        let mut page = Page {
            socket,
            next_id: 0,
            events: Vec::new(),
        };
        page.call("Page.enable", json!({}));
        page.call("Runtime.enable", json!({}));
        page.call("Log.enable", json!({}));
        page.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": false}),
        );
        page
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One tab, driven over its DevTools socket.
pub struct Page {
    socket: WebSocket<MaybeTlsStream<TcpStream>>,
    next_id: u64,
    /// Every event received so far (`Runtime.exceptionThrown`, `Log.entryAdded`, …).
    pub events: Vec<Value>,
}

impl Page {
    /// Calls `method` and returns its result; panics on a protocol error.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let request = json!({"id": id, "method": method, "params": params});
        self.socket
            .send(tungstenite::Message::text(request.to_string()))
            .expect("sending to the browser");
        loop {
            let message = self.socket.read().expect("reading from the browser");
            let Ok(text) = message.to_text() else {
                continue;
            };
            let Ok(value) = serde_json::from_str::<Value>(text) else {
                continue;
            };
            if value["id"] == id {
                if let Some(error) = value.get("error") {
                    panic!("{method}: {error}");
                }
                return value["result"].clone();
            }
            if value.get("method").is_some() {
                self.events.push(value);
            }
        }
    }

    /// Loads `url` and returns once the browser says the document is loaded.
    pub fn navigate(&mut self, url: &str) {
        self.call("Page.navigate", json!({"url": url}));
        self.wait_for(
            "document.readyState === 'complete'",
            Duration::from_secs(30),
        );
    }

    /// The value of a JavaScript expression (promises awaited).
    pub fn eval(&mut self, expression: &str) -> Value {
        let result = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
        );
        if let Some(exception) = result.get("exceptionDetails") {
            panic!("{expression}: {exception}");
        }
        result["result"]["value"].clone()
    }

    /// Polls `expression` every 10 ms until it is truthy and returns its value; panics after
    /// `timeout`. An expression that throws (the document is still loading: no `body` yet)
    /// counts as not yet.
    pub fn wait_for(&mut self, expression: &str, timeout: Duration) -> Value {
        let started = Instant::now();
        loop {
            let result = self.call(
                "Runtime.evaluate",
                json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
            );
            let value = match result.get("exceptionDetails") {
                Some(_) => Value::Null,
                None => result["result"]["value"].clone(),
            };
            let truthy = !matches!(&value, Value::Null | Value::Bool(false))
                && value != json!(0)
                && value != json!("");
            if truthy {
                return value;
            }
            assert!(
                started.elapsed() < timeout,
                "waited {timeout:?} for `{expression}`; the page shows: {}",
                self.eval("document.body ? document.body.innerText.slice(0, 2000) : ''")
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Saves a PNG of what the viewport shows to `path`.
    pub fn screenshot(&mut self, path: &Path) {
        let result = self.call("Page.captureScreenshot", json!({"format": "png"}));
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(result["data"].as_str().unwrap())
            .unwrap();
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(path, bytes).unwrap();
    }

    /// Uncaught exceptions and console errors (Content-Security-Policy refusals among them)
    /// seen so far.
    pub fn errors(&self) -> Vec<Value> {
        self.events
            .iter()
            .filter(|event| {
                event["method"] == "Runtime.exceptionThrown"
                    || (event["method"] == "Log.entryAdded"
                        && event["params"]["entry"]["level"] == "error")
            })
            .cloned()
            .collect()
    }
}

/// One HTTP/1.1 request to the browser's DevTools endpoint (which ignores HTTP/1.0 and
/// keeps connections open); the body of its answer, read to its `Content-Length`.
fn http(port: u16, method: &str, path: &str) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut reader = BufReader::new(stream);
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap() == 0 || line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap();
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    String::from_utf8(body).unwrap()
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|path| path.is_file())
}
