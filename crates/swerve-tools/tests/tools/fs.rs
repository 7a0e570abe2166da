//! `WorkspaceFs`: path mapping, component-wise symlink resolution, magic-link host roots.

use std::os::unix::fs::symlink;
use std::path::PathBuf;
use std::sync::Arc;

use swerve_core::ToolCall;
use swerve_testing::HostShell;
use swerve_tools::{EntryKind, FsError, ToolConfig, Toolbox, WorkspaceFs};

#[test]
fn maps_sandbox_paths_to_host_paths_and_back() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), "").unwrap();
    let fs = WorkspaceFs::new(dir.path());
    assert_eq!(fs.sandbox_root(), "/testbed");
    assert_eq!(fs.host_root(), dir.path());

    let file = fs.resolve("/testbed/src/../src/./lib.rs").unwrap();
    assert_eq!(file.display, "/testbed/src/../src/lib.rs");
    assert_eq!(file.sandbox, "/testbed/src/lib.rs");
    assert_eq!(file.host, dir.path().join("src/lib.rs"));
    assert_eq!(file.kind, EntryKind::File);
    assert_eq!(
        fs.to_sandbox(&file.host).as_deref(),
        Some("/testbed/src/lib.rs")
    );
    assert_eq!(fs.to_sandbox(dir.path()).as_deref(), Some("/testbed"));
    assert_eq!(fs.to_sandbox(&PathBuf::from("/elsewhere")), None);

    assert_eq!(fs.resolve("src").unwrap().kind, EntryKind::Dir);
    assert_eq!(fs.resolve("").unwrap().sandbox, "/testbed");
    let missing = fs.resolve("/testbed/new/dir/file.py").unwrap();
    assert_eq!(missing.kind, EntryKind::Missing);
    assert_eq!(missing.host, dir.path().join("new/dir/file.py"));
    assert_eq!(
        fs.resolve("/testbed/src/lib.rs/x").unwrap().kind,
        EntryKind::Missing
    );
}

#[test]
fn outside_paths_and_escaping_links_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let fs = WorkspaceFs::new(dir.path());
    for path in [
        "/etc/passwd",
        "/testbedx/a",
        "/",
        "..",
        "/testbed/a/../../x",
    ] {
        assert!(
            matches!(fs.resolve(path), Err(FsError::Outside { .. })),
            "{path}"
        );
    }
    symlink("/testbed/../etc", dir.path().join("sneaky")).unwrap();
    symlink("loop_b", dir.path().join("loop_a")).unwrap();
    symlink("loop_a", dir.path().join("loop_b")).unwrap();
    let err = fs.resolve("/testbed/sneaky/passwd").unwrap_err();
    assert_eq!(
        err.to_string(),
        "The path '/testbed/sneaky/passwd' leads outside the repository /testbed: the symbolic link '/testbed/sneaky' points to '/testbed/../etc'."
    );
    assert_eq!(
        fs.resolve("/testbed/loop_a").unwrap_err().to_string(),
        "The path '/testbed/loop_a' has too many levels of symbolic links."
    );
}

#[test]
fn custom_sandbox_roots() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("x.txt"), "1").unwrap();
    symlink("/work/repo/x.txt", dir.path().join("link")).unwrap();
    let fs = WorkspaceFs::with_sandbox_root(dir.path(), "/work/repo/");
    assert_eq!(fs.sandbox_root(), "/work/repo");
    assert_eq!(
        fs.resolve("/work/repo/link").unwrap().sandbox,
        "/work/repo/x.txt"
    );
    assert_eq!(
        fs.resolve("/testbed/x.txt").unwrap_err().to_string(),
        "The path '/testbed/x.txt' is outside the repository /work/repo. Only paths under /work/repo can be used."
    );
}

/// `/proc/self/root/...` is a magic link like the `/proc/<pid>/root/testbed` host roots
/// swerve uses; nothing may canonicalize it away.
#[test]
fn magic_link_host_roots_work_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let host_root = PathBuf::from(format!("/proc/self/root{}", dir.path().display()));
    std::fs::create_dir_all(dir.path().join("pkg")).unwrap();
    std::fs::write(dir.path().join("pkg/mod.py"), "value = 1\n").unwrap();
    symlink("/testbed/pkg", dir.path().join("alias")).unwrap();
    let fs = WorkspaceFs::new(&host_root);
    let resolved = fs.resolve("/testbed/alias/mod.py").unwrap();
    assert_eq!(resolved.host, host_root.join("pkg/mod.py"));
    assert_eq!(
        fs.to_sandbox(&resolved.host).as_deref(),
        Some("/testbed/pkg/mod.py")
    );

    let shell = Arc::new(HostShell::new(dir.path()));
    let mut toolbox = Toolbox::new(fs, shell, ToolConfig::default());
    let edit = ToolCall::new("file_editor")
        .arg("command", "str_replace")
        .arg("path", "/testbed/alias/mod.py")
        .arg("old_str", "1")
        .arg("new_str", "2");
    assert!(!toolbox.call(&edit).is_error);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("pkg/mod.py")).unwrap(),
        "value = 2\n"
    );
    let search = ToolCall::new("search").arg("search_term", "value");
    assert_eq!(
        toolbox.call(&search).output,
        "Found 1 matches for \"value\" in /testbed:\n./pkg/mod.py (1 matches)\nEnd of matches for \"value\" in /testbed\n"
    );
}
