//! The loopback OpenAI-compatible model server every test and bench talks to.
//!
//! A [`ModelServer`] listens on `127.0.0.1`, speaks HTTP/1.1 with keep-alive and
//! `Content-Length` bodies, records every request ([`Request`]) and answers each with a
//! [`Reply`]: first the replies of its script, in order, then what its answer function
//! computes from the request (by default [`Reply::Ok`], a vLLM-shaped success). Replies can
//! be faults exact at the byte level (a `Content-Length` that lies, a body that stops
//! half-way, an answer that never comes), which is why it is written on plain sockets.
//!
//! It runs on threads of its own, so sync tests and async clients both use it. Dropping it
//! stops it (the listener and every open connection close); [`ModelServer::detach`] keeps
//! it answering until the test process ends.
//!
//! ```no_run
//! use swerve_testing::{ModelServer, Reply};
//! // A 503, then a success built from the request.
//! let server = ModelServer::scripted([Reply::Json(503, serde_json::json!({}))]);
//! let url = server.url(); // http://127.0.0.1:PORT/v1
//! # let _ = url;
//! ```

use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{Value, json};

/// What the server does with one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A vLLM-shaped success built from the request: a chat completion or a completion
    /// holding [`CONTENT`] (and [`REASONING`]), with token ids and logprobs when the request
    /// asked for `return_token_ids`.
    Ok,
    /// This status and JSON body.
    Json(u16, Value),
    /// This status, body and extra headers (e.g. `Retry-After`).
    Status {
        /// The HTTP status.
        status: u16,
        /// The body, as sent.
        body: String,
        /// Extra headers.
        headers: Vec<(String, String)>,
    },
    /// A 200 with exactly these body bytes (correct `Content-Length`).
    RawOk(Vec<u8>),
    /// This status, extra headers and body bytes (e.g. a redirect, or a binary file).
    Bytes {
        /// The HTTP status.
        status: u16,
        /// Extra headers.
        headers: Vec<(String, String)>,
        /// The body, as sent.
        body: Vec<u8>,
    },
    /// A 200 success whose `Content-Length` is smaller than the body; the connection is
    /// closed after writing everything.
    ShortContentLength,
    /// A 200 success that declares its full length, sends half and closes.
    CloseMidBody,
    /// A 200 success that declares its full length, sends half and then keeps the
    /// connection open without sending more.
    StallMidBody,
    /// Reads the request and never answers (until the server stops).
    Hang,
    /// Reads the request and closes the connection without answering.
    Close,
}

/// One request as the server received it.
#[derive(Debug, Clone)]
pub struct Request {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The request target, e.g. `/v1/chat/completions`.
    pub path: String,
    /// Header names lower-cased, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The JSON body (`Null` when there is none or it is not JSON).
    pub body: Value,
}

impl Request {
    /// The value of header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// The `X-Session-ID` swerve sends (a rollout id); empty when absent.
    pub fn session(&self) -> &str {
        self.header("x-session-id").unwrap_or("")
    }

    /// Whether this is a raw completion (`/completions`, prompt mode) rather than a chat
    /// completion.
    pub fn is_completion(&self) -> bool {
        self.path.ends_with("/completions") && !self.path.ends_with("/chat/completions")
    }
}

/// The requests a server received so far, shared with the server.
pub type Requests = Arc<Mutex<Vec<Request>>>;

type Answer = dyn Fn(&Request) -> Reply + Send + Sync;

struct State {
    script: Mutex<VecDeque<Reply>>,
    answer: Box<Answer>,
    requests: Requests,
    /// The open connections by number, to close them on [`ModelServer::stop`].
    connections: Mutex<HashMap<u64, TcpStream>>,
    next_connection: AtomicU64,
    stopped: AtomicBool,
}

/// A running server; see the [module](self) documentation.
pub struct ModelServer {
    /// The address it listens on (`127.0.0.1:PORT`).
    pub addr: SocketAddr,
    state: Arc<State>,
    accept: Mutex<Option<JoinHandle<()>>>,
}

impl ModelServer {
    /// A server answering `script` in order, then [`Reply::Ok`] to every request.
    pub fn scripted(script: impl IntoIterator<Item = Reply>) -> Self {
        Self::start(script, |_| Reply::Ok)
    }

