//! The HTTP server: the embedded page and its script and style sheet, and the JSON API the
//! page reads (`/api/index`, `/api/run/{n}`, `/api/traj/{key}`). Read-only: no route
//! writes anything.
//!
//! - Every response carries a Content-Security-Policy that allows only this server's own
//!   script, style sheet and JSON (no inline script or style, no other origin), so text
//!   from a trajectory can never run even if it reached the page as markup; the page itself
//!   only ever sets text (`textContent`).
//! - Bound to a loopback address the API is open to this machine, and requests whose
//!   `Host` is not a loopback name are refused (a web page elsewhere cannot rebind a name
//!   to 127.0.0.1 and read runs through the browser). Bound elsewhere, every API request
//!   needs the access token (`Authorization: Bearer …` or `?token=…`, which the page
//!   passes on from its own address).

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::{Context, Result};
use axum::Router;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Serialize;

use crate::assets;
use crate::catalog::{Catalog, Key};
use crate::{run as runs, trajectory as trajectories};

/// The policy every response carries.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; \
     form-action 'none'; frame-ancestors 'none'";

/// Who may read the API.
#[derive(Debug, Clone)]
pub struct Access {
    /// The token every API request must carry; `None` on loopback without one.
    pub token: Option<String>,
    /// Only loopback `Host` names are served (the server listens on loopback).
    pub loopback_only: bool,
}

impl Access {
    /// The access rules for a server on `address`: a token is required off loopback (the
    /// given one, or a fresh random one), and optional on it.
    pub fn for_address(address: &SocketAddr, token: Option<String>) -> Result<Access> {
        let loopback = address.ip().is_loopback();
        let token = match token {
            Some(token) if token.len() < 16 => anyhow::bail!(
                "the access token is too short ({} characters)\nhint: use 16 or more, or \
                 leave it out for a random one",
                token.len()
            ),
            Some(token) => Some(token),
            None if loopback => None,
            None => Some(random_token()?),
        };
        Ok(Access {
            token,
            loopback_only: loopback,
        })
    }
}

