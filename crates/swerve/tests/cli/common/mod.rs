//! Shared by the swerve binary's end-to-end tests, over [`swerve_testing`]: paths, running
//! the swerve binary ([`swerve`], the arguments of a `swerve run` built by [`RunArgs`]), and
//! the shared loopback model server ([`swerve_testing::ModelServer`]) set up to answer each
//! session (`X-Session-ID`, the rollout id) with that task's demonstration, call by call, in
//! plain XML or in SWE-AGILE's reasoning structure ([`Replies`]). Which call comes next
//! follows from the request itself (the assistant turns it holds), so a rollout started over
//! after a crash is answered from its first call again.

#![allow(dead_code)]

pub mod edit;
pub mod embeddings;

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Value, json};
use swerve_testing::server::Requests;
use swerve_testing::{ModelServer, Reply};
use swerve_tools::formats::{ModelOutput, Pick, ToolFormat, XmlFormat};

pub use swerve_testing::server::completion;
pub use swerve_testing::{Request, failed, json_lines, sh, sh_exact, stderr, stdout, succeeded};

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn examples() -> PathBuf {
    root().join("examples/tasks/tasks.jsonl")
}

/// Runs the swerve binary from the repository root with a private cache directory.
pub fn swerve(cache: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_swerve"))
        .args(args)
        .env("SWERVE_CACHE_DIR", cache)
        .env_remove("RUST_LOG")
        .current_dir(root())
        .output()
        .unwrap()
}

/// Runs the swerve binary as [`swerve`] does, but with Rust's toolchain out of sight: every
/// directory of `PATH` holding a `cargo` left out, and no `CARGO_HOME` or `RUSTUP_HOME`, so
/// sandboxes (which expose the toolchains `PATH` names) have no `cargo`.
pub fn swerve_without_cargo(cache: &Path, args: &[&str]) -> Output {
    let path = std::env::var("PATH").unwrap_or_default();
    let path: Vec<&str> = path
        .split(':')
        .filter(|dir| !Path::new(dir).join("cargo").exists())
        .collect();
    Command::new(env!("CARGO_BIN_EXE_swerve"))
        .args(args)
        .env("SWERVE_CACHE_DIR", cache)
        .env("PATH", path.join(":"))
        .env_remove("CARGO_HOME")
        .env_remove("RUSTUP_HOME")
        .env_remove("RUST_LOG")
        .current_dir(root())
        .output()
        .unwrap()
}

/// The arguments of a `swerve run` over the bundled tasks, built option by option (in the
/// order given): `RunArgs::new(&out).served("demo-model", &url).set("k=v").args(["--eval"])`.
#[derive(Clone, Debug)]
pub struct RunArgs(Vec<String>);

impl RunArgs {
    /// `run --tasks <the bundled tasks> --out OUT`.
    pub fn new(out: &Path) -> Self {
        Self(Vec::new()).args([
            "run",
            "--tasks",
            examples().to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
    }

    /// `--model NAME`.
    pub fn model(self, name: &str) -> Self {
        self.args(["--model", name])
    }

    /// `--model NAME --base-url URL`: a served model.
    pub fn served(self, name: &str, url: &str) -> Self {
        self.model(name).args(["--base-url", url])
    }

    /// `--set SETTING` (`KEY=VALUE`).
    pub fn set(self, setting: &str) -> Self {
        self.args(["--set", setting])
    }

    /// More arguments as they are: options, their values, instance ids.
    pub fn args<S: AsRef<str>>(mut self, args: impl IntoIterator<Item = S>) -> Self {
        self.0
            .extend(args.into_iter().map(|arg| arg.as_ref().to_owned()));
        self
    }

    /// The arguments.
    pub fn strs(&self) -> Vec<&str> {
        self.0.iter().map(String::as_str).collect()
    }

    /// Runs swerve with these arguments and the cache directory `cache`.
    pub fn run(&self, cache: &Path) -> Output {
        swerve(cache, &self.strs())
    }
}

/// How the server misbehaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Behaviour {
    /// Answer every request.
    Good,
    /// Answer the first request of each session with HTTP 500, then normally.
    FirstFails,
    /// Answer every request with HTTP 400 (not retried).
    BadRequest,
    /// Accept requests and never answer.
    Silent,
}

/// How the server writes each demonstration call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Replies {
    /// A short thought, then the XML call.
    Plain,
    /// `<think>…</think><reasoning_digest>…</reasoning_digest>` then the XML call (SWE-AGILE).
    /// Turn `k` reasons `reasoning of turn k: …` and digests `digest of turn k: …`.
    Agile,
    /// Like `Plain`, but the call exactly as the XML format writes a parsed call back (the
    /// text the agent keeps in its history), so that each request extends the previous
    /// request and reply token for token, as verl's agent loop needs.
    Canonical,
}

