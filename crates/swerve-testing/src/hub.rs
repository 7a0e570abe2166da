//! A loopback Hugging Face hub: a directory of dataset repositories (`ROOT/ORG/NAME/…`)
//! served through the hub's file API as `huggingface_hub` (`hf_api.py`, `file_download.py`)
//! calls it, on the [`ModelServer`]'s HTTP machinery:
//!
//! - `GET /api/datasets/ORG/NAME/revision/REV` (`REV` = `main` or the repository's commit):
//!   `{"id", "sha", "siblings": [{"rfilename"}]}`;
//! - `GET /datasets/ORG/NAME/resolve/REV/PATH`: a `302` to the content server with
//!   `X-Repo-Commit`, `X-Linked-Etag` (the file's SHA-256, quoted) and `X-Linked-Size`, as
//!   the hub answers for files kept in large-file storage;
//! - `GET /cdn/ORG/NAME/PATH` on `localhost` (another origin than `127.0.0.1`, as a
//!   content server is another host): the bytes. A request that carries an
//!   `Authorization` header there gets a `400`: the token must not leave the hub;
//! - `GET /api/datasets/ORG/NAME/parquet/SUBSET/SPLIT`: the URLs of the split's files in
//!   the hub's Parquet conversion, kept in the fixture as `ORG/NAME/.convert/SUBSET/SPLIT/
//!   NNNN.parquet`, each URL redirecting to the `refs/convert/parquet` revision's file.
//!
//! Unknown repositories, revisions and files get a `404` with the hub's `X-Error-Code`. A
//! server given a token answers `401` to API and resolve requests without
//! `Authorization: Bearer TOKEN`, as the hub does for a gated dataset.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde_json::json;
use sha2::{Digest, Sha256};

use crate::server::{ModelServer, Reply, Request};

/// A running loopback hub; dropping it stops it.
pub struct HubServer {
    server: ModelServer,
}

impl HubServer {
    /// Serves the repositories under `root`, requiring `token` when given.
    pub fn serve(root: &Path, token: Option<&str>) -> Self {
        let root = root.to_path_buf();
        let token = token.map(str::to_owned);
        let port = Arc::new(OnceLock::new());
        let answer_port = port.clone();
        let server = ModelServer::answering(move |request| {
            let port = *answer_port.get().expect("the port is set before requests");
            answer(&root, token.as_deref(), port, request)
        });
        port.set(server.addr.port()).expect("set once");
        Self { server }
    }

    /// The endpoint to give as `HF_ENDPOINT` (`http://127.0.0.1:PORT`).
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.server.addr)
    }

    /// The requests received so far.
    pub fn requests(&self) -> Vec<Request> {
        self.server.requests()
    }

    /// The commit every revision of `repo` (`ORG/NAME`) resolves to: a fixed 40-hex id
    /// derived from its name (the conversion's from `repo` and the conversion's revision).
    pub fn commit_of(repo: &str) -> String {
        hex(&Sha256::digest(repo.as_bytes()))[..40].to_owned()
    }
}

const CONVERSION: &str = "refs/convert/parquet";