    /// A server answering each request with `answer(request)`. The function runs on the
    /// connection's thread, so it may sleep to slow the server down.
    pub fn answering(answer: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> Self {
        Self::start([], answer)
    }

    /// A server answering each request with a chat completion (or, in prompt mode, a
    /// completion) holding the assistant text `answer(request)`, see [`completion`].
    pub fn answering_text(answer: impl Fn(&Request) -> String + Send + Sync + 'static) -> Self {
        Self::answering(move |request| {
            Reply::Json(200, completion(&answer(request), request.is_completion()))
        })
    }

    /// A server answering `script` in order, then `answer(request)`.
    pub fn start(
        script: impl IntoIterator<Item = Reply>,
        answer: impl Fn(&Request) -> Reply + Send + Sync + 'static,
    ) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(State {
            script: Mutex::new(script.into_iter().collect()),
            answer: Box::new(answer),
            requests: Requests::default(),
            connections: Mutex::default(),
            next_connection: AtomicU64::new(0),
            stopped: AtomicBool::new(false),
        });
        let accept_state = state.clone();
        let accept = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if accept_state.stopped.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(stream) = stream else { continue };
                let _ = stream.set_nodelay(true);
                let number = accept_state.next_connection.fetch_add(1, Ordering::SeqCst);
                if let Ok(clone) = stream.try_clone() {
                    accept_state
                        .connections
                        .lock()
                        .unwrap()
                        .insert(number, clone);
                }
                let state = accept_state.clone();
                std::thread::spawn(move || {
                    serve(&stream, &state);
                    state.connections.lock().unwrap().remove(&number);
                    let _ = stream.shutdown(std::net::Shutdown::Both);
                });
            }
        });
        Self {
            addr,
            state,
            accept: Mutex::new(Some(accept)),
        }
    }

    /// The base URL a client is configured with (`http://127.0.0.1:PORT/v1`).
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The requests received so far, in arrival order.
    pub fn requests(&self) -> Vec<Request> {
        self.state.requests.lock().unwrap().clone()
    }

    /// The live list of received requests (it grows as requests arrive).
    pub fn requests_handle(&self) -> Requests {
        self.state.requests.clone()
    }

    /// Stops answering: closes the listener and every open connection. Idempotent.
    pub fn stop(&self) {
        if self.state.stopped.swap(true, Ordering::SeqCst) {
            return;
        }
        // Wake the accept loop so that it sees the flag and drops the listener.
        let _ = TcpStream::connect(self.addr);
        let accept = self.accept.lock().unwrap().take();
        if let Some(accept) = accept {
            let _ = accept.join();
        }
        for (_, connection) in self.state.connections.lock().unwrap().drain() {
            let _ = connection.shutdown(std::net::Shutdown::Both);
        }
    }

    /// Keeps the server answering until the test process ends; its URL and live request list.
    pub fn detach(self) -> (String, Requests) {
        let url = self.url();
        let requests = self.requests_handle();
        drop(self.accept.lock().unwrap().take());
        std::mem::forget(self);
        (url, requests)
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Answers the requests of one connection until it closes or a reply ends it.
fn serve(stream: &TcpStream, state: &State) {
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
    let mut writer = stream;
    while let Some(request) = read_request(&mut reader) {
        if state.stopped.load(Ordering::SeqCst) {
            return;
        }
        state.requests.lock().unwrap().push(request.clone());
        let scripted = state.script.lock().unwrap().pop_front();
        let reply = scripted.unwrap_or_else(|| (state.answer)(&request));
        if !write_reply(&mut writer, &request, reply, state) {
            return;
        }
    }
}

/// Writes `reply`; whether the connection can be reused.
fn write_reply(stream: &mut &TcpStream, request: &Request, reply: Reply, state: &State) -> bool {
    let success = || success_body(request);
    match reply {
        Reply::Ok => write_response(stream, 200, &[], success().as_bytes()),
        Reply::Json(status, body) => {
            write_response(stream, status, &[], body.to_string().as_bytes())
        }
        Reply::Status {
            status,
            body,
            headers,
        } => write_response(stream, status, &headers, body.as_bytes()),
        Reply::RawOk(body) => write_response(stream, 200, &[], &body),
        Reply::Bytes {
            status,
            headers,
            body,
        } => write_response(stream, status, &headers, &body),
        Reply::ShortContentLength => {
            let success = success();
            let _ = stream.write_all(head(200, &[], success.len() / 2).as_bytes());
            let _ = stream.write_all(success.as_bytes());
            false
        }
        Reply::CloseMidBody | Reply::StallMidBody => {
            let success = success();
            let _ = stream.write_all(head(200, &[], success.len()).as_bytes());
            let _ = stream.write_all(&success.as_bytes()[..success.len() / 2]);
            let _ = stream.flush();
            if matches!(reply, Reply::StallMidBody) {
                wait_until_stopped(state);
            }
            false
        }
        Reply::Hang => {
            wait_until_stopped(state);
            false
        }
        Reply::Close => false,
    }
}

fn wait_until_stopped(state: &State) {
    while !state.stopped.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Reads one request; `None` at end of stream or on a request it cannot parse.
fn read_request(reader: &mut impl BufRead) -> Option<Request> {
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).ok()? == 0 {
        return None;
    }
    let mut parts = request_line.split_whitespace();
    let method = parts.next()?.to_owned();
    let path = parts.next()?.to_owned();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if line == "\r\n" || line == "\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
    }
    let length: usize = headers
        .iter()
        .find(|(name, _)| name == "content-length")
        .and_then(|(_, value)| value.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Request {
        method,
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    })
}

