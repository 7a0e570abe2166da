//! Shared by the end-to-end tests: paths, and a loopback OpenAI-compatible server that answers
//! each session (`X-Session-ID`, the rollout id) with that task's demonstration, call by call,
//! in plain XML or in SWE-AGILE's reasoning structure ([`Replies`]). Which call comes next
//! follows from the request itself (the assistant turns it holds), so a rollout started over
//! after a crash is answered from its first call again.

#![allow(dead_code)]

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use swerve_tools::formats::{Pick, ToolFormat, XmlFormat};

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

/// Runs a shell command on the host in `dir`, panicking on failure; returns its stdout.
pub fn sh(dir: &Path, command: &str) -> String {
    let output = Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{command}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
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
}

/// A running server; it stops with the test process.
pub struct DemoServer {
    pub url: String,
    pub requests: Arc<Mutex<usize>>,
    /// Every request received: its session, path and JSON body.
    pub received: Arc<Mutex<Vec<Received>>>,
}

/// One request as the server received it.
#[derive(Clone, Debug)]
pub struct Received {
    pub session: String,
    pub path: String,
    pub body: serde_json::Value,
}

/// Starts a server answering with the demonstrations in `demos`, after `delay` per answer.
pub fn start(behaviour: Behaviour, delay: Duration) -> DemoServer {
    start_with(behaviour, delay, Replies::Plain)
}

/// Like [`start`], writing the calls as `replies` says.
pub fn start_with(behaviour: Behaviour, delay: Duration, replies: Replies) -> DemoServer {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let requests = Arc::new(Mutex::new(0));
    let received: Arc<Mutex<Vec<Received>>> = Arc::default();
    let sessions: Arc<Mutex<HashSet<String>>> = Arc::default();
    let (counter, log) = (requests.clone(), received.clone());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (sessions, counter, log) = (sessions.clone(), counter.clone(), log.clone());
            std::thread::spawn(move || {
                serve(stream, behaviour, delay, replies, &sessions, &counter, &log)
            });
        }
    });
    DemoServer {
        url,
        requests,
        received,
    }
}

fn serve(
    stream: TcpStream,
    behaviour: Behaviour,
    delay: Duration,
    replies: Replies,
    sessions: &Mutex<HashSet<String>>,
    counter: &Mutex<usize>,
    log: &Mutex<Vec<Received>>,
) {
    let Some(received) = read_request(&stream) else {
        return;
    };
    let Received {
        session,
        path,
        body: request,
    } = received.clone();
    *counter.lock().unwrap() += 1;
    log.lock().unwrap().push(received);
    let prompt_mode = path.ends_with("/completions") && !path.ends_with("/chat/completions");
    let turn = assistant_turns(&request, prompt_mode);
    let first_request = sessions.lock().unwrap().insert(session.clone());
    if behaviour == Behaviour::Silent {
        std::thread::sleep(Duration::from_secs(3600));
        return;
    }
    std::thread::sleep(delay);
    let (status, body) = match behaviour {
        Behaviour::BadRequest => (
            "400 Bad Request",
            r#"{"error":{"message":"bad request for testing"}}"#.to_owned(),
        ),
        Behaviour::FirstFails if first_request => (
            "500 Internal Server Error",
            r#"{"error":{"message":"try again"}}"#.to_owned(),
        ),
        _ => {
            let text = demo_turn(&session, turn, replies);
            ("200 OK", completion(&text, prompt_mode))
        }
    };
    respond(stream, status, &body);
}

/// Reads one HTTP request: its `X-Session-ID`, path and JSON body (`None` when the
/// connection closes first).
pub fn read_request(stream: &TcpStream) -> Option<Received> {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let (mut length, mut session, mut path) = (0usize, String::new(), String::new());
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return None;
        }
        if path.is_empty() {
            path = line.split_whitespace().nth(1).unwrap_or("").to_owned();
        }
        let lower = line.to_ascii_lowercase();
        if let Some(value) = lower.strip_prefix("content-length:") {
            length = value.trim().parse().unwrap_or(0);
        }
        if lower.starts_with("x-session-id:") {
            session = line["x-session-id:".len()..].trim().to_owned();
        }
        if line == "\r\n" {
            break;
        }
    }
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    Some(Received {
        session,
        path,
        body: serde_json::from_slice(&body).unwrap_or_default(),
    })
}

/// Answers with `status` (e.g. `200 OK`) and a JSON `body`, then closes the connection.
pub fn respond(mut stream: TcpStream, status: &str, body: &str) {
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
}

/// The assistant turns a request holds: its assistant messages, or in a prompt rendered with
/// a ChatML template (Qwen's), the assistant headers before the generation prompt's.
fn assistant_turns(request: &serde_json::Value, prompt_mode: bool) -> usize {
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

/// The `index`-th call of the demonstration of the session's task, rendered as XML.
fn demo_turn(session: &str, index: usize, replies: Replies) -> String {
    let instance_id = session.rsplit_once("__").map_or(session, |(id, _)| id);
    let path = root().join(format!("examples/demos/{instance_id}.json"));
    let demo: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let calls: Vec<swerve_core::ToolCall> = serde_json::from_value(demo["calls"].clone()).unwrap();
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
        (None, _) => "I have nothing more to do.".into(),
    }
}

/// A chat completion holding `text`, or a raw completion in prompt mode.
pub fn completion(text: &str, prompt_mode: bool) -> String {
    let choice = if prompt_mode {
        serde_json::json!({"index": 0, "text": text, "finish_reason": "stop"})
    } else {
        serde_json::json!({"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"})
    };
    serde_json::json!({
        "id": "test", "object": "chat.completion", "model": "demo-model",
        "choices": [choice],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
    })
    .to_string()
}

/// A loopback chat-completions server answering each request with `answer(request)`; its
/// URL (with `/v1`) and the requests received so far. It stops with the test process.
pub fn start_answering(
    answer: impl Fn(&Received) -> String + Send + Sync + 'static,
) -> (String, Arc<Mutex<Vec<Received>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let received: Arc<Mutex<Vec<Received>>> = Arc::default();
    let (log, answer) = (received.clone(), Arc::new(answer));
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (log, answer) = (log.clone(), answer.clone());
            std::thread::spawn(move || {
                if let Some(request) = read_request(&stream) {
                    let text = answer(&request);
                    log.lock().unwrap().push(request);
                    respond(stream, "200 OK", &completion(&text, false));
                }
            });
        }
    });
    (url, received)
}

/// The JSON lines of a trajectory (or any JSON-lines file).
pub fn trajectory_lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}