fn answer(root: &Path, token: Option<&str>, port: u16, request: &Request) -> Reply {
    let path = request.path.split('?').next().unwrap_or("");
    let parts: Vec<String> = path.split('/').skip(1).map(decode).collect();
    let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
    let authorized = token.is_none_or(|token| {
        request.header("authorization") == Some(format!("Bearer {token}").as_str())
    });
    match parts.as_slice() {
        ["cdn", org, name, file @ ..] => {
            if request.header("authorization").is_some() {
                return error(400, "TokenLeak", "the token was sent to the content server");
            }
            match std::fs::read(file_path(root, org, name, file)) {
                Ok(body) => Reply::Bytes {
                    status: 200,
                    headers: vec![],
                    body,
                },
                Err(_) => error(404, "EntryNotFound", "no such file"),
            }
        }
        _ if !authorized => error(401, "", "Invalid credentials in Authorization header"),
        ["api", "datasets", org, name, "revision", revision] => {
            let repo = format!("{org}/{name}");
            let dir = root.join(org).join(name);
            if !dir.is_dir() {
                return error(404, "RepoNotFound", "Repository not found");
            }
            let commit = HubServer::commit_of(&repo);
            if *revision != "main" && *revision != commit {
                return error(404, "RevisionNotFound", "Invalid rev id");
            }
            let mut files = Vec::new();
            list(&dir, "", &mut files);
            files.sort();
            let siblings: Vec<_> = files.iter().map(|f| json!({"rfilename": f})).collect();
            Reply::Json(
                200,
                json!({"id": repo, "sha": commit, "siblings": siblings}),
            )
        }
        ["api", "datasets", org, name, "parquet", subset, split] => {
            let dir = root
                .join(org)
                .join(name)
                .join(".convert")
                .join(subset)
                .join(split);
            let mut files = Vec::new();
            list(&dir, "", &mut files);
            if files.is_empty() {
                return error(404, "", "no conversion for this subset and split");
            }
            let urls: Vec<String> = (0..files.len())
                .map(|n| {
                    format!("http://127.0.0.1:{port}/api/datasets/{org}/{name}/parquet/{subset}/{split}/{n}.parquet")
                })
                .collect();
            Reply::Json(200, json!(urls))
        }
        ["api", "datasets", org, name, "parquet", subset, split, file] => {
            let number: usize = file
                .trim_end_matches(".parquet")
                .parse()
                .unwrap_or(usize::MAX);
            redirect(
                format!(
                    "/datasets/{org}/{name}/resolve/refs%2Fconvert%2Fparquet/{subset}/{split}/{number:04}.parquet"
                ),
                vec![],
            )
        }
        ["datasets", org, name, "resolve", revision, file @ ..] => {
            let repo = format!("{org}/{name}");
            let (commit, path) = if *revision == CONVERSION {
                let mut path = vec![".convert"];
                path.extend_from_slice(file);
                (HubServer::commit_of(&format!("{repo}@{CONVERSION}")), path)
            } else {
                (HubServer::commit_of(&repo), file.to_vec())
            };
            if *revision != "main" && *revision != commit && *revision != CONVERSION {
                return error(404, "RevisionNotFound", "Invalid rev id");
            }
            let Ok(body) = std::fs::read(file_path(root, org, name, &path)) else {
                return error(404, "EntryNotFound", "Entry not found");
            };
            redirect(
                format!(
                    "http://localhost:{port}/cdn/{org}/{name}/{}",
                    path.join("/")
                ),
                vec![
                    ("X-Repo-Commit".into(), commit),
                    (
                        "X-Linked-Etag".into(),
                        format!("\"{}\"", hex(&Sha256::digest(&body))),
                    ),
                    ("X-Linked-Size".into(), body.len().to_string()),
                ],
            )
        }
        _ => error(404, "", "no such endpoint"),
    }
}

fn redirect(location: String, mut headers: Vec<(String, String)>) -> Reply {
    headers.push(("Location".into(), location));
    Reply::Bytes {
        status: 302,
        headers,
        body: Vec::new(),
    }
}

fn error(status: u16, code: &str, message: &str) -> Reply {
    let headers = match code {
        "" => vec![],
        code => vec![("X-Error-Code".into(), code.into())],
    };
    Reply::Bytes {
        status,
        headers,
        body: json!({"error": message}).to_string().into_bytes(),
    }
}

fn file_path(root: &Path, org: &str, name: &str, file: &[&str]) -> PathBuf {
    let mut path = root.join(org).join(name);
    for part in file {
        if *part == ".." {
            return root.join("..invalid");
        }
        path.push(part);
    }
    path
}

/// The files under `dir` as `/`-separated relative paths, leaving out `.convert`.
fn list(dir: &Path, prefix: &str, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == ".convert" {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            list(&path, &format!("{prefix}{name}/"), out);
        } else {
            out.push(format!("{prefix}{name}"));
        }
    }
}

/// Percent-decodes one path component.
fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let hex_byte = (bytes[at] == b'%')
            .then(|| text.get(at + 1..at + 3))
            .flatten()
            .and_then(|digits| u8::from_str_radix(digits, 16).ok());
        match hex_byte {
            Some(byte) => {
                out.push(byte);
                at += 3;
            }
            None => {
                out.push(bytes[at]);
                at += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}
