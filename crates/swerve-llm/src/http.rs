//! The OpenAI-compatible HTTP backend (vLLM, SGLang, hosted APIs; `http://`
//! or `https://` endpoints): one POST per attempt, each bounded by a timeout
//! that covers connecting, the response head and the whole body; bounded
//! retries for transient failures; usage, cost, latency and token capture.
//!
//! Each request carries neutral values for the sampling filters nothing set
//! ([`neutral_sampling`](crate::neutral_sampling); `sampling.neutral = false`
//! turns them off), except to OpenAI's and Azure OpenAI's APIs, which reject
//! fields they do not define. A server that answers 400 or 422 naming one of
//! them gets an error saying how to turn them off.
//!
//! The API key is read from the configured environment variable for each
//! call, sent as a sensitive header, and scrubbed from every error text.
//!
//! TLS is rustls with the *ring* crypto provider, handed to reqwest as a
//! ready-made configuration (no process-wide provider is installed). Server
//! certificates are checked against the system's root certificates plus those
//! in the optional `ca_cert` PEM file. A certificate that is not trusted, or
//! a handshake that fails on our side (e.g. a plain-HTTP server on an
//! `https://` URL), is reported at once and not retried: the next attempt
//! would fail the same way. A TLS alert sent by the server is retried.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderValue, RETRY_AFTER};
use reqwest::{Client, Url};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use rustls::{CertificateError, RootCertStore};
use tracing::Instrument;

use crate::Usage;
use crate::config::{ApiMode, HttpModelConfig};
use crate::error::ModelError;
use crate::model::{Model, ModelFuture};
use crate::price::PriceTable;
use crate::request::{ModelInput, ModelRequest};
use crate::response::ModelResponse;
use crate::retry::{Backoff, Failure, parse_retry_after};
use crate::wire;

/// What replaces the API key wherever it would show up in a message.
const REDACTED: &str = "[REDACTED]";

/// A [`Model`] served by an OpenAI-compatible HTTP endpoint.
///
/// Calls must run inside a tokio runtime with its time and I/O drivers
/// enabled (`#[tokio::main]` and `Builder::enable_all` do this).
#[derive(Debug, Clone)]
pub struct HttpModel {
    config: HttpModelConfig,
    url: Url,
    client: Client,
    timeout: Duration,
    backoff: Backoff,
    prices: PriceTable,
    /// No root certificates were found on the system: only `ca_cert` (if
    /// set) is trusted. Mentioned when a certificate is rejected.
    no_system_roots: bool,
    /// The endpoint takes sampling fields beyond OpenAI's own ([`takes_neutral`]).
    takes_neutral: bool,
}

impl HttpModel {
    /// Checks `config` and builds the client. Costs use the built-in price
    /// table until [`HttpModel::with_prices`] replaces it.
    pub fn new(config: HttpModelConfig) -> Result<Self, ModelError> {
        let timeout = positive_secs("timeout_secs", config.timeout_secs)?;
        let backoff = Backoff {
            base: positive_secs("backoff_base_secs", config.backoff_base_secs)?,
            max: positive_secs("backoff_max_secs", config.backoff_max_secs)?,
        };
        if config.model.is_empty() {
            return Err(ModelError::config(
                "the model `name` is empty; name the served model",
            ));
        }
        if config.base_url.is_empty() {
            return Err(ModelError::config(
                "`base_url` is empty\nhint: set it to the server's API root, e.g. http://127.0.0.1:8000/v1",
            ));
        }
        let base = Url::parse(config.base_url.trim_end_matches('/')).map_err(|error| {
            ModelError::config(format!(
                "`base_url` {:?} is not a URL ({error}); expected e.g. http://127.0.0.1:8000/v1",
                config.base_url
            ))
        })?;
        let https = match base.scheme() {
            "http" => false,
            "https" => true,
            other => {
                return Err(ModelError::config(format!(
                    "`base_url` {:?} has scheme `{other}`; expected http or https",
                    config.base_url
                )));
            }
        };
        let url = Url::parse(&format!("{base}/{}", wire::endpoint(config.mode)))
            .map_err(|error| ModelError::config(format!("`base_url`: {error}")))?;
        // Built for http endpoints too: reqwest needs a TLS configuration
        // either way, and a redirect may lead to https.
        let (tls, no_system_roots) = tls_config(config.ca_cert.as_deref(), https)?;
        let client = Client::builder()
            .tls_backend_preconfigured(tls)
            .connect_timeout(timeout)
            .user_agent(concat!("swerve-llm/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|error| {
                ModelError::config(format!("cannot build the HTTP client: {error}"))
            })?;
        Ok(Self {
            takes_neutral: takes_neutral(&url),
            config,
            url,
            client,
            timeout,
            backoff,
            prices: PriceTable::builtin(),
            no_system_roots,
        })
    }

