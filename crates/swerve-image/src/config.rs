//! The `[images]` configuration: where the store lives, registries' mirrors and rewrites,
//! insecure (plain HTTP) registries, a CA, credentials, the platform.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::reference::Reference;
use crate::{ImageError, reference};

/// Settings of the image store and of pulls.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ImagesConfig {
    /// The store directory. `None`: `images/` in swerve's cache directory.
    pub store: Option<PathBuf>,
    /// Mirrors per registry, tried in order before the registry itself, e.g.
    /// `"docker.io" = ["mirror.example.com"]`.
    pub mirrors: BTreeMap<String, Vec<String>>,
    /// Prefix rewrites applied to references before anything else, first match wins, e.g.
    /// `{ from = "docker.io/swebench/", to = "registry.internal/swebench/" }`.
    pub rewrites: Vec<Rewrite>,
    /// Registries reached over plain HTTP (loopback registries always are, when HTTPS fails).
    pub insecure: Vec<String>,
    /// A PEM file of CA certificates trusted besides the system's roots.
    pub ca_cert: Option<PathBuf>,
    /// A Docker `config.json` to read credentials from. `None`: `$DOCKER_CONFIG/config.json`,
    /// else `~/.docker/config.json`.
    pub docker_config: Option<PathBuf>,
    /// Credentials per registry (`user:password`), besides the Docker config's.
    pub auth: BTreeMap<String, String>,
    /// The platform to pull, `os/architecture` in OCI's words. `None`: this machine's.
    pub platform: Option<String>,
    /// Image name used for a task that names none: `"swebench"` derives SWE-bench's image
    /// name from the instance id (`swebench/sweb.eval.x86_64.<id>`), `"none"` uses base
    /// checkouts. Tasks naming an image (`image`, `docker_image`, `image_name`) use it always.
    pub naming: Naming,
    /// The namespace of SWE-bench's derived names.
    pub swebench_namespace: String,
    /// Seconds a request may take before it is retried or failed.
    pub timeout_secs: u64,
}

/// A prefix rewrite of image references.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rewrite {
    /// The prefix a reference must start with, e.g. `docker.io/swebench/`.
    pub from: String,
    /// What replaces it.
    pub to: String,
}

/// How tasks without an image field get one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Naming {
    /// No image: such tasks use base checkouts.
    #[default]
    None,
    /// SWE-bench's instance-id naming scheme.
    Swebench,
}

impl Default for ImagesConfig {
    fn default() -> Self {
        Self {
            store: None,
            mirrors: BTreeMap::new(),
            rewrites: Vec::new(),
            insecure: Vec::new(),
            ca_cert: None,
            docker_config: None,
            auth: BTreeMap::new(),
            platform: None,
            naming: Naming::None,
            swebench_namespace: "swebench".into(),
            timeout_secs: 300,
        }
    }
}

impl ImagesConfig {
    /// The store directory: the configured one, else `images/` under `cache_root`.
    pub fn store_dir(&self, cache_root: &std::path::Path) -> PathBuf {
        self.store
            .clone()
            .unwrap_or_else(|| cache_root.join("images"))
    }

    /// `text` with the first matching rewrite applied, parsed.
    pub fn resolve(&self, text: &str) -> Result<Reference, ImageError> {
        let normalized = Reference::parse(text)?.to_string();
        for rewrite in &self.rewrites {
            for candidate in [text, normalized.as_str()] {
                if let Some(rest) = candidate.strip_prefix(&rewrite.from) {
                    return Reference::parse(&format!("{}{rest}", rewrite.to));
                }
            }
        }
        Reference::parse(&normalized)
    }

    /// The registries to try for `reference`, mirrors first.
    pub fn sources(&self, reference: &Reference) -> Vec<Reference> {
        let mut sources: Vec<Reference> = self
            .mirrors
            .get(&reference.registry)
            .into_iter()
            .flatten()
            .map(|mirror| reference.with_registry(mirror))
            .collect();
        sources.push(reference.clone());
        sources
    }

