//! The image a build writes: its OCI configuration (every field a Dockerfile sets, and
//! Docker's `Healthcheck`, `Shell`, `OnBuild` extensions), its manifest, and the store's
//! record naming it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::ImageError;
use crate::manifest::{Descriptor, OCI_MANIFEST};
use crate::store::{ImageRecord, Store};

/// The OCI media type of the uncompressed layers a build writes.
pub const LAYER_TAR: &str = "application/vnd.oci.image.layer.v1.tar";
/// The OCI media type of an image configuration.
pub const CONFIG: &str = "application/vnd.oci.image.config.v1+json";

/// An empty JSON object (`ExposedPorts` and `Volumes` values).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Empty {}

/// A healthcheck (Docker's extension of the OCI config).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Healthcheck {
    /// `["NONE"]`, `["CMD", …]` or `["CMD-SHELL", command]`.
    pub test: Vec<String>,
    /// Nanoseconds between checks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<u64>,
    /// Nanoseconds a check may take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<u64>,
    /// Nanoseconds of start-up during which failures do not count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_period: Option<u64>,
    /// Nanoseconds between checks during the start period.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_interval: Option<u64>,
    /// Failures in a row that make the container unhealthy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retries: Option<u64>,
}

/// How a container of the image runs (the OCI config's `config`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RunSettings {
    /// `USER`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// `EXPOSE`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exposed_ports: Option<BTreeMap<String, Empty>>,
    /// `ENV`, each `NAME=value`, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<Vec<String>>,
    /// `ENTRYPOINT`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entrypoint: Option<Vec<String>>,
    /// `CMD`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmd: Option<Vec<String>>,
    /// `VOLUME`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volumes: Option<BTreeMap<String, Empty>>,
    /// `WORKDIR`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_dir: Option<String>,
    /// `LABEL`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    /// `STOPSIGNAL`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_signal: Option<String>,
    /// `HEALTHCHECK`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub healthcheck: Option<Healthcheck>,
    /// `SHELL`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shell: Option<Vec<String>>,
    /// `ONBUILD` triggers of the base image (never run by swerve's builder, which refuses
    /// such bases).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_build: Option<Vec<String>>,
}

impl RunSettings {
    /// The value of `ENV` variable `name`.
    pub fn env_var(&self, name: &str) -> Option<String> {
        self.env.iter().flatten().find_map(|pair| {
            pair.split_once('=')
                .filter(|(key, _)| *key == name)
                .map(|(_, value)| value.to_owned())
        })
    }

    /// Sets `ENV` variable `name`, in place when already set.
    pub fn set_env(&mut self, name: &str, value: &str) {
        let env = self.env.get_or_insert_with(Vec::new);
        let pair = format!("{name}={value}");
        match env
            .iter_mut()
            .find(|existing| existing.split_once('=').map(|(k, _)| k) == Some(name))
        {
            Some(existing) => *existing = pair,
            None => env.push(pair),
        }
    }
}

/// One history entry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct History {
    /// When, RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
    /// The instruction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
    /// Whether it made no layer.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub empty_layer: bool,
}

/// The layers' diff ids.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RootFs {
    /// Always `layers`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Bottom first.
    pub diff_ids: Vec<String>,
}

impl Default for RootFs {
    fn default() -> Self {
        Self {
            kind: "layers".into(),
            diff_ids: Vec::new(),
        }
    }
}

/// An OCI image configuration, as a build reads its base's and writes its own.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageSpec {
    /// RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
    /// `MAINTAINER`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// `amd64`.
    #[serde(default)]
    pub architecture: String,
    /// `linux`.
    #[serde(default)]
    pub os: String,
    /// How containers run.
    #[serde(default)]
    pub config: RunSettings,
    /// The layers.
    #[serde(default)]
    pub rootfs: RootFs,
    /// What made each layer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<History>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Manifest<'a> {
    schema_version: u32,
    media_type: &'a str,
    config: Descriptor,
    layers: &'a [Descriptor],
}

/// Stores `spec` and a manifest of `layers` (already stored blobs) in `store`, and records
/// the image under each of `tags`; returns the manifest's digest and the records.
pub fn write_image(
    store: &Store,
    spec: &ImageSpec,
    layers: &[Descriptor],
    tags: &[String],
) -> Result<(String, Vec<ImageRecord>), ImageError> {
    let config = serde_json::to_vec(spec).map_err(|error| ImageError::Config(error.to_string()))?;
    let config_digest = crate::blob::digest_of(&config);
    store.blobs().store_reader(
        &config_digest,
        Some(config.len() as u64),
        "the build",
        "the image configuration",
        &mut &config[..],
    )?;
    let manifest = serde_json::to_vec(&Manifest {
        schema_version: 2,
        media_type: OCI_MANIFEST,
        config: Descriptor {
            media_type: CONFIG.into(),
            digest: config_digest.clone(),
            size: config.len() as u64,
            platform: None,
            annotations: None,
        },
        layers,
    })
    .map_err(|error| ImageError::Config(error.to_string()))?;
    let manifest_digest = crate::blob::digest_of(&manifest);
    store.blobs().store_reader(
        &manifest_digest,
        Some(manifest.len() as u64),
        "the build",
        "the manifest",
        &mut &manifest[..],
    )?;
    let records = tags
        .iter()
        .map(|tag| {
            store.finish_import(
                tag,
                "swerve images build".into(),
                &manifest,
                config_digest.clone(),
                layers.to_vec(),
            )
        })
        .collect::<Result<_, _>>()?;
    Ok((manifest_digest, records))
}

/// Now, RFC 3339 in UTC (`2024-01-02T03:04:05Z`).
pub fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Howard Hinnant's civil_from_days.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_is_set_in_place() {
        let mut settings = RunSettings::default();
        settings.set_env("A", "1");
        settings.set_env("B", "2");
        settings.set_env("A", "3");
        assert_eq!(settings.env.as_deref().unwrap(), ["A=3", "B=2"]);
        assert_eq!(settings.env_var("B").as_deref(), Some("2"));
    }

    #[test]
    fn timestamps_are_rfc3339() {
        let now = now_rfc3339();
        assert_eq!(now.len(), 20);
        assert!(now.starts_with("20") && now.ends_with('Z'));
    }
}