/// 32 hexadecimal digits from the kernel's random source.
fn random_token() -> Result<String> {
    let mut bytes = [0u8; 16];
    std::io::Read::read_exact(
        &mut std::fs::File::open("/dev/urandom").context("cannot open /dev/urandom")?,
        &mut bytes,
    )
    .context("cannot read /dev/urandom")?;
    Ok(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
}

struct Shared {
    catalog: Catalog,
    access: Access,
}

/// The router over `catalog`.
pub fn router(catalog: Catalog, access: Access) -> Router {
    let shared = Arc::new(Shared { catalog, access });
    let api = Router::new()
        .route("/api/index", get(index))
        .route("/api/run/{run}", get(run))
        .route("/api/traj/{key}", get(trajectory))
        .layer(middleware::from_fn_with_state(shared.clone(), check_token));
    Router::new()
        .route(
            "/",
            get(|| async { asset(assets::INDEX_HTML, "text/html") }),
        )
        .route(
            "/app.js",
            get(|| async { asset(assets::APP_JS, "text/javascript") }),
        )
        .route(
            "/app.css",
            get(|| async { asset(assets::APP_CSS, "text/css") }),
        )
        .merge(api)
        .layer(middleware::from_fn_with_state(shared.clone(), check_host))
        .layer(middleware::from_fn(secure_headers))
        .with_state(shared)
}

/// Serves `catalog` on `listener` until `shutdown` completes.
pub async fn serve(
    listener: tokio::net::TcpListener,
    catalog: Catalog,
    access: Access,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<()> {
    axum::serve(listener, router(catalog, access))
        .with_graceful_shutdown(shutdown)
        .await
        .context("the viewer's server failed")
}

fn asset(body: &'static str, content_type: &'static str) -> Response {
    ([(header::CONTENT_TYPE, content_type)], body).into_response()
}

async fn secure_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    for (name, value) in [
        ("content-security-policy", CONTENT_SECURITY_POLICY),
        ("x-content-type-options", "nosniff"),
        ("referrer-policy", "no-referrer"),
        ("x-frame-options", "DENY"),
        ("cache-control", "no-store"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

async fn check_host(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    if shared.access.loopback_only && !loopback_host(request.headers()) {
        return (
            StatusCode::FORBIDDEN,
            "this viewer serves loopback names only (localhost, 127.0.0.1, [::1])",
        )
            .into_response();
    }
    next.run(request).await
}

fn loopback_host(headers: &HeaderMap) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else {
        return true;
    };
    let name = match host.rsplit_once(':') {
        Some((name, port)) if !name.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    };
    matches!(name, "localhost" | "127.0.0.1" | "[::1]")
}

async fn check_token(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    let Some(token) = &shared.access.token else {
        return next.run(request).await;
    };
    let bearer = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "));
    let query = request.uri().query().and_then(|query| {
        query
            .split('&')
            .find_map(|pair| pair.strip_prefix("token="))
    });
    if bearer.or(query).is_some_and(|given| same(given, token)) {
        next.run(request).await
    } else {
        (
            StatusCode::UNAUTHORIZED,
            "an access token is required: open the address `swerve view` printed",
        )
            .into_response()
    }
}

/// Compares without stopping at the first difference.
fn same(given: &str, token: &str) -> bool {
    given.len() == token.len()
        && given
            .bytes()
            .zip(token.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// Runs `build` off the async workers (it reads files) and answers its JSON, or 404.
async fn blocking_json<T: Serialize + Send + 'static>(
    shared: Arc<Shared>,
    build: impl FnOnce(&Catalog) -> Result<T, String> + Send + 'static,
) -> Response {
    match tokio::task::spawn_blocking(move || build(&shared.catalog)).await {
        Ok(Ok(value)) => axum::Json(value).into_response(),
        Ok(Err(message)) => (StatusCode::NOT_FOUND, message).into_response(),
        Err(_) => (StatusCode::INTERNAL_SERVER_ERROR, "the request failed").into_response(),
    }
}

async fn index(State(shared): State<Arc<Shared>>) -> Response {
    blocking_json(shared, |catalog| Ok(runs::index(catalog))).await
}

async fn run(State(shared): State<Arc<Shared>>, Path(run): Path<String>) -> Response {
    blocking_json(shared, move |catalog| {
        run.parse()
            .ok()
            .and_then(|run| runs::run(catalog, run))
            .ok_or_else(|| format!("no run {run}"))
    })
    .await
}

async fn trajectory(State(shared): State<Arc<Shared>>, Path(key): Path<String>) -> Response {
    blocking_json(shared, move |catalog| {
        let parsed = Key::parse(&key).ok_or_else(|| format!("no trajectory {key}"))?;
        trajectories::load(catalog, &parsed)
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_hosts_pass() {
        let host = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::HOST, HeaderValue::from_str(value).unwrap());
            loopback_host(&headers)
        };
        for good in ["localhost", "localhost:8080", "127.0.0.1:1", "[::1]:9"] {
            assert!(host(good), "{good}");
        }
        for bad in [
            "evil.example",
            "evil.example:80",
            "127.0.0.1.evil:80",
            "[::1]x",
        ] {
            assert!(!host(bad), "{bad}");
        }
    }

    #[test]
    fn tokens_are_required_off_loopback() {
        let loopback: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let anywhere: SocketAddr = "0.0.0.0:0".parse().unwrap();
        assert_eq!(Access::for_address(&loopback, None).unwrap().token, None);
        let generated = Access::for_address(&anywhere, None).unwrap();
        assert_eq!(generated.token.unwrap().len(), 32);
        assert!(!generated.loopback_only);
        let short = Access::for_address(&anywhere, Some("abc".into())).unwrap_err();
        assert!(short.to_string().contains("too short"));
        assert!(same("abcd", "abcd") && !same("abcd", "abce") && !same("abc", "abcd"));
    }
}