/// A running demonstration server; it stops when dropped.
pub struct DemoServer {
    /// Its base URL (`http://127.0.0.1:PORT/v1`).
    pub url: String,
    /// Every request received, in arrival order.
    pub received: Requests,
    _server: ModelServer,
}

impl DemoServer {
    /// How many requests it received so far.
    pub fn requests(&self) -> usize {
        self.received.lock().unwrap().len()
    }
}

/// Starts a server answering with the bundled demonstrations, after `delay` per answer.
pub fn start(behaviour: Behaviour, delay: Duration) -> DemoServer {
    start_with(behaviour, delay, Replies::Plain)
}

/// Like [`start`], writing the calls as `replies` says.
pub fn start_with(behaviour: Behaviour, delay: Duration, replies: Replies) -> DemoServer {
    let sessions: Mutex<HashSet<String>> = Mutex::default();
    let server = ModelServer::answering(move |request| {
        let first_request = sessions
            .lock()
            .unwrap()
            .insert(request.session().to_owned());
        if behaviour == Behaviour::Silent {
            return Reply::Hang;
        }
        std::thread::sleep(delay);
        match behaviour {
            Behaviour::BadRequest => Reply::Json(
                400,
                json!({"error": {"message": "bad request for testing"}}),
            ),
            Behaviour::FirstFails if first_request => {
                Reply::Json(500, json!({"error": {"message": "try again"}}))
            }
            _ => {
                let prompt_mode = request.is_completion();
                let turn = assistant_turns(&request.body, prompt_mode);
                let text = demo_turn(request.session(), turn, replies);
                Reply::Json(
                    200,
                    with_tokens(completion(&text, prompt_mode), &request.body, &text),
                )
            }
        }
    });
    DemoServer {
        url: server.url(),
        received: server.requests_handle(),
        _server: server,
    }
}

/// The assistant turns a request holds: its assistant messages, or in a prompt rendered with
/// a ChatML template (Qwen's), the assistant headers before the generation prompt's.
pub fn assistant_turns(request: &Value, prompt_mode: bool) -> usize {
    if prompt_mode {
        let prompt = request["prompt"].as_str().unwrap_or("");
        return prompt
            .matches("<|im_start|>assistant")
            .count()
            .saturating_sub(1);
    }
    request["messages"].as_array().map_or(0, |messages| {
        messages
            .iter()
            .filter(|message| message["role"] == "assistant")
            .count()
    })
}

/// The task of a session (a rollout id, `<instance_id>__<sample>`).
pub fn session_task(session: &str) -> &str {
    session.rsplit_once("__").map_or(session, |(id, _)| id)
}

/// The calls of the bundled demonstration of `instance_id`.
pub fn demo_calls(instance_id: &str) -> Vec<swerve_core::ToolCall> {
    let path = root().join(format!("examples/demos/{instance_id}.json"));
    let demo: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    serde_json::from_value(demo["calls"].clone()).unwrap()
}

/// The `index`-th call of the demonstration of the session's task, rendered as XML.
pub fn demo_turn(session: &str, index: usize, replies: Replies) -> String {
    let calls = demo_calls(session_task(session));
    match (calls.get(index), replies) {
        (Some(call), Replies::Plain) => {
            XmlFormat::new(Pick::First)
                .render_call("I will look at this next.", call, None)
                .content
        }
        (Some(call), Replies::Agile) => format!(
            "<think>\nreasoning of turn {index}: the next call is {}.\n</think>\n<reasoning_digest>\ndigest of turn {index}: calling {}.\n</reasoning_digest>\n{}",
            call.name,
            call.name,
            XmlFormat::new(Pick::First)
                .render_call("", call, None)
                .content
        ),
        (Some(call), Replies::Canonical) => {
            let format = XmlFormat::new(Pick::First);
            let written = format.render_call("I will look at this next.", call, None);
            let parsed = format
                .parse(&ModelOutput::from_text(written.content))
                .unwrap();
            format
                .render_call(&parsed.thought, &parsed.call, None)
                .content
        }
        (None, _) => "I have nothing more to do.".into(),
    }
}

