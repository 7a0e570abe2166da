//! OCI and Docker manifests, indexes and image configurations.

use serde::{Deserialize, Serialize};

use crate::ImageError;

/// The media type of an OCI image index (one manifest per platform).
pub const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";
/// The media type of an OCI image manifest (one image: config and layers).
pub const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
/// The media type of a Docker manifest list (Docker's image index).
pub const DOCKER_LIST: &str = "application/vnd.docker.distribution.manifest.list.v2+json";
/// The media type of a Docker schema 2 image manifest.
pub const DOCKER_MANIFEST: &str = "application/vnd.docker.distribution.manifest.v2+json";
/// What a manifest request accepts.
pub const ACCEPT: &str = "application/vnd.oci.image.index.v1+json, application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.list.v2+json, application/vnd.docker.distribution.manifest.v2+json";

/// A content descriptor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Descriptor {
    /// The blob's media type (`mediaType`); empty when the document leaves it out.
    #[serde(rename = "mediaType", default)]
    pub media_type: String,
    /// The blob's content digest, `sha256:<64 hex>`; it names the blob and is checked.
    pub digest: String,
    /// The blob's size in bytes (0 when not given).
    #[serde(default)]
    pub size: u64,
    /// In an index: the platform the manifest is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<Platform>,
    /// Free-form annotations, e.g. `org.opencontainers.image.ref.name` in a layout's index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<serde_json::Map<String, serde_json::Value>>,
}

/// The platform an image is built for, as an index names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Platform {
    /// The operating system, e.g. `linux`.
    pub os: String,
    /// The CPU architecture in Go's spelling, e.g. `amd64`, `arm64`.
    pub architecture: String,
    /// The architecture variant, e.g. `v8`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
}

#[derive(Deserialize)]
struct Raw {
    #[serde(rename = "mediaType", default)]
    media_type: Option<String>,
    #[serde(rename = "schemaVersion", default)]
    schema_version: Option<u32>,
    #[serde(default)]
    manifests: Option<Vec<Descriptor>>,
    #[serde(default)]
    config: Option<Descriptor>,
    #[serde(default)]
    layers: Option<Vec<Descriptor>>,
}

/// A manifest document: an index of per-platform manifests, or one image's manifest.
#[derive(Debug, Clone)]
pub enum Document {
    /// An index (or Docker manifest list): the per-platform manifests.
    Index(Vec<Descriptor>),
    /// One image's manifest.
    Manifest {
        /// The image configuration blob.
        config: Descriptor,
        /// The layer blobs, bottom first; every one is of a type swerve can unpack.
        layers: Vec<Descriptor>,
    },
}

impl Document {
    /// Parses `bytes`, served with `content_type` (may be empty).
    pub fn parse(bytes: &[u8], content_type: &str, reference: &str) -> Result<Self, ImageError> {
        let raw: Raw = serde_json::from_slice(bytes).map_err(|error| ImageError::Registry {
            registry: reference.to_owned(),
            detail: format!("the manifest is not JSON: {error}"),
        })?;
        let content_type = content_type.split(';').next().unwrap_or("").trim();
        let media_type = raw
            .media_type
            .clone()
            .filter(|media_type| !media_type.is_empty())
            .unwrap_or_else(|| content_type.to_owned());
        if raw.schema_version == Some(1) || media_type.contains("distribution.manifest.v1") {
            return Err(ImageError::UnsupportedMediaType {
                reference: reference.to_owned(),
                what: "Docker schema 1 manifest (deprecated; push the image again)".into(),
                media_type,
            });
        }
        if let Some(manifests) = raw.manifests {
            return Ok(Self::Index(manifests));
        }
        match (raw.config, raw.layers) {
            (Some(config), Some(layers)) => {
                for layer in &layers {
                    layer_compression(&layer.media_type).map_err(|what| {
                        ImageError::UnsupportedMediaType {
                            reference: reference.to_owned(),
                            what,
                            media_type: layer.media_type.clone(),
                        }
                    })?;
                }
                Ok(Self::Manifest { config, layers })
            }
            _ => Err(ImageError::UnsupportedMediaType {
                reference: reference.to_owned(),
                what: "neither an image manifest nor an index".into(),
                media_type,
            }),
        }
    }
}

