//! Registry credentials (Docker's `config.json`, the configuration) and the
//! `WWW-Authenticate` challenges of the distribution spec's token flow.

use std::collections::BTreeMap;
use std::path::PathBuf;

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

/// Credentials for `registry`: the configuration's `auth`, else the Docker config's `auths`
/// entry (by host, `https://host`, or Docker Hub's legacy key).
pub fn credentials_for(config: &ImagesConfig, registry: &str) -> Option<Credentials> {
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
    if registry == crate::reference::DOCKER_HUB {
        keys.push("https://index.docker.io/v1/".into());
        keys.push("index.docker.io".into());
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
            username: "<token>".into(),
            password: token.clone(),
        }),
        _ => None,
    }
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
}