    /// Uses `prices` for cost accounting.
    pub fn with_prices(mut self, prices: PriceTable) -> Self {
        self.prices = prices;
        self
    }

    /// The configuration this model was built from.
    pub fn config(&self) -> &HttpModelConfig {
        &self.config
    }

    /// The cost of `usage` by the price table.
    pub(crate) fn cost(&self, usage: &Usage) -> f64 {
        self.prices.cost(&self.config.model, usage)
    }

    /// The full endpoint URL requests are posted to.
    pub fn url(&self) -> &Url {
        &self.url
    }

    async fn call(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let started = Instant::now();
        let input_mode = match request.input {
            ModelInput::Chat { .. } => ApiMode::Chat,
            ModelInput::Prompt(_) => ApiMode::Completions,
        };
        if input_mode != self.config.mode {
            return Err(ModelError::config(format!(
                "the backend for `{}` is in {:?} mode but was given a {:?}-mode request",
                self.config.model, self.config.mode, input_mode
            )));
        }
        let session = request
            .session_id
            .as_deref()
            .map(|id| {
                HeaderValue::from_str(id).map_err(|_| {
                    ModelError::config(format!(
                        "session id {id:?} cannot be sent as an X-Session-ID header"
                    ))
                })
            })
            .transpose()?;
        let encoded = wire::request_body(
            &self.config.model,
            request,
            &self.config.sampling,
            &self.config.extra_body,
            self.takes_neutral,
        )
        .map_err(|error| ModelError::config(format!("cannot encode the request: {error}")))?;

        let mode = self.config.mode;
        let (parsed, attempts) = self
            .post(
                &self.url,
                Bytes::from(encoded.bytes),
                session.as_ref(),
                |bytes| wire::parse_response(bytes, mode, request.capture_tokens),
            )
            .await
            .map_err(|error| neutral_rejected(error, &encoded.neutral))?;
        let cost = self.cost(&parsed.usage);
        Ok(ModelResponse {
            content: parsed.content,
            reasoning_content: parsed.reasoning_content,
            tool_calls: parsed.tool_calls,
            finish_reason: parsed.finish_reason,
            usage: parsed.usage,
            latency: started.elapsed(),
            attempts,
            cost,
            prompt_token_ids: parsed.prompt_token_ids,
            completion_token_ids: parsed.completion_token_ids,
            logprobs: parsed.logprobs,
        })
    }

    /// POSTs the JSON `body` to `url` (an endpoint of this model's server) with the API key,
    /// the per-attempt timeout and the retries of the configuration, and reads the 2xx body
    /// with `parse`: its result and the attempts made. Every error has the key scrubbed.
    pub(crate) async fn post<T>(
        &self,
        url: &Url,
        body: Bytes,
        session: Option<&HeaderValue>,
        parse: impl FnOnce(&[u8]) -> Result<T, ModelError>,
    ) -> Result<(T, u32), ModelError> {
        let key = self.api_key()?;
        let max_attempts = self.config.max_retries.saturating_add(1);
        let mut attempt = 0;
        let bytes = loop {
            attempt += 1;
            let sent = Instant::now();
            let outcome = tokio::time::timeout(
                self.timeout,
                self.attempt(url, &body, key.as_ref(), session),
            )
            .await
            .unwrap_or(Err(Failure::Timeout));
            match outcome {
                Ok(bytes) => {
                    tracing::debug!(
                        attempt,
                        elapsed_ms = sent.elapsed().as_millis() as u64,
                        bytes = bytes.len(),
                        "model answered"
                    );
                    break bytes;
                }
                Err(failure) if failure.is_transient() && attempt < max_attempts => {
                    let delay = self.backoff.delay(attempt, failure.retry_after());
                    tracing::warn!(
                        attempt,
                        max_attempts,
                        delay_ms = delay.as_millis() as u64,
                        failure = %redact(failure.to_string(), key.as_ref()),
                        "model request failed; retrying"
                    );
                    tokio::time::sleep(delay).await;
                }
                Err(failure) => {
                    let error = failure.into_error(attempt, self.timeout);
                    let error = redact_error(error, key.as_ref());
                    tracing::warn!(attempt, %error, "model request failed");
                    return Err(error);
                }
            }
        };
        let parsed = parse(&bytes).map_err(|error| {
            let error = redact_error(error, key.as_ref());
            tracing::warn!(attempt, %error, "model response unusable");
            error
        })?;
        Ok((parsed, attempt))
    }