fn head(status: u16, headers: &[(String, String)], length: usize) -> String {
    let reason = match status {
        200 => "OK",
        302 => "Found",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "X",
    };
    let mut head = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {length}\r\n"
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    head
}

/// Writes a whole response; whether the connection can be reused.
fn write_response(
    stream: &mut &TcpStream,
    status: u16,
    headers: &[(String, String)],
    body: &[u8],
) -> bool {
    let mut response = head(status, headers, body.len()).into_bytes();
    response.extend_from_slice(body);
    stream.write_all(&response).is_ok()
}

/// The assistant text of [`Reply::Ok`].
pub const CONTENT: &str = "Hello from the test server.";
/// The `reasoning_content` of [`Reply::Ok`] (chat completions).
pub const REASONING: &str = "The user greeted me.";
/// The `prompt_token_ids` of [`Reply::Ok`] when token ids were asked for.
pub const PROMPT_IDS: [u32; 4] = [151644, 872, 198, 9707];
/// The completion `token_ids` of [`Reply::Ok`] when token ids were asked for.
pub const COMPLETION_IDS: [u32; 3] = [9707, 0, 151645];
/// The logprob of each of [`COMPLETION_IDS`].
pub const LOGPROBS: [f64; 3] = [-0.25, -1.5, 0.0];

/// A vLLM-shaped success for `request`.
fn success_body(request: &Request) -> String {
    let capture = request.body["return_token_ids"] == json!(true);
    let usage = json!({
        "prompt_tokens": 1200, "completion_tokens": 300, "total_tokens": 1500,
        "prompt_tokens_details": {"cached_tokens": 1000},
        "completion_tokens_details": {"reasoning_tokens": 100}
    });
    let model = request.body["model"].clone();
    if request.path.ends_with("/chat/completions") {
        let mut choice = json!({
            "index": 0,
            "message": {"role": "assistant", "content": CONTENT, "reasoning_content": REASONING,
                        "tool_calls": []},
            "logprobs": null,
            "finish_reason": "stop",
        });
        let mut body = json!({"id": "chatcmpl-1", "object": "chat.completion", "model": model,
                              "choices": [], "usage": usage});
        if capture {
            choice["token_ids"] = json!(COMPLETION_IDS);
            choice["logprobs"] = json!({"content": COMPLETION_IDS.iter().zip(LOGPROBS).map(|(id, lp)| {
                json!({"token": format!("token_id:{id}"), "logprob": lp, "bytes": [], "top_logprobs": []})
            }).collect::<Vec<_>>()});
            body["prompt_token_ids"] = json!(PROMPT_IDS);
        }
        body["choices"] = json!([choice]);
        body.to_string()
    } else {
        let mut choice =
            json!({"index": 0, "text": CONTENT, "logprobs": null, "finish_reason": "length"});
        if capture {
            choice["prompt_token_ids"] = json!(PROMPT_IDS);
            choice["token_ids"] = json!(COMPLETION_IDS);
            choice["logprobs"] = json!({"tokens": ["a", "b", "c"], "token_logprobs": LOGPROBS,
                                        "text_offset": [0, 1, 2], "top_logprobs": []});
        }
        json!({"id": "cmpl-1", "object": "text_completion", "model": model,
               "choices": [choice], "usage": usage})
        .to_string()
    }
}

/// A chat completion holding the assistant text `text` (a raw completion when
/// `prompt_mode`), with a usage of 100 prompt and 20 completion tokens.
pub fn completion(text: &str, prompt_mode: bool) -> Value {
    let choice = if prompt_mode {
        json!({"index": 0, "text": text, "finish_reason": "stop"})
    } else {
        json!({"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"})
    };
    json!({
        "id": "test", "object": "chat.completion", "model": "demo-model",
        "choices": [choice],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
    })
}
