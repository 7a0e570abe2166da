//! The userland is fixed, not the host's: with `sandbox.userland = "base"` a sandbox's tools
//! and their versions are its base root's, whatever the host has.
//!
//! Two real base roots, built by swerve's own builder (debootstrap from Debian's mirror):
//! Debian bookworm with `ed`, and Debian trixie without it (a newer coreutils). The same
//! commands give each root's answer: the issue's `ed FILE <<EOF` edit (return code 127 and
//! the file unchanged where the root lacks `ed`) and `ls --version`, against the versions
//! each root's dpkg database records; with the host's userland they give the host's answer.
//!
//! The roots are built once into `$SWERVE_TEST_USERLANDS` (default
//! `/var/cache/swerve-test-userlands`) and reused by later runs, like the test images; a
//! cold build takes a minute or two per root and needs root. Without root and without
//! built roots the test is skipped with a message.

use std::path::{Path, PathBuf};
use std::time::Duration;

use swerve_sandbox::{BaseUserland, SandboxConfig, Userland, Workspace};

use crate::common::{Fixture, in_image, isolated, sh};

/// The command: insert a line with `ed`, then show the file.
const ED_EDIT: &str =
    "ed -s a.txt <<'EOF'\n1a\ninserted by ed\n.\nw\nq\nEOF\necho \"ed=$?\"; cat a.txt";

fn userlands_dir() -> PathBuf {
    std::env::var_os("SWERVE_TEST_USERLANDS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/cache/swerve-test-userlands"))
}

fn with_ed() -> BaseUserland {
    BaseUserland {
        suite: "bookworm".into(),
        packages: vec!["ed".into()],
        ..BaseUserland::default()
    }
}

fn without_ed() -> BaseUserland {
    BaseUserland {
        suite: "trixie".into(),
        packages: Vec::new(),
        ..BaseUserland::default()
    }
}

/// A fixture whose cache keeps its base roots in the shared test directory.
fn fixture() -> Option<Fixture> {
    let fixture = Fixture::new();
    let shared = userlands_dir();
    let root = nix::unistd::Uid::effective().is_root();
    let built = [with_ed(), without_ed()]
        .iter()
        .all(|definition| shared.join(format!("{}.ready", definition.key())).exists());
    if !root && !built {
        eprintln!(
            "skipped: the test base roots are not built in {} and building them needs root",
            shared.display()
        );
        return None;
    }
    std::fs::create_dir_all(&shared).unwrap();
    std::os::unix::fs::symlink(&shared, fixture.cache.root().join("userlands")).unwrap();
    Some(fixture)
}

fn workspace(fixture: &Fixture, userland: Userland, base: BaseUserland) -> Workspace {
    fixture.workspace(SandboxConfig {
        userland,
        base_userland: base,
        ..isolated()
    })
}

fn run(workspace: &Workspace, command: &str) -> (i32, String) {
    let outcome = workspace
        .shell()
        .run(command, Duration::from_secs(60))
        .unwrap();
    (
        outcome.exit_code.unwrap_or(-1),
        format!("{}{}", outcome.stdout_text(), outcome.stderr_text()),
    )
}

/// The upstream version of `package` in the dpkg database under `root` (`9.1-1` → `9.1`).
fn upstream_version(root: &Path, package: &str) -> String {
    let status = std::fs::read_to_string(root.join("var/lib/dpkg/status")).unwrap();
    let stanza = status
        .split("\n\n")
        .find(|stanza| {
            stanza
                .lines()
                .any(|line| line == format!("Package: {package}"))
        })
        .unwrap_or_else(|| panic!("{package} is not installed in {}", root.display()));
    let version = stanza
        .lines()
        .find_map(|line| line.strip_prefix("Version: "))
        .unwrap();
    version.split('-').next().unwrap().to_owned()
}

#[test]
fn commands_see_the_base_roots_tools_not_the_hosts() {
    if in_image() {
        return; // An image brings its own userland; base roots are for recipe tasks.
    }
    let Some(fixture) = fixture() else {
        return;
    };
    let ed_root = fixture.cache.base_root(&with_ed()).unwrap().path;
    let plain_root = fixture.cache.base_root(&without_ed()).unwrap().path;
    let ls_version = |root: &Path| upstream_version(root, "coreutils");
    assert_ne!(
        ls_version(&ed_root),
        ls_version(&plain_root),
        "the two roots must differ in coreutils for the version check to show anything"
    );

    // The base lacks `ed`: return code 127, the file unchanged.
    let plain = workspace(&fixture, Userland::Base, without_ed());
    let (_, output) = run(&plain, ED_EDIT);
    assert!(output.contains("ed: not found"), "{output}");
    assert!(output.contains("ed=127"), "{output}");
    assert!(!output.contains("inserted by ed"), "{output}");
    let (code, output) = run(&plain, "ls --version | head -1");
    assert_eq!(code, 0, "{output}");
    assert_eq!(
        output.trim(),
        format!("ls (GNU coreutils) {}", ls_version(&plain_root))
    );
    // Its `/etc` is the root's, not the host's.
    let (_, output) = run(
        &plain,
        ". /etc/os-release; echo $VERSION_CODENAME; cat /etc/hostname",
    );
    assert_eq!(output, "trixie\nswerve-sandbox\n");

    // The base has `ed`: the edit happens.
    let edited = workspace(&fixture, Userland::Base, with_ed());
    let (_, output) = run(&edited, ED_EDIT);
    assert!(
        output.starts_with("ed=0\none\ninserted by ed\ntwo\n"),
        "{output}"
    );
    let (_, output) = run(&edited, "ls --version | head -1");
    assert_eq!(
        output.trim(),
        format!("ls (GNU coreutils) {}", ls_version(&ed_root))
    );

    // The host's userland answers as the host does.
    let host = workspace(&fixture, Userland::Host, without_ed());
    let host_has_ed = sh(
        fixture.dir.path(),
        "command -v ed >/dev/null && echo yes || echo no",
    );
    let (_, output) = run(&host, ED_EDIT);
    let expected = if host_has_ed.trim() == "yes" {
        "ed=0"
    } else {
        "ed=127"
    };
    assert!(output.contains(expected), "{output}");
    let host_ls = sh(fixture.dir.path(), "ls --version | head -1");
    let (_, output) = run(&host, "ls --version | head -1");
    assert_eq!(output.trim(), host_ls.trim());
}

#[test]
fn bad_base_definitions_are_refused_before_any_build() {
    let fixture = Fixture::new();
    let error = fixture
        .cache
        .base_root(&BaseUserland {
            packages: vec!["ed; rm -rf /".into()],
            ..BaseUserland::default()
        })
        .unwrap_err();
    assert!(
        error.to_string().contains(
            "sandbox.base_userland.packages: \"ed; rm -rf /\" is not a Debian package name"
        ),
        "{error}"
    );
    let error = fixture
        .cache
        .base_root(&BaseUserland {
            mirror: "file:///etc".into(),
            ..BaseUserland::default()
        })
        .unwrap_err();
    assert!(
        error.to_string().contains("sandbox.base_userland.mirror"),
        "{error}"
    );
}

#[test]
fn the_key_covers_suite_and_packages_not_their_order_or_the_mirror() {
    let base = BaseUserland::default();
    let mut reordered = base.clone();
    reordered.packages.reverse();
    reordered.mirror = "http://ftp.de.debian.org/debian".into();
    assert_eq!(base.key(), reordered.key());
    assert_ne!(base.key(), with_ed().key());
    assert_ne!(
        with_ed().key(),
        BaseUserland {
            suite: "trixie".into(),
            ..with_ed()
        }
        .key()
    );
}
