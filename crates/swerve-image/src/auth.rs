//! Registry credentials (the configuration; Docker's `config.json` with its `credHelpers`,
//! `credsStore` and `auths`) and the `WWW-Authenticate` challenges of the distribution
//! spec's token flow.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use base64::Engine;

use crate::ImagesConfig;

/// A user name and password (or identity token) for one registry.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    /// The user name (`<token>` for an identity token).
    pub username: String,
    /// The password or token. Never logged: `Debug` hides it.
    pub password: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Credentials({}, <redacted>)", self.username)
    }
}

impl Credentials {
    /// `Basic …` header value.
    pub fn basic_header(&self) -> String {
        let raw = format!("{}:{}", self.username, self.password);
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(raw)
        )
    }

    fn from_pair(pair: &str) -> Option<Self> {
        let (username, password) = pair.split_once(':')?;
        Some(Self {
            username: username.to_owned(),
            password: password.to_owned(),
        })
    }
}

/// Credentials for `registry`, looked for as Docker looks for them: the configuration's
/// `auth`, else the Docker config's credential helper for the registry (`credHelpers`), its
/// default helper (`credsStore`), then its `auths` entry (by host, `https://host`, or
/// Docker Hub's legacy key). Helpers are the `docker-credential-<name>` programs on `PATH`.
pub fn credentials_for(config: &ImagesConfig, registry: &str) -> Option<Credentials> {
    credentials_in(
        config,
        registry,
        &std::env::var_os("PATH").unwrap_or_default(),
    )
}

/// [`credentials_for`] with helpers looked for in `search_path`.
fn credentials_in(
    config: &ImagesConfig,
    registry: &str,
    search_path: &OsStr,
) -> Option<Credentials> {
    if let Some(pair) = config.auth.get(registry) {
        return Credentials::from_pair(pair);
    }
    let path = docker_config_path(config)?;
    let text = std::fs::read_to_string(&path).ok()?;
    let parsed: DockerConfig = match serde_json::from_str(&text) {
        Ok(parsed) => parsed,
        Err(error) => {
            tracing::warn!("{}: not a Docker config ({error}); ignored", path.display());
            return None;
        }
    };
    let mut keys = vec![
        registry.to_owned(),
        format!("https://{registry}"),
        format!("http://{registry}"),
    ];
    // What Docker stores and hands its helpers for a registry: Docker Hub's legacy URL.
    let server = if registry == crate::reference::DOCKER_HUB {
        keys.push(DOCKER_HUB_SERVER.into());
        keys.push("index.docker.io".into());
        DOCKER_HUB_SERVER
    } else {
        registry
    };
    let helpers = keys
        .iter()
        .find_map(|key| parsed.cred_helpers.get(key))
        .map(|name| (name, "credHelpers"))
        .into_iter()
        .chain(parsed.creds_store.iter().map(|name| (name, "credsStore")));
    for (name, key) in helpers {
        let Some(program) = find_helper(name, search_path) else {
            tracing::warn!(
                "{}: {key} names the credential helper \"{name}\", but docker-credential-{name} \
                 is not on PATH; install it or remove {key} from the file",
                path.display()
            );
            continue;
        };
        match helper_credentials(&program, server, HELPER_TIMEOUT) {
            Ok(Some(credentials)) => return Some(credentials),
            Ok(None) => {}
            Err(error) => tracing::warn!(
                "{}: credential helper {} for {server}: {error}",
                path.display(),
                program.display()
            ),
        }
    }
    let entry = keys.iter().find_map(|key| parsed.auths.get(key))?;
    if let Some(auth) = &entry.auth {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(auth.trim())
            .ok()?;
        return Credentials::from_pair(&String::from_utf8(decoded).ok()?);
    }
    match (&entry.username, &entry.password, &entry.identitytoken) {
        (Some(username), Some(password), _) => Some(Credentials {
            username: username.clone(),
            password: password.clone(),
        }),
        (_, _, Some(token)) => Some(Credentials {
            username: IDENTITY_TOKEN_USER.into(),
            password: token.clone(),
        }),
        _ => None,
    }
}

/// The server name Docker uses for Docker Hub in its config and with its helpers.
const DOCKER_HUB_SERVER: &str = "https://index.docker.io/v1/";

/// The user name that marks an identity token instead of a password.
const IDENTITY_TOKEN_USER: &str = "<token>";

/// How long a credential helper may take (some ask a keyring that may prompt).
const HELPER_TIMEOUT: Duration = Duration::from_secs(30);

/// `docker-credential-<name>` in a directory of `search_path` (a `PATH` value). A name
/// holding a path separator is refused.
pub fn find_helper(name: &str, search_path: &OsStr) -> Option<PathBuf> {
    if name.is_empty() || name.contains('/') {
        return None;
    }
    std::env::split_paths(search_path)
        .map(|dir| dir.join(format!("docker-credential-{name}")))
        .find(|candidate| {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::metadata(candidate)
                .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        })
}

