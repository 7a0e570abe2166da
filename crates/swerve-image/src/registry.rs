//! An OCI distribution client: manifests and blobs over HTTPS (the system's roots plus a
//! configured CA) or plain HTTP (loopback and `insecure` registries), anonymous, basic or
//! bearer-token authentication (the distribution spec's token flow, with credentials from
//! the configuration or a Docker `config.json`), resumable blob downloads.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, RANGE, WWW_AUTHENTICATE};
use rustls::RootCertStore;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

use crate::auth::{self, Challenge, Credentials};
use crate::blob::{BlobDirs, Slot};
use crate::manifest::{ACCEPT as MANIFEST_ACCEPT, Descriptor};
use crate::reference::Reference;
use crate::{ImageError, ImagesConfig};

/// Reports bytes fetched: (what, bytes so far, total).
pub type Progress = Arc<dyn Fn(&str, u64, u64) + Send + Sync>;

/// A client for every registry the configuration names.
pub struct RegistryClient {
    secure: reqwest::Client,
    plain: reqwest::Client,
    config: ImagesConfig,
    /// Authorization header values per (registry, repository).
    tokens: Mutex<HashMap<(String, String), String>>,
}

impl RegistryClient {
    /// A client with `config`'s CA certificate, timeout and insecure registries. Fails on
    /// an unreadable or malformed `ca_cert`.
    pub fn new(config: &ImagesConfig) -> Result<Self, ImageError> {
        let tls = tls_config(config.ca_cert.as_deref())?;
        let timeout = Duration::from_secs(config.timeout_secs.max(1));
        let build = |builder: reqwest::ClientBuilder| {
            builder
                .connect_timeout(Duration::from_secs(30))
                .read_timeout(timeout)
                .user_agent(concat!("swerve/", env!("CARGO_PKG_VERSION")))
                .build()
                .map_err(|error| {
                    ImageError::Config(format!("cannot build an HTTP client: {error}"))
                })
        };
        Ok(Self {
            secure: build(reqwest::Client::builder().tls_backend_preconfigured(tls.clone()))?,
            // Plain HTTP; the TLS configuration only satisfies reqwest (a redirect to HTTPS,
            // say a blob store, is still checked).
            plain: build(reqwest::Client::builder().tls_backend_preconfigured(tls))?,
            config: config.clone(),
            tokens: Mutex::new(HashMap::new()),
        })
    }

    fn url(&self, reference: &Reference, tail: &str) -> String {
        let scheme = if self.config.is_plain_http(&reference.registry) {
            "http"
        } else {
            "https"
        };
        format!(
            "{scheme}://{}/v2/{}/{tail}",
            reference.api_host(),
            reference.repository
        )
    }

    fn client(&self, reference: &Reference) -> &reqwest::Client {
        if self.config.is_plain_http(&reference.registry) {
            &self.plain
        } else {
            &self.secure
        }
    }

