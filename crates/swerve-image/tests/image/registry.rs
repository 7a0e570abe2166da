//! Pulls from a real registry (Debian's `docker-registry` on loopback) of images built by
//! `scripts/test-images.sh`, and the errors of bad input.

use crate::support;

use std::os::unix::fs::FileTypeExt;
use std::sync::atomic::Ordering;

use support::{FakeRegistry, Proxy, Registry, Response, layout};
use swerve_image::{IdMapping, ImageError, ImagesConfig, Store};

fn ids() -> IdMapping {
    IdMapping::for_sandbox(&swerve_sandbox::SandboxConfig::default()).unwrap()
}

fn store(dir: &std::path::Path, config: ImagesConfig) -> Store {
    Store::open(&dir.join("store"), &config).unwrap()
}

#[test]
fn an_image_is_pulled_verified_and_unpacked_with_its_whiteouts() {
    let Some(layout) = layout() else { return };
    let registry = Registry::start(None);
    registry.push(&layout, "swe", "swerve/swe");
    let proxy = Proxy::start(registry.port);
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path(), ImagesConfig::default());
    let image = format!("{}/swerve/swe", proxy.host());
    let record = store.pull_blocking(&image).unwrap();
    assert_eq!(record.reference, format!("{image}:latest"));
    assert_eq!(record.layers.len(), 10);
    assert_eq!(
        record.config.config.working_dir.as_deref(),
        Some("/testbed")
    );
    let fetched = proxy.blob_gets.load(Ordering::SeqCst);
    assert_eq!(fetched, 10 + 1, "every layer and the config, once");
    // A second pull of a stored image fetches nothing.
    store.pull_blocking(&image).unwrap();
    assert_eq!(proxy.blob_gets.load(Ordering::SeqCst), fetched);

    let root = store.root_for(&record, ids()).unwrap();
    assert_eq!(root.layers.len(), 10);
    assert!(
        root.env
            .iter()
            .any(|(name, value)| name == "SWERVE_IMAGE" && value == "swe")
    );
    // Whiteouts became overlayfs whiteouts, the opaque directory is marked.
    let whiteout = |path: &str| {
        root.layers.iter().any(|layer| {
            std::fs::symlink_metadata(layer.join(path)).is_ok_and(|meta| {
                meta.file_type().is_char_device()
                    && std::os::unix::fs::MetadataExt::rdev(&meta) == 0
            })
        })
    };
    assert!(whiteout("opt/junk"), "no whiteout for /opt/junk");
    assert!(whiteout("etc/issue"), "no whiteout for /etc/issue");
    assert!(whiteout("testbed/build"), "no whiteout for /testbed/build");
    let opaque = root.layers.iter().any(|layer| {
        let path = layer.join("etc/swerve");
        path.join("new.txt").is_file() && xattr(&path, "user.overlay.opaque") == Some(b"y".to_vec())
    });
    assert!(opaque, "/etc/swerve is not marked opaque");
    // Owners are the sandbox's: its root owns the repository.
    let repo = root
        .layers
        .iter()
        .map(|l| l.join("testbed/.git"))
        .find(|p| p.is_dir())
        .unwrap();
    let owner = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(&repo).unwrap());
    assert_eq!(owner, ids().uid);
    // Unpacking again reuses the layers.
    assert_eq!(store.root_for(&record, ids()).unwrap().layers, root.layers);
}

fn xattr(path: &std::path::Path, name: &str) -> Option<Vec<u8>> {
    use std::os::unix::ffi::OsStrExt;
    let c_path = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let c_name = std::ffi::CString::new(name).ok()?;
    let mut buffer = vec![0u8; 64];
    // SAFETY: valid strings and a buffer of the given size.
    let n = unsafe {
        libc::lgetxattr(
            c_path.as_ptr(),
            c_name.as_ptr(),
            buffer.as_mut_ptr().cast(),
            buffer.len(),
        )
    };
    (n >= 0).then(|| buffer[..n as usize].to_vec())
}

