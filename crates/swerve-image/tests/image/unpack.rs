//! Layer unpacking on crafted layers: whiteouts, opaque directories, hard links, devices,
//! set-user-id bits, paths leaving the layer, zstd, gzip, diff ids and truncation.

use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::Path;

use swerve_image::manifest::Compression;
use swerve_image::unpack::unpack_layer;
use swerve_image::{IdMapping, ImageError};

fn ids() -> IdMapping {
    IdMapping::for_sandbox(&swerve_sandbox::SandboxConfig::default()).unwrap()
}

fn entry(
    builder: &mut tar::Builder<Vec<u8>>,
    kind: tar::EntryType,
    path: &str,
    data: &[u8],
    mode: u32,
    link: Option<&str>,
) {
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(kind);
    header.set_size(data.len() as u64);
    header.set_mode(mode);
    header.set_uid(1000);
    header.set_gid(1000);
    if let Some(link) = link {
        header.set_link_name(link).unwrap();
    }
    header.set_path(path).unwrap();
    header.set_cksum();
    builder.append(&header, data).unwrap();
}

fn layer() -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    entry(&mut b, tar::EntryType::Directory, "etc/", b"", 0o755, None);
    entry(
        &mut b,
        tar::EntryType::Regular,
        "etc/app.conf",
        b"x=1\n",
        0o644,
        None,
    );
    entry(
        &mut b,
        tar::EntryType::Regular,
        "usr/bin/tool",
        b"#!/bin/sh\n",
        0o4755,
        None,
    );
    entry(
        &mut b,
        tar::EntryType::Link,
        "usr/bin/tool-link",
        b"",
        0o755,
        Some("usr/bin/tool"),
    );
    entry(
        &mut b,
        tar::EntryType::Symlink,
        "usr/bin/sh-link",
        b"",
        0o777,
        Some("/bin/sh"),
    );
    entry(&mut b, tar::EntryType::Char, "dev/evil", b"", 0o666, None);
    entry(
        &mut b,
        tar::EntryType::Regular,
        "opt/old/.wh..wh..opq",
        b"",
        0o644,
        None,
    );
    entry(
        &mut b,
        tar::EntryType::Regular,
        "var/.wh.cache",
        b"",
        0o644,
        None,
    );
    b.into_inner().unwrap()
}

fn unpack(
    bytes: &[u8],
    compression: Compression,
    diff_id: Option<&str>,
) -> (tempfile::TempDir, Result<(), ImageError>) {
    let dir = tempfile::tempdir().unwrap();
    let blob = dir.path().join("blob");
    std::fs::write(&blob, bytes).unwrap();
    let dest = dir.path().join("layer");
    std::fs::create_dir(&dest).unwrap();
    let result = unpack_layer(&blob, compression, diff_id, &dest, ids(), "test");
    (dir, result)
}

#[test]
fn whiteouts_links_devices_and_owners() {
    let bytes = layer();
    let diff_id = swerve_image::blob::digest_of(&bytes);
    let (dir, result) = unpack(&bytes, Compression::None, Some(&diff_id));
    result.unwrap();
    let root = dir.path().join("layer");
    let whiteout = std::fs::symlink_metadata(root.join("var/cache")).unwrap();
    assert!(whiteout.file_type().is_char_device() && whiteout.rdev() == 0);
    assert!(!root.join("var/.wh.cache").exists());
    assert!(!root.join("opt/old/.wh..wh..opq").exists());
    assert_eq!(
        xattr(&root.join("opt/old"), "user.overlay.opaque"),
        Some(b"y".to_vec())
    );
    assert!(!root.join("dev/evil").exists(), "a device node was created");
    let tool = std::fs::metadata(root.join("usr/bin/tool")).unwrap();
    assert_eq!(
        tool.permissions().mode() & 0o7777,
        0o755,
        "set-user-id kept"
    );
    let link = std::fs::metadata(root.join("usr/bin/tool-link")).unwrap();
    assert_eq!((link.ino(), link.nlink()), (tool.ino(), 2));
    assert_eq!(
        std::fs::read_link(root.join("usr/bin/sh-link")).unwrap(),
        Path::new("/bin/sh")
    );
    let map = ids();
    if nix::unistd::Uid::effective().is_root() && map.count > 1000 {
        assert_eq!(tool.uid(), map.uid + 1000, "owner not mapped");
        // Directories the layer leaves implicit belong to the sandbox's root.
        assert_eq!(std::fs::metadata(root.join("usr")).unwrap().uid(), map.uid);
    }
}

#[test]
fn compressed_layers_unpack_and_bad_ones_are_named() {
    let bytes = layer();
    let diff_id = swerve_image::blob::digest_of(&bytes);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &bytes).unwrap();
    let gz = gz.finish().unwrap();
    let zst =
        ruzstd::encoding::compress_to_vec(&bytes[..], ruzstd::encoding::CompressionLevel::Fastest);
    for (blob, compression) in [
        (&gz, Compression::Gzip),
        (&gz, Compression::Detect),
        (&zst, Compression::Zstd),
        (&zst, Compression::Detect),
    ] {
        let (_dir, result) = unpack(blob, compression, Some(&diff_id));
        result.unwrap_or_else(|error| panic!("{compression:?}: {error}"));
    }
    let (_dir, result) = unpack(
        &gz,
        Compression::Gzip,
        Some(&format!("sha256:{}", "0".repeat(64))),
    );
    assert!(
        matches!(result, Err(ImageError::DigestMismatch { .. })),
        "{result:?}"
    );
    let (_dir, result) = unpack(&gz[..gz.len() / 2], Compression::Gzip, Some(&diff_id));
    assert!(
        matches!(result, Err(ImageError::BadLayer { .. })),
        "{result:?}"
    );
}

#[test]
fn entries_leaving_the_layer_are_refused() {
    for (kind, path, link) in [
        (tar::EntryType::Regular, "../escape", None),
        (tar::EntryType::Link, "x", Some("../../etc/passwd")),
    ] {
        let mut b = tar::Builder::new(Vec::new());
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(kind);
        header.set_size(0);
        header.set_mode(0o644);
        // Written raw: the tar crate refuses `..` in set_path.
        let name = header.as_old_mut().name.as_mut();
        name[..path.len()].copy_from_slice(path.as_bytes());
        if let Some(link) = link {
            let field = header.as_old_mut().linkname.as_mut();
            field[..link.len()].copy_from_slice(link.as_bytes());
        }
        header.set_cksum();
        b.append(&header, &b""[..]).unwrap();
        let bytes = b.into_inner().unwrap();
        let (dir, result) = unpack(&bytes, Compression::None, None);
        assert!(
            matches!(result, Err(ImageError::BadLayer { .. })),
            "{path}: {result:?}"
        );
        assert!(!dir.path().join("escape").exists());
    }
    // A symlink followed by a path through it.
    let mut b = tar::Builder::new(Vec::new());
    entry(
        &mut b,
        tar::EntryType::Symlink,
        "lnk",
        b"",
        0o777,
        Some("/tmp"),
    );
    entry(
        &mut b,
        tar::EntryType::Regular,
        "lnk/planted",
        b"x",
        0o644,
        None,
    );
    let (_dir, result) = unpack(&b.into_inner().unwrap(), Compression::None, None);
    assert!(
        matches!(result, Err(ImageError::BadLayer { .. })),
        "{result:?}"
    );
    assert!(!Path::new("/tmp/planted").exists());
}

fn xattr(path: &Path, name: &str) -> Option<Vec<u8>> {
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