/// `body` (a completion of `text`) with what vLLM adds when `request` asks for
/// `return_token_ids`: `prompt_token_ids`, `choices[0].token_ids` and a logprob per answer
/// token (`logprobs.content` for chat, `logprobs.token_logprobs` for completions); `body`
/// unchanged otherwise. The tokenizer is bytes ([`byte_ids`]): a chat request's messages are
/// rendered `<role>\n<content>\n` each, then `assistant\n`, so that, as with a chat
/// template, each request's ids extend the previous request's and answer's.
pub fn with_tokens(mut body: Value, request: &Value, text: &str) -> Value {
    if request["return_token_ids"] != true {
        return body;
    }
    let prompt = match request["prompt"].as_str() {
        Some(prompt) => prompt.to_owned(),
        None => {
            let mut rendered = String::new();
            for message in request["messages"].as_array().into_iter().flatten() {
                let content = match &message["content"] {
                    serde_json::Value::String(text) => text.clone(),
                    other => other.to_string(),
                };
                rendered.push_str(&format!(
                    "{}\n{content}\n",
                    message["role"].as_str().unwrap_or("")
                ));
            }
            rendered + "assistant\n"
        }
    };
    let ids = byte_ids(text);
    let logprobs: Vec<f64> = (0..ids.len()).map(|i| -((i % 5) as f64) / 8.0).collect();
    body["prompt_token_ids"] = serde_json::json!(byte_ids(&prompt));
    let choice = &mut body["choices"][0];
    choice["token_ids"] = serde_json::json!(ids);
    choice["logprobs"] = if request["prompt"].is_string() {
        serde_json::json!({ "token_logprobs": logprobs })
    } else {
        let content: Vec<serde_json::Value> = logprobs
            .iter()
            .map(|logprob| serde_json::json!({"token": "?", "logprob": logprob}))
            .collect();
        serde_json::json!({ "content": content })
    };
    body
}

/// The loopback server's token ids of `text`: its bytes.
pub fn byte_ids(text: &str) -> Vec<u32> {
    text.bytes().map(u32::from).collect()
}

/// A loopback chat-completions server answering each request with `answer(request)`; its
/// URL (with `/v1`) and the requests received so far. It stops with the test process.
pub fn start_answering(
    answer: impl Fn(&Request) -> String + Send + Sync + 'static,
) -> (String, Requests) {
    ModelServer::answering_text(answer).detach()
}

/// Like [`start_answering`], with `answer` giving the whole response body (e.g. a
/// [`completion`] with vLLM's token ids and logprobs added).
pub fn start_answering_json(
    answer: impl Fn(&Request) -> Value + Send + Sync + 'static,
) -> (String, Requests) {
    ModelServer::answering(move |request| Reply::Json(200, answer(request))).detach()
}

/// Like [`start_answering`], answering the requests with `replies` in turn, in the order
/// they arrive, starting over after the last.
pub fn start_cycling(replies: Vec<String>) -> (String, Requests) {
    let next = std::sync::atomic::AtomicUsize::new(0);
    start_answering(move |_| {
        let turn = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        replies[turn % replies.len()].clone()
    })
}

/// The bearer token of the services [`Serve::start`] starts.
pub const SERVE_TOKEN: &str = "test-token-3f9a";

/// A `swerve serve` child process on a free loopback port, over the bundled tasks, with a
/// private cache; stopped with SIGTERM (then killed) when dropped.
pub struct Serve {
    pub child: std::process::Child,
    /// `127.0.0.1:PORT`.
    pub address: String,
    /// What the service printed on stderr, read on [`Serve::stop`].
    stderr: Option<std::process::ChildStderr>,
}

impl Serve {
    /// Starts the service with `cache`, trajectories in `out`, and `--set` overrides `sets`.
    pub fn start(cache: &Path, out: &Path, sets: &[&str]) -> Serve {
        let mut command = Command::new(env!("CARGO_BIN_EXE_swerve"));
        command
            .args(["serve", "--listen", "127.0.0.1:0", "--tasks"])
            .arg(examples())
            .arg("--out")
            .arg(out);
        for set in sets {
            command.args(["--set", set]);
        }
        let mut child = command
            .env("SWERVE_CACHE_DIR", cache)
            .env("SWERVE_SERVE_TOKEN", SERVE_TOKEN)
            .env_remove("RUST_LOG")
            .current_dir(root())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        let address = line
            .trim()
            .strip_prefix("swerve serve: listening on http://")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_owned();
        let stderr = child.stderr.take();
        Serve {
            child,
            address,
            stderr,
        }
    }

