//! The hub's HTTP API, as `huggingface_hub` and the hub's Parquet conversion use it:
//!
//! - `GET {endpoint}/api/datasets/ORG/NAME/revision/REVISION`: `{"sha": COMMIT, "siblings":
//!   [{"rfilename": PATH}, …]}`, the revision's commit and files;
//! - `GET {endpoint}/datasets/ORG/NAME/resolve/COMMIT/PATH`: the file, usually through a
//!   redirect to a content server; the first answer carries `X-Linked-Etag` (large files)
//!   or `ETag`, the name of the blob in the cache, and `X-Repo-Commit`;
//! - `GET {endpoint}/api/datasets/ORG/NAME/parquet/SUBSET/SPLIT`: the URLs of the split's
//!   files in the hub's Parquet conversion (revision `refs/convert/parquet`).
//!
//! Redirects are followed here, hop by hop (at most [`MAX_REDIRECTS`]): the token goes
//! only to the endpoint's own scheme, host and port, never to a content server. A file is
//! streamed to `blobs/ETAG.incomplete` and renamed when whole, so the cache never holds
//! half a file under its final name.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{self, HeaderMap};
use reqwest::{Client, StatusCode, Url};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::cache::{self, PARQUET_CONVERSION, cache_error};
use super::files::{self, Wanted};
use super::{HubDataset, HubSettings, repo_dir};
use crate::DatasetError;

/// Redirects followed for one file before giving up.
pub const MAX_REDIRECTS: usize = 10;

/// Downloads the data files of `wanted` into the cache and returns their paths there.
pub fn download(
    dataset: &HubDataset,
    wanted: &Wanted,
    settings: &HubSettings,
) -> Result<Vec<PathBuf>, DatasetError> {
    // A runtime of its own on a thread of its own: callers may already be inside one.
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|error| network(dataset, "starting the HTTP client", &error))?;
                runtime.block_on(Hub::new(dataset, settings)?.download(wanted))
            })
            .join()
            .unwrap_or_else(|_| {
                Err(network(
                    dataset,
                    "downloading",
                    &"the download thread panicked",
                ))
            })
    })
}

struct Hub<'a> {
    dataset: &'a HubDataset,
    settings: &'a HubSettings,
    endpoint: Url,
    client: Client,
}