#[test]
fn concurrent_pulls_fetch_each_layer_once() {
    let Some(layout) = layout() else { return };
    let registry = Registry::start(None);
    registry.push(&layout, "r2e", "swerve/r2e");
    let proxy = Proxy::start(registry.port);
    let dir = tempfile::tempdir().unwrap();
    let image = format!("{}/swerve/r2e", proxy.host());
    let records: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let dir = dir.path();
                let image = image.clone();
                // Separate stores over one directory: as separate processes would be.
                scope.spawn(move || store(dir, ImagesConfig::default()).pull_blocking(&image))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap().unwrap())
            .collect()
    });
    assert!(records.windows(2).all(|pair| pair[0] == pair[1]));
    assert_eq!(
        proxy.blob_gets.load(Ordering::SeqCst),
        records[0].layers.len() + 1,
        "a blob was fetched more than once"
    );
    let partial = std::fs::read_dir(dir.path().join("store/partial"))
        .unwrap()
        .count();
    assert_eq!(partial, 0);
}

#[test]
fn an_interrupted_pull_resumes_where_it_stopped() {
    let Some(layout) = layout() else { return };
    let registry = Registry::start(None);
    registry.push(&layout, "r2e", "swerve/r2e");
    let proxy = Proxy::start(registry.port);
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path(), ImagesConfig::default());
    // The largest layer, half-downloaded by an earlier pull that was killed.
    let largest = std::fs::read_dir(layout.join("blobs/sha256"))
        .unwrap()
        .flatten()
        .max_by_key(|entry| entry.metadata().unwrap().len())
        .unwrap();
    let bytes = std::fs::read(largest.path()).unwrap();
    let hex = largest.file_name().to_string_lossy().into_owned();
    std::fs::write(
        dir.path().join("store/partial").join(&hex),
        &bytes[..bytes.len() / 2],
    )
    .unwrap();
    let record = store
        .pull_blocking(&format!("{}/swerve/r2e", proxy.host()))
        .unwrap();
    assert!(
        record
            .layers
            .iter()
            .any(|layer| layer.digest == format!("sha256:{hex}"))
    );
    assert_eq!(
        proxy.range_gets.load(Ordering::SeqCst),
        1,
        "the layer was not resumed"
    );
    assert_eq!(
        std::fs::read(store.blobs().path(&format!("sha256:{hex}"))).unwrap(),
        bytes
    );
}

#[test]
fn basic_auth_with_docker_config_credentials() {
    let Some(layout) = layout() else { return };
    let registry = Registry::start(Some(("alice", "s3cret")));
    registry.push(&layout, "r2e", "swerve/r2e");
    let dir = tempfile::tempdir().unwrap();
    let image = format!("{}/swerve/r2e", registry.host());
    let error = store(dir.path(), ImagesConfig::default())
        .pull_blocking(&image)
        .unwrap_err();
    assert!(matches!(error, ImageError::AuthFailed { .. }), "{error}");
    assert!(error.to_string().contains("docker login"), "{error}");
    let wrong = ImagesConfig {
        auth: [(registry.host(), "alice:wrong".to_owned())].into(),
        ..ImagesConfig::default()
    };
    let error = store(dir.path(), wrong).pull_blocking(&image).unwrap_err();
    assert!(matches!(error, ImageError::AuthFailed { .. }), "{error}");
    let config_json = dir.path().join("config.json");
    std::fs::write(
        &config_json,
        format!(
            r#"{{"auths":{{"{}":{{"auth":"YWxpY2U6czNjcmV0"}}}}}}"#,
            registry.host()
        ),
    )
    .unwrap();
    let config = ImagesConfig {
        docker_config: Some(config_json),
        ..ImagesConfig::default()
    };
    let record = store(dir.path(), config).pull_blocking(&image).unwrap();
    assert_eq!(record.layers.len(), 2);
}