    /// One POST to `url`: the 2xx body, or why there is none.
    async fn attempt(
        &self,
        url: &Url,
        body: &Bytes,
        key: Option<&ApiKey>,
        session: Option<&HeaderValue>,
    ) -> Result<Bytes, Failure> {
        let mut builder = self
            .client
            .post(url.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json")
            .body(body.clone());
        if let Some(key) = key {
            builder = builder.header(reqwest::header::AUTHORIZATION, key.header.clone());
        }
        if let Some(session) = session {
            builder = builder.header("X-Session-ID", session.clone());
        }
        let response = builder.send().await.map_err(|error| {
            if error.is_timeout() {
                Failure::Timeout
            } else if let Some(tls) = rustls_error(&error) {
                self.tls_failure(tls, &error)
            } else {
                Failure::Connection(error_chain(&error))
            }
        })?;
        let status = response.status();
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|value| value.to_str().ok())
            .and_then(parse_retry_after);
        let bytes = response.bytes().await;
        if status.is_success() {
            return bytes.map_err(|error| Failure::Truncated(error_chain(&error)));
        }
        let body = match bytes {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(error) => format!("(body unreadable: {})", error_chain(&error)),
        };
        Err(Failure::Status {
            status: status.as_u16(),
            body,
            retry_after,
        })
    }

    /// What a TLS error met while sending a request means: a rejected
    /// certificate or a failed handshake is final; an alert from the server
    /// (which may come from one bad node behind a load balancer) is retried
    /// like any other connection failure.
    fn tls_failure(&self, tls: &rustls::Error, error: &reqwest::Error) -> Failure {
        let host = self.url.host_str().unwrap_or("the endpoint");
        match tls {
            rustls::Error::InvalidCertificate(reason) => {
                let mut detail = format!("the TLS certificate of {host} was not trusted ({tls}).");
                match reason {
                    CertificateError::NotValidForName
                    | CertificateError::NotValidForNameContext { .. } => detail.push_str(
                        " It was issued for another host name: use that name in `base_url` \
                         (`ca_cert` adds trusted roots; it does not change this check).",
                    ),
                    CertificateError::Expired
                    | CertificateError::ExpiredContext { .. }
                    | CertificateError::NotValidYet
                    | CertificateError::NotValidYetContext { .. } => detail.push_str(
                        " It is outside its validity period: check this machine's clock, else \
                         the server's certificate needs renewing (`ca_cert` cannot help here).",
                    ),
                    _ => {
                        if self.no_system_roots {
                            detail.push_str(
                                " No root certificates were found on this system (install the \
                                 ca-certificates package or set SSL_CERT_FILE).",
                            );
                        }
                        match &self.config.ca_cert {
                            Some(path) => detail.push_str(&format!(
                                " Trusted are the system's root certificates and those in \
                                 `ca_cert` ({}); if the server's certificate is self-signed or \
                                 from another private CA, add that certificate to the file.",
                                path.display()
                            )),
                            None => detail.push_str(
                                " If the server's certificate is self-signed or from a private \
                                 CA (e.g. a corporate proxy), set `ca_cert` to a PEM file \
                                 holding that CA certificate.",
                            ),
                        }
                    }
                }
                Failure::Tls(detail)
            }
            rustls::Error::AlertReceived(_) => Failure::Connection(error_chain(error)),
            rustls::Error::InvalidMessage(_) => Failure::Tls(format!(
                "the TLS handshake with {host} failed ({tls}); if the server speaks plain \
                 HTTP on this port, use an http:// `base_url`"
            )),
            _ => Failure::Tls(format!(
                "the TLS handshake with {host} failed: {}",
                error_chain(error)
            )),
        }
    }

