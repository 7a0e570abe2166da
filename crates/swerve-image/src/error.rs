//! Errors of image pulls, imports and unpacking. Each names the image and what to do.

/// What went wrong with an image.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    #[error("image reference \"{reference}\" is not valid: {why}")]
    BadReference { reference: String, why: String },
    #[error(
        "image {reference} not found on {registry} ({detail}); check the name and tag, or the registry mirrors in `[images]`"
    )]
    UnknownImage {
        reference: String,
        registry: String,
        detail: String,
    },
    #[error(
        "authentication to {registry} failed for {reference} ({detail}); log in with `docker login {registry}` (swerve reads ~/.docker/config.json or $DOCKER_CONFIG) or set images.auth"
    )]
    AuthFailed {
        reference: String,
        registry: String,
        detail: String,
    },
    #[error(
        "digest mismatch for {what} of {reference}: expected {expected}, got {actual}; the download was discarded"
    )]
    DigestMismatch {
        reference: String,
        what: String,
        expected: String,
        actual: String,
    },
    #[error("{what} of {reference} is truncated: {got} of {expected} bytes; pull again to resume")]
    Truncated {
        reference: String,
        what: String,
        got: u64,
        expected: u64,
    },
    #[error("{reference}: unsupported media type {media_type} ({what})")]
    UnsupportedMediaType {
        reference: String,
        what: String,
        media_type: String,
    },
    #[error(
        "image {reference} is for {found}, not {wanted}; pull an image built for {wanted} (or set images.platform)"
    )]
    WrongArchitecture {
        reference: String,
        wanted: String,
        found: String,
    },
    #[error("registry {registry}: {detail}")]
    Registry { registry: String, detail: String },
    #[error("{reference}: a layer cannot be unpacked: {detail}")]
    BadLayer { reference: String, detail: String },
    #[error("image {0} is not in the image store; `swerve images pull {0}` fetches it")]
    NotInStore(String),
    #[error("{path}: {detail}")]
    BadArchive { path: String, detail: String },
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    #[error("images configuration: {0}")]
    Config(String),
}

impl ImageError {
    /// A closure wrapping an I/O error with what was being done.
    pub(crate) fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> Self {
        let context = context.into();
        move |source| Self::Io { context, source }
    }

    /// A short class name for reports (`unknown_image`, `auth_failed`, …).
    pub fn class(&self) -> &'static str {
        match self {
            Self::BadReference { .. } => "bad_reference",
            Self::UnknownImage { .. } => "unknown_image",
            Self::AuthFailed { .. } => "auth_failed",
            Self::DigestMismatch { .. } => "digest_mismatch",
            Self::Truncated { .. } => "truncated",
            Self::UnsupportedMediaType { .. } => "unsupported_media_type",
            Self::WrongArchitecture { .. } => "wrong_architecture",
            Self::Registry { .. } => "registry",
            Self::BadLayer { .. } => "bad_layer",
            Self::NotInStore(_) => "not_in_store",
            Self::BadArchive { .. } => "bad_archive",
            Self::Io { .. } => "io",
            Self::Config(_) => "config",
        }
    }
}