    /// Whether `registry` is reached over plain HTTP: listed as insecure, or on loopback.
    pub fn is_plain_http(&self, registry: &str) -> bool {
        if self.insecure.iter().any(|entry| entry == registry) {
            return true;
        }
        let host = registry
            .rsplit_once(':')
            .map(|(host, _)| host)
            .unwrap_or(registry);
        matches!(host, "localhost" | "127.0.0.1" | "[::1]") || host.starts_with("127.")
    }

    /// The platform pulled: `(os, architecture)` in OCI's words.
    pub fn platform(&self) -> Result<(String, String), ImageError> {
        match &self.platform {
            Some(text) => match text.split_once('/') {
                Some((os, arch)) if !os.is_empty() && !arch.is_empty() => {
                    Ok((os.to_owned(), arch.to_owned()))
                }
                _ => Err(ImageError::Config(format!(
                    "platform \"{text}\" is not `os/architecture` (e.g. linux/amd64)"
                ))),
            },
            None => Ok(("linux".into(), host_architecture().into())),
        }
    }

    /// The image a task names, or the derived name under [`Naming::Swebench`].
    ///
    /// A name that is SWE-bench's *local* build name for the task's own instance,
    /// `sweb.eval.<arch>.<instance_id>` (optionally `:latest`; no registry or namespace), is
    /// taken as naming no image: SWE-agent's batch rows (SWE-bench Multilingual's, for one)
    /// carry it as `image_name`, the name SWE-bench's harness gives the image it builds
    /// locally from the row's spec, which no registry serves. Such a task gets what a task
    /// without an image gets: SWE-bench's published image under [`Naming::Swebench`], else
    /// a base checkout with the environment built from its recipe.
    pub fn image_for(&self, named: Option<&str>, instance_id: &str) -> Option<String> {
        let named = named.filter(|name| !is_swebench_local_name(name, instance_id));
        named.map(str::to_owned).or_else(|| match self.naming {
            Naming::None => None,
            Naming::Swebench => Some(reference::swebench_image_name(
                &self.swebench_namespace,
                swebench_arch(),
                instance_id,
            )),
        })
    }
}

/// Whether `name` is SWE-bench's local image name for `instance_id`:
/// `sweb.eval.<arch>.<instance_id>[:latest]`, the architecture one word (`x86_64`, `arm64`).
fn is_swebench_local_name(name: &str, instance_id: &str) -> bool {
    let name = name.strip_suffix(":latest").unwrap_or(name);
    let Some(rest) = name.strip_prefix("sweb.eval.") else {
        return false;
    };
    rest.split_once('.').is_some_and(|(arch, id)| {
        !arch.is_empty()
            && arch.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && id == instance_id
    })
}

/// This machine's architecture in OCI's words.
pub fn host_architecture() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        "powerpc64" => "ppc64le",
        other => other,
    }
}

/// This machine's architecture in SWE-bench's image names.
fn swebench_arch() -> &'static str {
    match std::env::consts::ARCH {
        "aarch64" => "arm64",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swebench_local_names_of_the_rows_own_instance_name_no_image() {
        let id = "jqlang__jq-2728";
        let none = ImagesConfig::default();
        // SWE-agent's batch rows: SWE-bench's local build name of the row's own instance.
        for name in [
            "sweb.eval.x86_64.jqlang__jq-2728",
            "sweb.eval.arm64.jqlang__jq-2728:latest",
        ] {
            assert_eq!(none.image_for(Some(name), id), None, "{name}");
        }
        let swebench = ImagesConfig {
            naming: Naming::Swebench,
            ..ImagesConfig::default()
        };
        assert_eq!(
            swebench.image_for(Some("sweb.eval.x86_64.jqlang__jq-2728"), id),
            Some(reference::swebench_image_name(
                &swebench.swebench_namespace,
                swebench_arch(),
                id
            ))
        );
        // Any other name is an image to pull: another instance's, a namespaced or tagged one.
        for name in [
            "sweb.eval.x86_64.jqlang__jq-2750",
            "swebench/sweb.eval.x86_64.jqlang_1776_jq-2728",
            "sweb.eval.x86_64.jqlang__jq-2728:v2",
            "sweb.env.x86_64.jqlang__jq-2728",
        ] {
            assert_eq!(none.image_for(Some(name), id).as_deref(), Some(name));
        }
        assert_eq!(none.image_for(None, id), None);
    }
}