    /// The API key from the configured variable, if one is set.
    fn api_key(&self) -> Result<Option<ApiKey>, ModelError> {
        let var = &self.config.api_key_env;
        if var.is_empty() {
            return Ok(None);
        }
        let Some(secret) = std::env::var_os(var).filter(|value| !value.is_empty()) else {
            tracing::debug!(var = %var, "no API key set; sending no Authorization header");
            return Ok(None);
        };
        let bad = || {
            ModelError::config(format!(
                "the API key in ${var} contains characters that cannot be sent in an HTTP header"
            ))
        };
        let secret = secret.into_string().map_err(|_| bad())?;
        let mut header = HeaderValue::from_str(&format!("Bearer {secret}")).map_err(|_| bad())?;
        header.set_sensitive(true);
        Ok(Some(ApiKey { secret, header }))
    }
}

impl Model for HttpModel {
    fn complete<'a>(&'a self, request: &'a ModelRequest) -> ModelFuture<'a> {
        let span = tracing::debug_span!(
            "model_call",
            model = %self.config.model,
            session = request.session_id.as_deref().unwrap_or("")
        );
        Box::pin(self.call(request).instrument(span))
    }

    fn name(&self) -> &str {
        &self.config.model
    }
}

/// Whether the endpoint `url` takes the neutral sampling fields. OpenAI's API
/// (`api.openai.com`) and Azure OpenAI (`*.openai.azure.com`) answer HTTP 400
/// ("Unrecognized request argument supplied: top_k") to fields they do not define,
/// and their reasoning models refuse `top_p`; they apply no hidden filter either,
/// so nothing is lost. vLLM and SGLang read the fields; llama.cpp, Ollama and most
/// other OpenAI-compatible servers read or ignore them.
fn takes_neutral(url: &Url) -> bool {
    !url.host_str().is_some_and(|host| {
        host.eq_ignore_ascii_case("api.openai.com")
            || host.to_ascii_lowercase().ends_with(".openai.azure.com")
    })
}

/// `error`, told what to change when it is the server refusing one of the neutral
/// sampling fields that were sent by default (`neutral`, their keys).
fn neutral_rejected(error: ModelError, neutral: &[&str]) -> ModelError {
    let ModelError::Server { status, body } = &error else {
        return error;
    };
    let named: Vec<&str> = neutral
        .iter()
        .copied()
        .filter(|key| body.contains(key))
        .collect();
    if !matches!(status, 400 | 422) || named.is_empty() {
        return error;
    }
    ModelError::config(format!(
        "{error}. swerve sent {} by default as neutral sampling values (no filter, no \
         penalty); this server does not take them: set `sampling.neutral = false` for this \
         model (e.g. --set model.sampling.neutral=false)",
        named.join(", ")
    ))
}

/// The key and the header built from it. Deliberately not `Debug`.
struct ApiKey {
    secret: String,
    header: HeaderValue,
}

/// A strictly positive, finite number of seconds.
fn positive_secs(field: &str, secs: f64) -> Result<Duration, ModelError> {
    Duration::try_from_secs_f64(secs)
        .ok()
        .filter(|duration| !duration.is_zero())
        .ok_or_else(|| {
            ModelError::config(format!(
                "`{field}` is {secs}; it must be a positive number of seconds"
            ))
        })
}

/// The rustls configuration of a client (the *ring* provider, the system's
/// roots plus `ca_cert`, HTTP/2 and HTTP/1.1 offered by ALPN as reqwest's own
/// setup does), and whether the system had no root certificates.
fn tls_config(
    ca_cert: Option<&Path>,
    https: bool,
) -> Result<(rustls::ClientConfig, bool), ModelError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let extra = match ca_cert {
        Some(path) => load_ca_cert(path)?,
        None => Vec::new(),
    };
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|error| ModelError::config(format!("cannot set up TLS: {error}")))?;
    // With `extra` already checked, this only fails when the system has no
    // root certificates and `ca_cert` is unset: fall back to trusting
    // nothing, so plain-http use is unaffected and an https request reports
    // an untrusted certificate with the reason.
    let (builder, no_system_roots) =
        match rustls_platform_verifier::Verifier::new_with_extra_roots(extra, provider) {
            Ok(verifier) => (
                builder
                    .dangerous()
                    .with_custom_certificate_verifier(Arc::new(verifier)),
                false,
            ),
            Err(error) => {
                if https {
                    tracing::warn!(%error, "no root certificates to check https servers against");
                } else {
                    tracing::debug!(%error, "no root certificates to check https servers against");
                }
                (builder.with_root_certificates(RootCertStore::empty()), true)
            }
        };
    let mut config = builder.with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok((config, no_system_roots))
}