/// How a layer of `media_type` is compressed; an error for foreign or unknown layers.
pub fn layer_compression(media_type: &str) -> Result<Compression, String> {
    match media_type {
        "application/vnd.oci.image.layer.v1.tar"
        | "application/vnd.docker.image.rootfs.diff.tar" => Ok(Compression::None),
        "application/vnd.oci.image.layer.v1.tar+gzip"
        | "application/vnd.docker.image.rootfs.diff.tar.gzip" => Ok(Compression::Gzip),
        "application/vnd.oci.image.layer.v1.tar+zstd"
        | "application/vnd.docker.image.rootfs.diff.tar.zstd" => Ok(Compression::Zstd),
        "" => Ok(Compression::Detect),
        other if other.contains("nondistributable") || other.contains("foreign") => {
            Err("a foreign (non-distributable) layer, which registries do not serve".into())
        }
        _ => Err("a layer type swerve cannot unpack (tar, tar+gzip, tar+zstd)".into()),
    }
}

/// A layer's compression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// A plain tar.
    None,
    /// A gzip-compressed tar.
    Gzip,
    /// A zstd-compressed tar.
    Zstd,
    /// Decided by the blob's first bytes.
    Detect,
}

/// The parts of an image configuration swerve uses.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageConfig {
    /// The CPU architecture the image is built for, e.g. `amd64`.
    #[serde(default)]
    pub architecture: String,
    /// The operating system, e.g. `linux`.
    #[serde(default)]
    pub os: String,
    /// The architecture variant, e.g. `v8`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// How a container of the image runs.
    #[serde(default)]
    pub config: RunConfig,
    /// The layers' uncompressed digests.
    #[serde(default)]
    pub rootfs: RootFs,
}

/// `Env`, `WorkingDir`, `User`, `Cmd` of an image.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunConfig {
    /// Environment variables, each `NAME=value`.
    #[serde(rename = "Env", default)]
    pub env: Option<Vec<String>>,
    /// The working directory commands start in.
    #[serde(rename = "WorkingDir", default)]
    pub working_dir: Option<String>,
    /// The user commands run as (`name`, `uid`, `uid:gid`); swerve's sandbox user wins.
    #[serde(rename = "User", default)]
    pub user: Option<String>,
    /// The default command.
    #[serde(rename = "Cmd", default)]
    pub cmd: Option<Vec<String>>,
}

/// An image's root filesystem as its configuration describes it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RootFs {
    /// The digest of each layer's uncompressed tar, bottom first.
    #[serde(default)]
    pub diff_ids: Vec<String>,
}

/// The manifest of `wanted` (os, architecture) in an index; an error listing what it has.
pub fn choose_platform<'a>(
    manifests: &'a [Descriptor],
    wanted: &(String, String),
    reference: &str,
) -> Result<&'a Descriptor, ImageError> {
    let matches = |descriptor: &&Descriptor| {
        descriptor
            .platform
            .as_ref()
            .is_some_and(|p| p.os == wanted.0 && p.architecture == wanted.1)
    };
    if let Some(found) = manifests.iter().find(matches) {
        return Ok(found);
    }
    // OCI layouts written by tools often have one manifest with no platform.
    if manifests.len() == 1 && manifests[0].platform.is_none() {
        return Ok(&manifests[0]);
    }
    let found: Vec<String> = manifests
        .iter()
        .filter_map(|d| d.platform.as_ref())
        .filter(|p| p.os != "unknown")
        .map(|p| format!("{}/{}", p.os, p.architecture))
        .collect();
    Err(ImageError::WrongArchitecture {
        reference: reference.to_owned(),
        wanted: format!("{}/{}", wanted.0, wanted.1),
        found: if found.is_empty() {
            "no platform".into()
        } else {
            found.join(", ")
        },
    })
}