    /// GET `tail` under the repository, authenticating as the registry asks.
    async fn get(
        &self,
        reference: &Reference,
        tail: &str,
        accept: Option<&str>,
        range_from: u64,
    ) -> Result<reqwest::Response, ImageError> {
        let key = (reference.registry.clone(), reference.repository.clone());
        let url = self.url(reference, tail);
        let send = |authorization: Option<String>| {
            let mut request = self.client(reference).get(&url);
            if let Some(accept) = accept {
                request = request.header(ACCEPT, accept);
            }
            if range_from > 0 {
                request = request.header(RANGE, format!("bytes={range_from}-"));
            }
            if let Some(value) = authorization {
                request = request.header(AUTHORIZATION, value);
            }
            request.send()
        };
        let cached = self.tokens.lock().unwrap().get(&key).cloned();
        let response = send(cached.clone())
            .await
            .map_err(|error| self.transport(reference, error))?;
        if response.status() != StatusCode::UNAUTHORIZED {
            return Ok(response);
        }
        let challenge = response
            .headers()
            .get(WWW_AUTHENTICATE)
            .and_then(|value| value.to_str().ok())
            .and_then(auth::parse_challenge);
        // A credential helper is a process that may take seconds: off the async workers.
        let credentials = {
            let (config, registry) = (self.config.clone(), reference.registry.clone());
            tokio::task::spawn_blocking(move || auth::credentials_for(&config, &registry))
                .await
                .unwrap_or_default()
        };
        let authorization =
            match challenge {
                Some(Challenge::Basic) => match &credentials {
                    Some(credentials) => credentials.basic_header(),
                    None => return Err(self.auth_failed(
                        reference,
                        "the registry asks for a user name and password, and none is configured",
                    )),
                },
                Some(Challenge::Bearer {
                    realm,
                    service,
                    scope,
                }) => {
                    let scope = scope
                        .unwrap_or_else(|| format!("repository:{}:pull", reference.repository));
                    let token = self
                        .token(
                            reference,
                            &realm,
                            service.as_deref(),
                            &scope,
                            credentials.as_ref(),
                        )
                        .await?;
                    format!("Bearer {token}")
                }
                None => {
                    return Err(
                        self.auth_failed(reference, "401 without a challenge swerve understands")
                    );
                }
            };
        if cached.as_deref() == Some(authorization.as_str()) {
            return Err(self.auth_failed(reference, "the credentials were refused"));
        }
        self.tokens
            .lock()
            .unwrap()
            .insert(key, authorization.clone());
        let response = send(Some(authorization))
            .await
            .map_err(|error| self.transport(reference, error))?;
        if matches!(
            response.status(),
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN
        ) {
            return Err(self.auth_failed(
                reference,
                &format!("{} with the credentials or token", response.status()),
            ));
        }
        Ok(response)
    }

    /// A bearer token from `realm` for `scope`.
    async fn token(
        &self,
        reference: &Reference,
        realm: &str,
        service: Option<&str>,
        scope: &str,
        credentials: Option<&Credentials>,
    ) -> Result<String, ImageError> {
        let mut query = vec![("scope", scope)];
        if let Some(service) = service {
            query.push(("service", service));
        }
        let client = if realm.starts_with("http://") {
            &self.plain
        } else {
            &self.secure
        };
        let url = reqwest::Url::parse_with_params(realm, &query).map_err(|error| {
            self.auth_failed(reference, &format!("bad token realm {realm}: {error}"))
        })?;
        let mut request = client.get(url);
        if let Some(credentials) = credentials {
            request = request.header(AUTHORIZATION, credentials.basic_header());
        }
        let response = request
            .send()
            .await
            .map_err(|error| self.transport(reference, error))?;
        let status = response.status();
        if !status.is_success() {
            return Err(self.auth_failed(
                reference,
                &format!(
                    "the token service {realm} answered {status}{}",
                    if credentials.is_some() {
                        " to the configured credentials"
                    } else {
                        " (no credentials configured)"
                    }
                ),
            ));
        }
        #[derive(serde::Deserialize)]
        struct TokenReply {
            token: Option<String>,
            access_token: Option<String>,
        }
        let reply: TokenReply = response
            .json()
            .await
            .map_err(|error| self.auth_failed(reference, &format!("bad token reply: {error}")))?;
        reply
            .token
            .or(reply.access_token)
            .filter(|token| !token.is_empty())
            .ok_or_else(|| self.auth_failed(reference, "the token reply holds no token"))
    }

    fn transport(&self, reference: &Reference, error: reqwest::Error) -> ImageError {
        let mut detail = error.to_string();
        let mut source = std::error::Error::source(&error);
        while let Some(inner) = source {
            detail.push_str(": ");
            detail.push_str(&inner.to_string());
            source = inner.source();
        }
        ImageError::Registry {
            registry: reference.registry.clone(),
            detail: format!("cannot reach {}: {detail}", reference.api_host()),
        }
    }

    fn auth_failed(&self, reference: &Reference, detail: &str) -> ImageError {
        ImageError::AuthFailed {
            reference: reference.to_string(),
            registry: reference.registry.clone(),
            detail: detail.to_owned(),
        }
    }