/// Asks the credential helper `program` for `server`'s credentials (the docker-credential
/// protocol: `get`, the server on standard input, `{"Username", "Secret"}` on standard
/// output). `Ok(None)` when the helper has none for it; an error when it fails otherwise or
/// takes longer than `timeout` (it is killed). Its output is never logged: it holds secrets.
pub fn helper_credentials(
    program: &Path,
    server: &str,
    timeout: Duration,
) -> Result<Option<Credentials>, String> {
    let mut child = Command::new(program)
        .arg("get")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| format!("cannot start it: {error}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        // A helper that exits without reading is judged by its exit status below.
        let _ = stdin.write_all(server.as_bytes());
    }
    let pid = child.id();
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(child.wait_with_output());
    });
    let output = match receiver.recv_timeout(timeout) {
        Ok(output) => output.map_err(|error| format!("cannot read its answer: {error}"))?,
        Err(_) => {
            if let Ok(pid) = i32::try_from(pid) {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            return Err(format!("no answer within {} s; killed", timeout.as_secs()));
        }
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        // The protocol's "not found" answer is a message on standard output.
        if stdout.contains("credentials not found") {
            return Ok(None);
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(format!(
            "it failed ({}): {}",
            output.status,
            stderr.trim().chars().take(200).collect::<String>()
        ));
    }
    #[derive(serde::Deserialize)]
    struct Answer {
        #[serde(rename = "Username")]
        username: String,
        #[serde(rename = "Secret")]
        secret: String,
    }
    let answer: Answer = serde_json::from_str(stdout.trim())
        .map_err(|_| "its answer is not {\"Username\", \"Secret\"} JSON".to_owned())?;
    if answer.secret.is_empty() {
        return Ok(None);
    }
    Ok(Some(Credentials {
        username: answer.username,
        password: answer.secret,
    }))
}

fn docker_config_path(config: &ImagesConfig) -> Option<PathBuf> {
    if let Some(path) = &config.docker_config {
        return Some(path.clone());
    }
    if let Some(dir) = std::env::var_os("DOCKER_CONFIG") {
        return Some(PathBuf::from(dir).join("config.json"));
    }
    dirs::home_dir().map(|home| home.join(".docker/config.json"))
}

#[derive(serde::Deserialize, Default)]
struct DockerConfig {
    #[serde(default)]
    auths: BTreeMap<String, DockerAuth>,
    /// The credential helper for every registry without its own.
    #[serde(default, rename = "credsStore")]
    creds_store: Option<String>,
    /// A credential helper per registry.
    #[serde(default, rename = "credHelpers")]
    cred_helpers: BTreeMap<String, String>,
}

#[derive(serde::Deserialize)]
struct DockerAuth {
    auth: Option<String>,
    username: Option<String>,
    password: Option<String>,
    identitytoken: Option<String>,
}

/// A parsed `WWW-Authenticate` challenge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Challenge {
    /// HTTP Basic: send the credentials with each request.
    Basic,
    /// A token service: fetch a bearer token from `realm` and send it instead.
    Bearer {
        /// The token service's URL.
        realm: String,
        /// The `service` parameter to pass it, if the registry named one.
        service: Option<String>,
        /// The `scope` parameter to pass it (e.g. `repository:library/python:pull`).
        scope: Option<String>,
    },
}