#[test]
fn unknown_images_and_other_architectures_are_named() {
    let Some(layout) = layout() else { return };
    let registry = Registry::start(None);
    registry.push(&layout, "r2e", "swerve/r2e");
    let dir = tempfile::tempdir().unwrap();
    let error = store(dir.path(), ImagesConfig::default())
        .pull_blocking(&format!("{}/swerve/nope:v1", registry.host()))
        .unwrap_err();
    assert!(matches!(error, ImageError::UnknownImage { .. }), "{error}");
    assert_eq!(error.class(), "unknown_image");
    let arm = ImagesConfig {
        platform: Some("linux/arm64".into()),
        ..ImagesConfig::default()
    };
    let error = store(dir.path(), arm)
        .pull_blocking(&format!("{}/swerve/r2e", registry.host()))
        .unwrap_err();
    assert!(
        matches!(error, ImageError::WrongArchitecture { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("linux/amd64"), "{error}");
    assert!(store(dir.path(), ImagesConfig::default()).list().is_empty());
}

#[test]
fn mirrors_are_tried_first_and_rewrites_applied() {
    let Some(layout) = layout() else { return };
    let registry = Registry::start(None);
    registry.push(&layout, "r2e", "swerve/r2e");
    let dir = tempfile::tempdir().unwrap();
    let config = ImagesConfig {
        rewrites: vec![swerve_image::Rewrite {
            from: "docker.io/swerve/".into(),
            to: "registry.invalid/swerve/".into(),
        }],
        mirrors: [("registry.invalid".to_owned(), vec![registry.host()])].into(),
        ..ImagesConfig::default()
    };
    let record = store(dir.path(), config)
        .pull_blocking("swerve/r2e")
        .unwrap();
    assert_eq!(record.reference, "registry.invalid/swerve/r2e:latest");
    assert!(
        record.source.starts_with(&registry.host()),
        "{}",
        record.source
    );
}

#[test]
fn a_docker_save_archive_and_an_oci_layout_are_imported() {
    let Some(layout) = layout() else { return };
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("r2e.tar");
    let output = std::process::Command::new("skopeo")
        .args(["copy", "--quiet"])
        .arg(format!("oci:{}:r2e", layout.display()))
        .arg(format!(
            "docker-archive:{}:swerve/r2e:latest",
            archive.display()
        ))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let store = store(dir.path(), ImagesConfig::default());
    let saved = store
        .import(&archive, None, "localhost/swerve/r2e-saved")
        .unwrap();
    assert_eq!(saved.layers.len(), 2);
    let from_layout = store
        .import(&layout, Some("r2e"), "localhost/swerve/r2e")
        .unwrap();
    assert_eq!(from_layout.layers.len(), 2);
    assert_eq!(
        saved.config.rootfs.diff_ids,
        from_layout.config.rootfs.diff_ids
    );
    assert_eq!(store.list().len(), 2);
    let error = store
        .import(&layout, Some("nope"), "localhost/x")
        .unwrap_err();
    assert!(error.to_string().contains("no image named nope"), "{error}");
}

/// A registry stand-in serving one image whose layer is `layer` (declared with `digest`,
/// `size` and `media_type`), sending `sent` bytes of it.
fn fake_image(
    layer: &[u8],
    digest: &str,
    size: usize,
    media_type: &str,
    sent: usize,
) -> FakeRegistry {
    let config = serde_json::json!({
        "architecture": "amd64", "os": "linux",
        "config": {}, "rootfs": {"type": "layers", "diff_ids": []}
    })
    .to_string();
    let config_digest = format!("sha256:{}", support::sha256_hex(config.as_bytes()));
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": config_digest, "size": config.len()},
        "layers": [{"mediaType": media_type, "digest": digest, "size": size}]
    })
    .to_string();
    let json = |body: &str, content_type: &str| Response {
        status: 200,
        content_type: content_type.into(),
        body: body.as_bytes().to_vec(),
        length: body.len(),
    };
    FakeRegistry::start(vec![
        (
            "/v2/bad/image/manifests/latest".into(),
            json(&manifest, "application/vnd.oci.image.manifest.v1+json"),
        ),
        (
            format!("/v2/bad/image/blobs/{config_digest}"),
            json(&config, "application/octet-stream"),
        ),
        (
            format!("/v2/bad/image/blobs/{digest}"),
            Response {
                status: 200,
                content_type: "application/octet-stream".into(),
                body: layer[..sent.min(layer.len())].to_vec(),
                length: size,
            },
        ),
    ])
}

