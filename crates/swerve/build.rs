//! Names the build in `swerve --version`: the package version, then the git commit the binary
//! was built from (`git describe --tags --always`), when built from a git checkout.
//! `SWERVE_BUILD_VERSION` in the environment overrides it (the release script sets it).

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=SWERVE_BUILD_VERSION");
    let package = std::env::var("CARGO_PKG_VERSION").expect("cargo sets CARGO_PKG_VERSION");
    let version = match std::env::var("SWERVE_BUILD_VERSION") {
        Ok(given) if !given.is_empty() => given,
        _ => match git(&["describe", "--tags", "--always"]) {
            Some(described) => {
                watch_head();
                format!("{package} ({described})")
            }
            None => package,
        },
    };
    println!("cargo:rustc-env=SWERVE_VERSION={version}");
}

/// A git command's trimmed output in this package's directory, or `None` outside a checkout
/// (a source tarball) or without git.
fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    (output.status.success() && !text.trim().is_empty()).then(|| text.trim().to_owned())
}

/// Rebuilds when the checked-out commit changes: `HEAD`, the branch it names, and
/// `packed-refs` (where a branch's commit may live instead).
fn watch_head() {
    for name in ["HEAD", "packed-refs"] {
        if let Some(path) = git(&["rev-parse", "--git-path", name]) {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"])
        && let Some(path) = git(&["rev-parse", "--git-path", &branch])
        && Path::new(&path).exists()
    {
        println!("cargo:rerun-if-changed={path}");
    }
}