/// The certificates in the PEM file `path`, each checked to be usable as a
/// root.
fn load_ca_cert(path: &Path) -> Result<Vec<CertificateDer<'static>>, ModelError> {
    let bad = |problem: String| {
        ModelError::config(format!(
            "`ca_cert` {}: {problem}\nhint: set `ca_cert` to a PEM file holding the CA \
             certificate(s) to trust, or remove it to trust only the system's roots",
            path.display()
        ))
    };
    let pem = std::fs::read(path).map_err(|error| bad(format!("cannot be read ({error})")))?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| bad(format!("is not valid PEM ({error})")))?;
    if certs.is_empty() {
        return Err(bad(
            "holds no certificate (no `-----BEGIN CERTIFICATE-----` block)".to_owned(),
        ));
    }
    let mut roots = RootCertStore::empty();
    for (index, cert) in certs.iter().enumerate() {
        roots.add(cert.clone()).map_err(|error| {
            bad(format!(
                "certificate {} of {} cannot be used as a root ({error})",
                index + 1,
                certs.len()
            ))
        })?;
    }
    Ok(certs)
}

/// The rustls error behind a failed request, if there is one. An
/// `io::Error`'s `source` skips the error it wraps (often another
/// `io::Error` around the rustls one), so those are stepped into.
fn rustls_error<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a rustls::Error> {
    let mut cause = Some(error);
    while let Some(current) = cause {
        if let Some(tls) = current.downcast_ref::<rustls::Error>() {
            return Some(tls);
        }
        cause = match current
            .downcast_ref::<std::io::Error>()
            .and_then(std::io::Error::get_ref)
        {
            Some(inner) => Some(inner as &(dyn std::error::Error + 'static)),
            None => current.source(),
        };
    }
    None
}

/// An error and its sources, joined: reqwest's own message is often just
/// "error sending request", with the cause one level down.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

fn redact(text: String, key: Option<&ApiKey>) -> String {
    match key {
        Some(key) if text.contains(&key.secret) => text.replace(&key.secret, REDACTED),
        _ => text,
    }
}

fn redact_error(error: ModelError, key: Option<&ApiKey>) -> ModelError {
    let scrub = |text: String| redact(text, key);
    match error {
        ModelError::Server { status, body } => ModelError::Server {
            status,
            body: scrub(body),
        },
        ModelError::Connection { detail } => ModelError::Connection {
            detail: scrub(detail),
        },
        ModelError::MalformedResponse { detail } => ModelError::MalformedResponse {
            detail: scrub(detail),
        },
        ModelError::ContextLength { detail } => ModelError::ContextLength {
            detail: scrub(detail),
        },
        ModelError::Config { detail } => ModelError::Config {
            detail: scrub(detail),
        },
        ModelError::Exhausted { detail } => ModelError::Exhausted {
            detail: scrub(detail),
        },
        ModelError::Timeout { .. } | ModelError::RateLimited { .. } => error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_endpoint_urls() {
        let model = HttpModel::new(HttpModelConfig::new("http://127.0.0.1:8000/v1/", "m")).unwrap();
        assert_eq!(
            model.url().as_str(),
            "http://127.0.0.1:8000/v1/chat/completions"
        );
        let mut config = HttpModelConfig::new("http://localhost:1/v1", "m");
        config.mode = ApiMode::Completions;
        assert_eq!(
            HttpModel::new(config).unwrap().url().as_str(),
            "http://localhost:1/v1/completions"
        );
    }

    #[test]
    fn rejects_bad_configuration() {
        let cases = [
            (HttpModelConfig::new("not a url", "m"), "base_url"),
            (
                HttpModelConfig::new("ftp://x/v1", "m"),
                "expected http or https",
            ),
            (HttpModelConfig::new("http://x/v1", ""), "model `name`"),
            (HttpModelConfig::new("", "m"), "`base_url` is empty"),
            (
                HttpModelConfig {
                    timeout_secs: 0.0,
                    ..HttpModelConfig::new("http://x/v1", "m")
                },
                "timeout_secs",
            ),
            (
                HttpModelConfig {
                    backoff_max_secs: f64::NAN,
                    ..HttpModelConfig::new("http://x/v1", "m")
                },
                "backoff_max_secs",
            ),
        ];
        for (config, needle) in cases {
            let error = HttpModel::new(config).unwrap_err();
            assert!(matches!(error, ModelError::Config { .. }), "{error}");
            assert!(error.to_string().contains(needle), "{error} lacks {needle}");
        }
    }

    #[test]
    fn openai_endpoints_get_no_neutral_fields() {
        for (base, takes) in [
            ("http://127.0.0.1:8000/v1", true),
            ("https://api.together.xyz/v1", true),
            ("https://api.openai.com/v1", false),
            ("https://API.OpenAI.com/v1/", false),
            (
                "https://my-resource.openai.azure.com/openai/deployments/d",
                false,
            ),
        ] {
            let model = HttpModel::new(HttpModelConfig::new(base, "m")).unwrap();
            assert_eq!(model.takes_neutral, takes, "{base}");
        }
    }

    #[test]
    fn a_refused_neutral_field_says_how_to_turn_them_off() {
        let refused = || ModelError::Server {
            status: 400,
            body: r#"{"error":{"message":"Unrecognized request argument supplied: top_k"}}"#.into(),
        };
        let error = neutral_rejected(refused(), &["top_p", "top_k"]);
        let text = error.to_string();
        assert!(matches!(error, ModelError::Config { .. }), "{text}");
        assert!(
            text.contains("Unrecognized request argument supplied: top_k")
                && text.contains("swerve sent top_k by default")
                && text.contains("--set model.sampling.neutral=false"),
            "{text}"
        );
        // Not sent by default (the user's own value), or another error: unchanged.
        assert_eq!(neutral_rejected(refused(), &["min_p"]), refused());
        let server = ModelError::Server {
            status: 500,
            body: "top_k".into(),
        };
        assert_eq!(neutral_rejected(server.clone(), &["top_k"]), server);
    }

    #[test]
    fn accepts_https() {
        let model =
            HttpModel::new(HttpModelConfig::new("https://api.example.com/v1", "m")).unwrap();
        assert_eq!(
            model.url().as_str(),
            "https://api.example.com/v1/chat/completions"
        );
    }

    #[test]
    fn ca_cert_must_hold_usable_certificates() {
        let dir = std::env::temp_dir().join(format!("swerve-llm-ca-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cases = [
            ("empty.pem", "", "holds no certificate"),
            (
                "garbage.pem",
                "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
                "cannot be used as a root",
            ),
            (
                "unterminated.pem",
                "-----BEGIN CERTIFICATE-----\nAAAA\n",
                "not valid PEM",
            ),
        ];
        for (name, text, needle) in cases {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap();
            let config = HttpModelConfig {
                ca_cert: Some(path.clone()),
                ..HttpModelConfig::new("https://api.example.com/v1", "m")
            };
            let error = HttpModel::new(config).unwrap_err();
            let text = error.to_string();
            assert!(matches!(error, ModelError::Config { .. }), "{text}");
            assert!(text.contains(needle), "{text} lacks {needle}");
            assert!(text.contains(&path.display().to_string()), "{text}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn redaction_covers_every_text_carrying_error() {
        let key = ApiKey {
            secret: "sk-secret".into(),
            header: HeaderValue::from_static("Bearer sk-secret"),
        };
        let errors = [
            ModelError::Server {
                status: 401,
                body: "bad key sk-secret".into(),
            },
            ModelError::Connection {
                detail: "sk-secret".into(),
            },
            ModelError::malformed("sk-secret"),
            ModelError::ContextLength {
                detail: "sk-secret".into(),
            },
            ModelError::config("sk-secret"),
            ModelError::Exhausted {
                detail: "sk-secret".into(),
            },
        ];
        for error in errors {
            let text = redact_error(error, Some(&key)).to_string();
            assert!(
                !text.contains("sk-secret") && text.contains(REDACTED),
                "{text}"
            );
        }
    }
}