/// Parses `Bearer realm="…",service="…",scope="…"` or `Basic realm="…"`.
pub fn parse_challenge(header: &str) -> Option<Challenge> {
    let header = header.trim();
    let (scheme, rest) = header.split_once(' ').unwrap_or((header, ""));
    if scheme.eq_ignore_ascii_case("basic") {
        return Some(Challenge::Basic);
    }
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let mut params = BTreeMap::new();
    let mut rest = rest.trim();
    while !rest.is_empty() {
        let (key, after) = rest.split_once('=')?;
        let key = key.trim().to_ascii_lowercase();
        let after = after.trim_start();
        let (value, tail) = if let Some(quoted) = after.strip_prefix('"') {
            let end = quoted.find('"')?;
            (&quoted[..end], &quoted[end + 1..])
        } else {
            let end = after.find(',').unwrap_or(after.len());
            (&after[..end], &after[end..])
        };
        params.insert(key, value.to_owned());
        rest = tail.trim_start().trim_start_matches(',').trim_start();
    }
    Some(Challenge::Bearer {
        realm: params.remove("realm")?,
        service: params.remove("service"),
        scope: params.remove("scope"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_are_parsed() {
        assert_eq!(
            parse_challenge(
                r#"Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/ubuntu:pull""#
            ),
            Some(Challenge::Bearer {
                realm: "https://auth.docker.io/token".into(),
                service: Some("registry.docker.io".into()),
                scope: Some("repository:library/ubuntu:pull".into()),
            })
        );
        assert_eq!(
            parse_challenge(r#"Basic realm="Registry Realm""#),
            Some(Challenge::Basic)
        );
    }

    #[test]
    fn docker_config_credentials_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        std::fs::write(
            &path,
            r#"{"auths":{"127.0.0.1:5000":{"auth":"YWxpY2U6c2VjcmV0"},"https://ghcr.io":{"username":"bob","password":"pw"}}}"#,
        )
        .unwrap();
        let config = ImagesConfig {
            docker_config: Some(path),
            ..ImagesConfig::default()
        };
        let alice = credentials_for(&config, "127.0.0.1:5000").unwrap();
        assert_eq!(
            (alice.username.as_str(), alice.password.as_str()),
            ("alice", "secret")
        );
        assert_eq!(credentials_for(&config, "ghcr.io").unwrap().username, "bob");
        assert!(credentials_for(&config, "quay.io").is_none());
        assert!(!format!("{alice:?}").contains("secret"));
    }

    /// Writes an executable `docker-credential-<name>` into `dir` running `body` (sh).
    fn helper(dir: &Path, name: &str, body: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt as _;
        let path = dir.join(format!("docker-credential-{name}"));
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn credential_helpers_answer_by_the_protocol() {
        let dir = tempfile::tempdir().unwrap();
        // Answers only for the server it is asked about on standard input.
        let good = helper(
            dir.path(),
            "good",
            r#"[ "$1" = get ] || exit 2; read server; [ "$server" = 127.0.0.1:5000 ] || { echo "credentials not found in native keychain"; exit 1; }; echo '{"ServerURL":"127.0.0.1:5000","Username":"carol","Secret":"s3cr3t"}'"#,
        );
        let wait = Duration::from_secs(10);
        let carol = helper_credentials(&good, "127.0.0.1:5000", wait)
            .unwrap()
            .unwrap();
        assert_eq!(
            (carol.username.as_str(), carol.password.as_str()),
            ("carol", "s3cr3t")
        );
        assert_eq!(helper_credentials(&good, "quay.io", wait).unwrap(), None);

        let broken = helper(dir.path(), "broken", "echo 'keyring locked' >&2; exit 3");
        let error = helper_credentials(&broken, "quay.io", wait).unwrap_err();
        assert!(error.contains("keyring locked"), "{error}");
        let garbled = helper(dir.path(), "garbled", "echo 'Username: x'");
        assert!(
            helper_credentials(&garbled, "quay.io", wait)
                .unwrap_err()
                .contains("JSON")
        );
        let slow = helper(dir.path(), "slow", "exec sleep 30");
        let started = std::time::Instant::now();
        let error = helper_credentials(&slow, "quay.io", Duration::from_millis(300)).unwrap_err();
        assert!(error.contains("killed"), "{error}");
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn helpers_are_found_on_the_search_path_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = helper(dir.path(), "pass", "exit 0");
        let search = std::env::join_paths(["/nonexistent", dir.path().to_str().unwrap()]).unwrap();
        assert_eq!(find_helper("pass", &search), Some(path));
        assert_eq!(find_helper("desktop", &search), None);
        assert_eq!(find_helper("../pass", &search), None);
        assert_eq!(find_helper("", &search), None);
    }

    #[test]
    fn docker_config_helpers_come_before_auths() {
        let dir = tempfile::tempdir().unwrap();
        helper(
            dir.path(),
            "ecr",
            r#"read server; echo "{\"Username\":\"AWS\",\"Secret\":\"for-$server\"}""#,
        );
        helper(
            dir.path(),
            "store",
            r#"read server; [ "$server" = https://index.docker.io/v1/ ] || { echo "credentials not found in native keychain"; exit 1; }; echo '{"Username":"hubuser","Secret":"hubpw"}'"#,
        );
        let path = dir.path().join("config.json");
        std::fs::write(
            &path,
            r#"{"credsStore":"store","credHelpers":{"123.dkr.ecr.us-east-1.amazonaws.com":"ecr","ghcr.io":"missing"},"auths":{"ghcr.io":{"auth":"Ym9iOnB3"},"quay.io":{"auth":"ZGF2ZTpwdw=="}}}"#,
        )
        .unwrap();
        let config = ImagesConfig {
            docker_config: Some(path),
            ..ImagesConfig::default()
        };
        let search = dir.path().as_os_str();
        let ecr = credentials_in(&config, "123.dkr.ecr.us-east-1.amazonaws.com", search).unwrap();
        assert_eq!(ecr.password, "for-123.dkr.ecr.us-east-1.amazonaws.com");
        // Docker Hub: the store is asked with Hub's legacy server name.
        let hub = credentials_in(&config, crate::reference::DOCKER_HUB, search).unwrap();
        assert_eq!(hub.username, "hubuser");
        // A helper that is not installed, or has nothing: the auths entry.
        assert_eq!(
            credentials_in(&config, "ghcr.io", search).unwrap().username,
            "bob"
        );
        assert_eq!(
            credentials_in(&config, "quay.io", search).unwrap().username,
            "dave"
        );
        assert!(credentials_in(&config, "example.org", search).is_none());
    }
}
