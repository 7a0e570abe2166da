//! Errors of image pulls, imports and unpacking. Each names the image and what to do.

/// What went wrong with an image.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    /// An image reference that cannot be parsed.
    #[error("image reference \"{reference}\" is not valid: {why}")]
    BadReference {
        /// The reference as given.
        reference: String,
        /// What is wrong with it.
        why: String,
    },
    /// No registry source has the image (or the tag).
    #[error(
        "image {reference} not found on {registry} ({detail})\nhint: check the name and tag, or the registry mirrors in `[images]`"
    )]
    UnknownImage {
        /// The image, e.g. `docker.io/library/python:3.11`.
        reference: String,
        /// The registry host that answered last.
        registry: String,
        /// The registry's answer.
        detail: String,
    },
    /// The registry refused the credentials (or wanted some and none were found).
    #[error(
        "authentication to {registry} failed for {reference} ({detail})\nhint: log in with `docker login {registry}` (swerve reads ~/.docker/config.json or $DOCKER_CONFIG) or set images.auth"
    )]
    AuthFailed {
        /// The image, e.g. `docker.io/library/python:3.11`.
        reference: String,
        /// The registry host.
        registry: String,
        /// The registry's answer.
        detail: String,
    },
    /// A downloaded or imported blob does not hash to the digest that names it; it was
    /// not stored.
    #[error(
        "digest mismatch for {what} of {reference}: expected {expected}, got {actual}; the download was discarded"
    )]
    DigestMismatch {
        /// The image, e.g. `docker.io/library/python:3.11`.
        reference: String,
        /// Which blob, e.g. `the manifest` or `blob sha256:…`.
        what: String,
        /// The digest that names it (`sha256:…`).
        expected: String,
        /// The digest of the bytes received.
        actual: String,
    },
    /// A download ended before the blob's size; the partial file is kept for resuming.
    #[error(
        "{what} of {reference} is truncated: {got} of {expected} bytes\nhint: pull again to resume"
    )]
    Truncated {
        /// The image, e.g. `docker.io/library/python:3.11`.
        reference: String,
        /// Which blob, e.g. `the manifest` or `blob sha256:…`.
        what: String,
        /// Bytes received.
        got: u64,
        /// Bytes the descriptor announces.
        expected: u64,
    },
    /// A manifest, config or layer of a media type swerve cannot read.
    #[error("{reference}: unsupported media type {media_type} ({what})")]
    UnsupportedMediaType {
        /// The image, e.g. `docker.io/library/python:3.11`.
        reference: String,
        /// Which document or blob, and why it cannot be read.
        what: String,
        /// Its media type.
        media_type: String,
    },
    /// The image (or every image of its index) is built for another platform.
    #[error(
        "image {reference} is for {found}, not {wanted}\nhint: pull an image built for {wanted} (or set images.platform)"
    )]
    WrongArchitecture {
        /// The image, e.g. `docker.io/library/python:3.11`.
        reference: String,
        /// The platform swerve runs images on, e.g. `linux/amd64`.
        wanted: String,
        /// The platform(s) the image is for.
        found: String,
    },
    /// Any other registry failure: HTTP errors, unreadable answers, connection failures.
    #[error("registry {registry}: {detail}")]
    Registry {
        /// The registry host.
        registry: String,
        /// What went wrong.
        detail: String,
    },
    /// A layer tar that cannot be unpacked safely (bad entries, paths leaving the root).
    #[error("{reference}: a layer cannot be unpacked: {detail}")]
    BadLayer {
        /// The image, e.g. `docker.io/library/python:3.11`.
        reference: String,
        /// Which entry and what is wrong with it.
        detail: String,
    },
    /// The image (a normalized reference) was never pulled or imported into this store.
    #[error("image {0} is not in the image store\nhint: `swerve images pull {0}` fetches it")]
    NotInStore(String),
    /// An image layout directory or archive that cannot be imported.
    #[error("{path}: {detail}")]
    BadArchive {
        /// The directory or archive, as given.
        path: String,
        /// What is wrong with it.
        detail: String,
    },
    /// An I/O error, with what was being done.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, e.g. `opening /path/to/image.tar`.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The `[images]` configuration cannot be used (or a setup step it drives failed).
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