    /// Sends one request with the service's token; see [`http`].
    pub fn call(&self, method: &str, path: &str, body: Option<&serde_json::Value>) -> Answer {
        http(&self.address, method, path, Some(SERVE_TOKEN), body)
    }

    /// Like [`Serve::call`] with a raw body.
    pub fn call_raw(&self, method: &str, path: &str, body: &[u8]) -> Answer {
        http_raw(&self.address, method, path, Some(SERVE_TOKEN), body)
    }

    /// SIGTERM, then waits for the exit; returns the exit status and stderr.
    pub fn stop(&mut self) -> (std::process::ExitStatus, String) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let status = self.child.wait().unwrap();
        let mut stderr = String::new();
        if let Some(mut pipe) = self.stderr.take() {
            let _ = pipe.read_to_string(&mut stderr);
        }
        (status, stderr)
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// An HTTP answer: status code, headers (names in lower case) and JSON body (`Null` when
/// the body is not JSON).
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: serde_json::Value,
}

impl Answer {
    /// The `error.message` of an error answer (empty when there is none).
    pub fn error_message(&self) -> &str {
        self.body["error"]["message"].as_str().unwrap_or("")
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

/// The bytes of an HTTP/1.1 request, with `Authorization: Bearer <token>` when given.
pub fn http_request_bytes(
    address: &str,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: &[u8],
) -> Vec<u8> {
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(token) = token {
        head.push_str(&format!("Authorization: Bearer {token}\r\n"));
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

/// Sends one request to `address` over a new connection and reads the whole answer.
pub fn http(
    address: &str,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&serde_json::Value>,
) -> Answer {
    let body = body.map(|body| body.to_string()).unwrap_or_default();
    http_raw(address, method, path, token, body.as_bytes())
}

/// Like [`http`] with a raw body.
pub fn http_raw(
    address: &str,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: &[u8],
) -> Answer {
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .write_all(&http_request_bytes(address, method, path, token, body))
        .unwrap();
    read_answer(stream)
}

/// Reads an HTTP/1.1 answer (with `Content-Length`, or to the end of the stream).
pub fn read_answer(stream: TcpStream) -> Answer {
    let mut reader = BufReader::new(stream);
    let mut status_line = String::new();
    reader.read_line(&mut status_line).unwrap();
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {status_line:?}"));
    let mut headers = Vec::new();
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap() == 0 || line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            let (name, value) = (name.trim().to_ascii_lowercase(), value.trim().to_owned());
            if name == "content-length" {
                length = value.parse::<usize>().ok();
            }
            headers.push((name, value));
        }
    }
    let mut body = Vec::new();
    match length {
        Some(length) => {
            body.resize(length, 0);
            reader.read_exact(&mut body).unwrap();
        }
        None => {
            reader.read_to_end(&mut body).unwrap();
        }
    }
    Answer {
        status,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null),
    }
}

/// The entries of a directory (none when it does not exist).
pub fn entries(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|entries| entries.flatten().map(|entry| entry.path()).collect())
        .unwrap_or_default()
}

/// Every descendant process of `pid`.
pub fn descendants(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    let mut queue = vec![pid];
    while let Some(parent) = queue.pop() {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{parent}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let children =
                std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            for child in children.split_whitespace().filter_map(|c| c.parse().ok()) {
                found.push(child);
                queue.push(child);
            }
        }
    }
    found
}

/// Waits up to `limit` for `condition`; whether it came true.
pub fn eventually(limit: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let started = std::time::Instant::now();
    while started.elapsed() < limit {
        if condition() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    condition()
}

/// A running `swerve view`; killed when dropped.
pub struct View {
    child: std::process::Child,
    /// `http://127.0.0.1:PORT/`, with the token query when one was printed.
    pub url: String,
    /// `127.0.0.1:PORT` (or the address given to `--listen`).
    pub address: String,
}

impl View {
    /// `swerve view PATHS… EXTRA…`, once it printed its address.
    pub fn start(paths: &[&Path], extra: &[&str]) -> View {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_swerve"))
            .arg("view")
            .args(paths)
            .args(extra)
            .env_remove("RUST_LOG")
            .env_remove("SWERVE_VIEW_TOKEN")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("swerve view: listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_owned();
        let address = url
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap()
            .to_owned();
        View {
            child,
            url,
            address,
        }
    }

    /// The page at `route` (`#/run/0`, …), on the loopback address.
    pub fn at(&self, route: &str) -> String {
        format!("{}{route}", self.url)
    }
}

impl Drop for View {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