    /// The manifest (or index) `name` (a tag or digest) of `reference`'s repository: its
    /// bytes, content type and digest (checked when `name` is a digest).
    pub async fn manifest(
        &self,
        reference: &Reference,
        name: &str,
    ) -> Result<(Vec<u8>, String, String), ImageError> {
        let response = self
            .get(
                reference,
                &format!("manifests/{name}"),
                Some(MANIFEST_ACCEPT),
                0,
            )
            .await?;
        let status = response.status();
        if status == StatusCode::NOT_FOUND {
            let detail = response.text().await.unwrap_or_default();
            return Err(ImageError::UnknownImage {
                reference: reference.to_string(),
                registry: reference.registry.clone(),
                detail: format!("404 {}", detail.trim()),
            });
        }
        if !status.is_success() {
            return Err(ImageError::Registry {
                registry: reference.registry.clone(),
                detail: format!("manifest {name} of {}: {status}", reference.repository),
            });
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or("")
            .to_owned();
        let bytes = response
            .bytes()
            .await
            .map_err(|error| self.transport(reference, error))?
            .to_vec();
        let digest = crate::blob::digest_of(&bytes);
        if name.starts_with("sha256:") && digest != name {
            return Err(ImageError::DigestMismatch {
                reference: reference.to_string(),
                what: "the manifest".into(),
                expected: name.to_owned(),
                actual: digest,
            });
        }
        Ok((bytes, content_type, digest))
    }

    /// Fetches blob `descriptor` into `blobs` (resuming a partial download, verified), unless
    /// it is there.
    pub async fn blob(
        &self,
        reference: &Reference,
        descriptor: &Descriptor,
        blobs: &BlobDirs,
        what: &str,
        progress: Option<&Progress>,
    ) -> Result<(), ImageError> {
        let slot = {
            let blobs = blobs.clone();
            let digest = descriptor.digest.clone();
            let size = (descriptor.size > 0).then_some(descriptor.size);
            let name = reference.to_string();
            tokio::task::spawn_blocking(move || blobs.begin(&digest, size, &name))
                .await
                .map_err(|error| ImageError::Config(format!("blob task failed: {error}")))??
        };
        let Slot::Fetch(mut partial) = slot else {
            return Ok(());
        };
        let offset = partial.offset();
        let mut response = self
            .get(
                reference,
                &format!("blobs/{}", descriptor.digest),
                None,
                offset,
            )
            .await?;
        match response.status() {
            StatusCode::PARTIAL_CONTENT => {
                tracing::info!(%offset, "resuming {what} of {reference}");
            }
            status if status.is_success() => partial.restart()?,
            StatusCode::NOT_FOUND => {
                return Err(ImageError::UnknownImage {
                    reference: reference.to_string(),
                    registry: reference.registry.clone(),
                    detail: format!("{what} {} is missing", descriptor.digest),
                });
            }
            StatusCode::RANGE_NOT_SATISFIABLE => {
                partial.restart()?;
                response = self
                    .get(reference, &format!("blobs/{}", descriptor.digest), None, 0)
                    .await?;
            }
            status => {
                return Err(ImageError::Registry {
                    registry: reference.registry.clone(),
                    detail: format!("{what} {}: {status}", descriptor.digest),
                });
            }
        }
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    partial.write(&chunk)?;
                    if let Some(progress) = progress {
                        progress(what, partial.offset(), descriptor.size);
                    }
                }
                Ok(None) => break,
                Err(error) => {
                    tracing::warn!("{what} of {reference}: {error}; kept for resuming");
                    break;
                }
            }
        }
        partial.finish(what)
    }
}

/// rustls with the ring provider, the system's roots plus `ca_cert`.
fn tls_config(ca_cert: Option<&Path>) -> Result<rustls::ClientConfig, ImageError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let extra = match ca_cert {
        Some(path) => {
            let pem = std::fs::read(path).map_err(|error| {
                ImageError::Config(format!("ca_cert {}: {error}", path.display()))
            })?;
            let certs = CertificateDer::pem_slice_iter(&pem)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|error| {
                    ImageError::Config(format!("ca_cert {}: not PEM ({error})", path.display()))
                })?;
            if certs.is_empty() {
                return Err(ImageError::Config(format!(
                    "ca_cert {}: holds no certificate",
                    path.display()
                )));
            }
            certs
        }
        None => Vec::new(),
    };
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|error| ImageError::Config(format!("cannot set up TLS: {error}")))?;
    let builder = match rustls_platform_verifier::Verifier::new_with_extra_roots(extra, provider) {
        Ok(verifier) => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier)),
        Err(error) => {
            tracing::debug!(%error, "no root certificates to check https registries against");
            builder.with_root_certificates(RootCertStore::empty())
        }
    };
    let mut config = builder.with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}