impl<'a> Hub<'a> {
    fn new(dataset: &'a HubDataset, settings: &'a HubSettings) -> Result<Self, DatasetError> {
        let endpoint = Url::parse(&format!("{}/", settings.endpoint)).map_err(|error| {
            network(
                dataset,
                &format!("HF_ENDPOINT {:?}", settings.endpoint),
                &error,
            )
        })?;
        let client = Client::builder()
            .tls_backend_preconfigured(tls_config())
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(30))
            .read_timeout(Duration::from_secs(120))
            .user_agent(concat!("swerve/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|error| network(dataset, "building the HTTP client", &error))?;
        Ok(Self {
            dataset,
            settings,
            endpoint,
            client,
        })
    }

    async fn download(&self, wanted: &Wanted<'_>) -> Result<Vec<PathBuf>, DatasetError> {
        let repo = repo_dir(&self.settings.cache, &self.dataset.repo);
        let revision = self.dataset.revision();
        let info = self.revision_info(revision).await?;
        let commit = info
            .get("sha")
            .and_then(Value::as_str)
            .filter(|sha| !sha.is_empty() && sha.bytes().all(|b| b.is_ascii_alphanumeric()))
            .ok_or_else(|| self.malformed("the revision's file list", "no commit \"sha\""))?
            .to_owned();
        let siblings: Vec<&str> = info
            .get("siblings")
            .and_then(Value::as_array)
            .map(|siblings| {
                siblings
                    .iter()
                    .filter_map(|sibling| sibling.get("rfilename")?.as_str())
                    .collect()
            })
            .unwrap_or_default();
        let selected = files::select(siblings.iter().copied(), wanted);
        if selected.is_empty() {
            if self.dataset.revision.is_none() {
                return self.download_conversion(&repo, wanted, &siblings).await;
            }
            return Err(no_data_files(self.dataset, wanted, &siblings));
        }
        let mut paths = Vec::new();
        for path in &selected {
            let url = self.url(&format!(
                "datasets/{}/resolve/{commit}/{}",
                self.dataset.repo,
                encode_path(path)
            ))?;
            let fetched = self.fetch_file(url, &repo, path).await?;
            paths.push(cache::store(
                &repo,
                &commit,
                path,
                &fetched.etag,
                &fetched.partial,
            )?);
        }
        cache::set_ref(&repo, revision, &commit)?;
        Ok(paths)
    }

    /// The split from the hub's Parquet conversion, for a dataset without data files of
    /// its own for it.
    async fn download_conversion(
        &self,
        repo: &std::path::Path,
        wanted: &Wanted<'_>,
        siblings: &[&str],
    ) -> Result<Vec<PathBuf>, DatasetError> {
        let subset = wanted.subset.unwrap_or("default");
        let what = "the Parquet conversion's file list";
        let url = self.url(&format!(
            "api/datasets/{}/parquet/{}/{}",
            self.dataset.repo,
            encode_path(subset),
            encode_path(wanted.split)
        ))?;
        let response = self.get(url, true, what).await?;
        if response.status() == StatusCode::NOT_FOUND {
            return Err(no_data_files(self.dataset, wanted, siblings));
        }
        let urls: Vec<String> = serde_json::from_slice(&self.body(response, what).await?)
            .map_err(|_| self.malformed(what, "not a list of URLs"))?;
        let mut paths = Vec::new();
        let mut commit = None;
        for (index, url) in urls.iter().enumerate() {
            let url = self
                .endpoint
                .join(url)
                .map_err(|error| network(self.dataset, &format!("{what}: URL {url:?}"), &error))?;
            let path = format!("{subset}/{}/{index:04}.parquet", wanted.split);
            let fetched = self.fetch_file(url, repo, &path).await?;
            let at = fetched
                .commit
                .or_else(|| commit.clone())
                .ok_or_else(|| self.malformed(what, "a file came without X-Repo-Commit"))?;
            paths.push(cache::store(
                repo,
                &at,
                &path,
                &fetched.etag,
                &fetched.partial,
            )?);
            commit = Some(at);
        }
        match commit {
            Some(commit) => cache::set_ref(repo, PARQUET_CONVERSION, &commit)?,
            None => return Err(no_data_files(self.dataset, wanted, siblings)),
        }
        Ok(paths)
    }

    async fn revision_info(&self, revision: &str) -> Result<Value, DatasetError> {
        let what = "the revision's file list";
        let url = self.url(&format!(
            "api/datasets/{}/revision/{}",
            self.dataset.repo,
            encode_component(revision)
        ))?;
        let response = self.get(url, false, what).await?;
        serde_json::from_slice(&self.body(response, what).await?)
            .map_err(|_| self.malformed(what, "not JSON"))
    }

    /// Downloads one file (following redirects) into a partial blob of `repo`.
    async fn fetch_file(
        &self,
        mut url: Url,
        repo: &std::path::Path,
        path: &str,
    ) -> Result<Fetched, DatasetError> {
        let what = format!("file {path}");
        let (mut etag, mut commit) = (None, None);
        for _ in 0..=MAX_REDIRECTS {
            let mut response = self.get(url.clone(), false, &what).await?;
            let headers = response.headers();
            etag = etag.or_else(|| etag_of(headers));
            commit = commit.or_else(|| header_text(headers, "x-repo-commit"));
            if response.status().is_redirection() {
                let location = header_text(headers, header::LOCATION.as_str())
                    .ok_or_else(|| self.malformed(&what, "a redirect without Location"))?;
                url = url.join(&location).map_err(|error| {
                    network(
                        self.dataset,
                        &format!("{what}: redirect {location:?}"),
                        &error,
                    )
                })?;
                continue;
            }
            // Named after the content when the hub gave no ETag.
            let name = etag
                .clone()
                .unwrap_or_else(|| format!("download-{}", std::process::id()));
            let partial = cache::partial_blob(repo, &name)?;
            let mut out =
                std::fs::File::create(&partial).map_err(|error| cache_error(&partial, &error))?;
            let mut hasher = Sha256::new();
            loop {
                let chunk = response
                    .chunk()
                    .await
                    .map_err(|error| network(self.dataset, &what, &error))?;
                let Some(chunk) = chunk else { break };
                hasher.update(&chunk);
                out.write_all(&chunk)
                    .map_err(|error| cache_error(&partial, &error))?;
            }
            out.sync_all()
                .map_err(|error| cache_error(&partial, &error))?;
            let etag = etag.unwrap_or_else(|| format!("{:x}", hasher.finalize()));
            return Ok(Fetched {
                etag,
                commit,
                partial,
            });
        }
        Err(self.malformed(&what, "more than 10 redirects"))
    }

    /// A GET of `url`, with the token when `url` is on the endpoint's origin. A success or
    /// a redirect is returned (and a 404 when `allow_missing`); other statuses are errors.
    async fn get(
        &self,
        url: Url,
        allow_missing: bool,
        what: &str,
    ) -> Result<reqwest::Response, DatasetError> {
        let same_origin = url.origin() == self.endpoint.origin();
        let mut request = self.client.get(url);
        if let (true, Some(token)) = (same_origin, &self.settings.token) {
            request = request.bearer_auth(token);
        }
        let response = request
            .send()
            .await
            .map_err(|error| network(self.dataset, what, &without_url(error)))?;
        let status = response.status();
        if status.is_success()
            || status.is_redirection()
            || (allow_missing && status == StatusCode::NOT_FOUND)
        {
            return Ok(response);
        }
        let hint = match status.as_u16() {
            401 | 403 if self.settings.token.is_none() => {
                "; the dataset is gated or private: accept its terms on the hub and set HF_TOKEN"
            }
            401 | 403 => {
                "; HF_TOKEN does not give access to it: check the token and the dataset's terms"
            }
            404 => "; check the dataset's name and revision",
            429 => "; rate limited: wait, or set HF_TOKEN",
            _ => "",
        };
        Err(DatasetError::Hub {
            dataset: self.dataset.to_string(),
            what: what.to_owned(),
            status: status.as_u16(),
            hint,
        })
    }

    async fn body(&self, response: reqwest::Response, what: &str) -> Result<Vec<u8>, DatasetError> {
        response
            .bytes()
            .await
            .map(|bytes| bytes.to_vec())
            .map_err(|error| network(self.dataset, what, &without_url(error)))
    }

    fn url(&self, path: &str) -> Result<Url, DatasetError> {
        self.endpoint
            .join(path)
            .map_err(|error| network(self.dataset, &format!("URL {path:?}"), &error))
    }

    fn malformed(&self, what: &str, problem: &str) -> DatasetError {
        DatasetError::Network {
            dataset: self.dataset.to_string(),
            what: what.to_owned(),
            message: format!("the hub's answer is not what its API returns: {problem}"),
        }
    }
}

struct Fetched {
    etag: String,
    commit: Option<String>,
    partial: PathBuf,
}

/// The blob name a response gives: `X-Linked-Etag`, else `ETag`, without quotes or `W/`.
fn etag_of(headers: &HeaderMap) -> Option<String> {
    let raw = header_text(headers, "x-linked-etag").or_else(|| header_text(headers, "etag"))?;
    let etag = raw.trim_start_matches("W/").trim_matches('"');
    let safe = !etag.is_empty()
        && etag
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    safe.then(|| etag.to_owned())
}

fn header_text(headers: &HeaderMap, name: &str) -> Option<String> {
    headers.get(name)?.to_str().ok().map(str::to_owned)
}

fn no_data_files(dataset: &HubDataset, wanted: &Wanted, siblings: &[&str]) -> DatasetError {
    let data: Vec<&str> = siblings
        .iter()
        .copied()
        .filter(|path| files::is_data_file(path))
        .collect();
    DatasetError::NoDataFiles {
        dataset: dataset.to_string(),
        wanted: wanted.to_string(),
        available: if data.is_empty() {
            "no data files (.parquet, .jsonl, .json)".to_owned()
        } else {
            data.join(", ")
        },
    }
}

/// Percent-encodes a path, keeping its `/`.
fn encode_path(path: &str) -> String {
    path.split('/')
        .map(encode_component)
        .collect::<Vec<_>>()
        .join("/")
}

/// Percent-encodes one path component (`refs/convert/parquet` becomes one component).
fn encode_component(text: &str) -> String {
    text.bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (byte as char).to_string()
            }
            _ => format!("%{byte:02X}"),
        })
        .collect()
}

fn without_url(error: reqwest::Error) -> reqwest::Error {
    error.without_url()
}

fn network(dataset: &HubDataset, what: &str, error: &dyn std::fmt::Display) -> DatasetError {
    DatasetError::Network {
        dataset: dataset.to_string(),
        what: what.to_owned(),
        message: error.to_string(),
    }
}

/// rustls with the ring provider and the system's roots.
fn tls_config() -> rustls::ClientConfig {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .expect("ring supports the default protocol versions");
    let builder =
        match rustls_platform_verifier::Verifier::new_with_extra_roots(Vec::new(), provider) {
            Ok(verifier) => builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(verifier)),
            Err(error) => {
                tracing::debug!(%error, "no root certificates to check the hub against");
                builder.with_root_certificates(rustls::RootCertStore::empty())
            }
        };
    let mut config = builder.with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    config
}
