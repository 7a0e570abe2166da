//! Image references (`[registry/]repository[:tag][@digest]`), normalized as Docker does:
//! no registry means Docker Hub, and a one-component repository there is under `library/`.

use std::fmt;

use crate::ImageError;

/// Docker Hub as references name it.
pub const DOCKER_HUB: &str = "docker.io";
/// Docker Hub's API host.
const DOCKER_HUB_API: &str = "registry-1.docker.io";

/// A parsed, normalized image reference.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Reference {
    /// The registry host (and port), e.g. `docker.io`, `ghcr.io`, `127.0.0.1:5000`.
    pub registry: String,
    /// The repository path, e.g. `library/ubuntu`, `swebench/sweb.eval.x86_64.django_1776_django-11099`.
    pub repository: String,
    /// The tag; `latest` when neither tag nor digest is given.
    pub tag: Option<String>,
    /// A pinned manifest digest (`sha256:…`).
    pub digest: Option<String>,
}

impl Reference {
    /// Parses `text`; errors say what is wrong with it.
    pub fn parse(text: &str) -> Result<Self, ImageError> {
        let bad = |why: &str| ImageError::BadReference {
            reference: text.to_owned(),
            why: why.to_owned(),
        };
        let text = text.trim();
        if text.is_empty() {
            return Err(bad("it is empty"));
        }
        let (rest, digest) = match text.split_once('@') {
            Some((rest, digest)) => {
                check_digest(digest).map_err(|why| bad(&why))?;
                (rest, Some(digest.to_owned()))
            }
            None => (text, None),
        };
        let (registry, path) = match rest.split_once('/') {
            Some((first, path))
                if first.contains('.') || first.contains(':') || first == "localhost" =>
            {
                (first.to_owned(), path)
            }
            _ => (DOCKER_HUB.to_owned(), rest),
        };
        let (path, tag) = match path.rsplit_once(':') {
            Some((path, tag)) if !tag.contains('/') => (path, Some(tag.to_owned())),
            _ => (path, None),
        };
        if path.is_empty() {
            return Err(bad("it names no repository"));
        }
        if let Some(tag) = &tag
            && (tag.is_empty()
                || tag.len() > 128
                || !tag
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
        {
            return Err(bad(
                "its tag may hold only letters, digits, `_`, `.` and `-`",
            ));
        }
        let valid_component = |component: &str| {
            !component.is_empty()
                && component.chars().all(|c| {
                    c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '.' | '-')
                })
        };
        if !path.split('/').all(valid_component) {
            return Err(bad(
                "repository components may hold only lowercase letters, digits, `_`, `.` and `-`",
            ));
        }
        let repository = if registry == DOCKER_HUB && !path.contains('/') {
            format!("library/{path}")
        } else {
            path.to_owned()
        };
        let tag = if tag.is_none() && digest.is_none() {
            Some("latest".to_owned())
        } else {
            tag
        };
        Ok(Self {
            registry,
            repository,
            tag,
            digest,
        })
    }

    /// What to ask the registry's manifest endpoint for: the digest when pinned, else the tag.
    pub fn manifest_reference(&self) -> &str {
        self.digest
            .as_deref()
            .or(self.tag.as_deref())
            .unwrap_or("latest")
    }

    /// The host serving the registry API (Docker Hub's API host for `docker.io`).
    pub fn api_host(&self) -> &str {
        if self.registry == DOCKER_HUB {
            DOCKER_HUB_API
        } else {
            &self.registry
        }
    }

    /// The same reference on another registry (and repository prefix): for mirrors.
    pub fn with_registry(&self, registry: &str) -> Self {
        Self {
            registry: registry.to_owned(),
            ..self.clone()
        }
    }

    /// A file-name-safe key for the store's image records.
    pub fn store_key(&self) -> String {
        self.to_string()
            .chars()
            .map(|c| match c {
                '/' => '+',
                ':' => '=',
                '@' => '#',
                c => c,
            })
            .collect()
    }
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.registry, self.repository)?;
        if let Some(tag) = &self.tag {
            write!(f, ":{tag}")?;
        }
        if let Some(digest) = &self.digest {
            write!(f, "@{digest}")?;
        }
        Ok(())
    }
}

/// Checks that `digest` is `sha256:` and 64 lowercase hex digits.
pub fn check_digest(digest: &str) -> Result<&str, String> {
    match digest.split_once(':') {
        Some(("sha256", hex))
            if hex.len() == 64
                && hex
                    .chars()
                    .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c)) =>
        {
            Ok(hex)
        }
        Some((algorithm, _)) if algorithm != "sha256" => Err(format!(
            "digest algorithm `{algorithm}` is not supported (only sha256)"
        )),
        _ => Err(format!(
            "`{digest}` is not a digest (`sha256:` and 64 hex digits)"
        )),
    }
}

/// SWE-bench's image name for an instance id: `swebench/sweb.eval.<arch>.<id>` with `__`
/// written `_1776_` (Docker repositories cannot hold `__`), lowercased, tag `latest`.
pub fn swebench_image_name(namespace: &str, arch: &str, instance_id: &str) -> String {
    let id = instance_id.replace("__", "_1776_").to_lowercase();
    format!("{namespace}/sweb.eval.{arch}.{id}:latest")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_normalized_as_docker_does() {
        let r = Reference::parse("ubuntu").unwrap();
        assert_eq!(r.to_string(), "docker.io/library/ubuntu:latest");
        assert_eq!(r.api_host(), "registry-1.docker.io");
        let r = Reference::parse("127.0.0.1:5000/swerve/swe:v1").unwrap();
        assert_eq!(
            (r.registry.as_str(), r.repository.as_str(), r.tag.as_deref()),
            ("127.0.0.1:5000", "swerve/swe", Some("v1"))
        );
        let digest = format!("sha256:{}", "a".repeat(64));
        let r = Reference::parse(&format!("ghcr.io/a/b@{digest}")).unwrap();
        assert_eq!(r.manifest_reference(), digest);
        assert_eq!(r.tag, None);
        assert!(Reference::parse("Upper/Case").is_err());
        assert!(Reference::parse("a@sha256:zz").is_err());
        assert!(Reference::parse("").is_err());
    }

    #[test]
    fn swebench_names_follow_the_harness() {
        assert_eq!(
            swebench_image_name("swebench", "x86_64", "django__django-11099"),
            "swebench/sweb.eval.x86_64.django_1776_django-11099:latest"
        );
    }
}