fn tiny_layer() -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    let mut header = tar::Header::new_gnu();
    header.set_size(3);
    header.set_mode(0o644);
    header.set_cksum();
    builder
        .append_data(&mut header, "hello.txt", &b"hi\n"[..])
        .unwrap();
    builder.into_inner().unwrap()
}

#[test]
fn a_layer_that_does_not_match_its_digest_is_discarded() {
    let layer = tiny_layer();
    let claimed = format!("sha256:{}", "ab".repeat(32));
    let fake = fake_image(
        &layer,
        &claimed,
        layer.len(),
        "application/vnd.oci.image.layer.v1.tar",
        layer.len(),
    );
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path(), ImagesConfig::default());
    let error = store
        .pull_blocking(&format!("{}/bad/image", fake.host()))
        .unwrap_err();
    assert!(
        matches!(error, ImageError::DigestMismatch { .. }),
        "{error}"
    );
    assert!(!store.blobs().has(&claimed));
    assert_eq!(
        std::fs::read_dir(dir.path().join("store/partial"))
            .unwrap()
            .count(),
        0
    );
    assert!(store.list().is_empty());
}

#[test]
fn a_truncated_layer_is_named_and_kept_only_for_resuming() {
    let layer = tiny_layer();
    let digest = format!("sha256:{}", support::sha256_hex(&layer));
    let fake = fake_image(
        &layer,
        &digest,
        layer.len(),
        "application/vnd.oci.image.layer.v1.tar",
        1000,
    );
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path(), ImagesConfig::default());
    let error = store
        .pull_blocking(&format!("{}/bad/image", fake.host()))
        .unwrap_err();
    assert!(
        matches!(error, ImageError::Truncated { got: 1000, .. }),
        "{error}"
    );
    assert!(!store.blobs().has(&digest), "a truncated blob was stored");
    assert!(store.list().is_empty());
}

#[test]
fn an_unsupported_layer_type_is_named() {
    let layer = tiny_layer();
    let digest = format!("sha256:{}", support::sha256_hex(&layer));
    let fake = fake_image(
        &layer,
        &digest,
        layer.len(),
        "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip",
        layer.len(),
    );
    let dir = tempfile::tempdir().unwrap();
    let error = store(dir.path(), ImagesConfig::default())
        .pull_blocking(&format!("{}/bad/image", fake.host()))
        .unwrap_err();
    assert!(
        matches!(error, ImageError::UnsupportedMediaType { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("foreign"), "{error}");
}

#[test]
fn the_bearer_token_flow_gets_a_token_with_the_credentials() {
    let Some(layout) = layout() else { return };
    let registry = Registry::start(None);
    registry.push(&layout, "r2e", "swerve/r2e");
    let gateway = support::TokenGateway::start(registry.port, "bob", "hunter2");
    let dir = tempfile::tempdir().unwrap();
    let image = format!("{}/swerve/r2e", gateway.host());
    let error = store(dir.path(), ImagesConfig::default())
        .pull_blocking(&image)
        .unwrap_err();
    assert!(matches!(error, ImageError::AuthFailed { .. }), "{error}");
    assert!(error.to_string().contains("token service"), "{error}");
    let config = ImagesConfig {
        auth: [(gateway.host(), "bob:hunter2".to_owned())].into(),
        ..ImagesConfig::default()
    };
    let record = store(dir.path(), config).pull_blocking(&image).unwrap();
    assert_eq!(record.layers.len(), 2);
    // One token per repository, reused for every request of the pull.
    assert_eq!(gateway.tokens_issued.load(Ordering::SeqCst), 1);
}
