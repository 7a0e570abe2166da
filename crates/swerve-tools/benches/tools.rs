//! Native tool latency on a large generated tree (≈5,000 files), each beside its anchor.
//!
//! Anchors: R2E-Gym runs each tool as a Python script per call (`file_editor view …` inside the
//! container), so its floor is a Python interpreter start plus the same work; that floor is
//! measured here with an equivalent minimal script (no container, so the real cost is higher
//! still). For search the anchor is `grep -rn` over the same tree.
//! Run with `cargo bench -p swerve-tools --bench tools`.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use swerve_core::{ExecOutcome, Shell, ToolCall};
use swerve_testing::bench::{Report, time_n};
use swerve_tools::{ToolConfig, Toolbox, WorkspaceFs};

/// The benchmarked calls never run commands.
struct NoShell;

impl Shell for NoShell {
    fn run(&self, _: &str, _: Duration) -> std::io::Result<ExecOutcome> {
        Err(std::io::Error::other("no shell in this benchmark"))
    }
}

const VIEW_SCRIPT: &str = r#"
import sys
path, start, end = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
lines = open(path).read().split("\n")
print("Here's the result of running `cat -n` on " + path + ":")
print("\n".join(f"{i:6}\t{line}" for i, line in enumerate(lines[start - 1:end], start)))
"#;

const REPLACE_SCRIPT: &str = r#"
import sys
path, old, new = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(path).read()
assert text.count(old) == 1
open(path, "w").write(text.replace(old, new))
print("The file " + path + " has been edited.")
"#;

fn main() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("tree");
    let files = generate_tree(&root, 5000);
    eprintln!("tree: {files} files");
    let target = root.join("pkg25/module_2500.py");
    let sandbox_target = "/testbed/pkg25/module_2500.py";
    let mut toolbox = Toolbox::new(
        WorkspaceFs::new(&root),
        Arc::new(NoShell),
        ToolConfig::default(),
    );
    let mut report = Report::default();
    let n = 500;

    let view = ToolCall::new("file_editor")
        .arg("command", "view")
        .arg("path", sandbox_target)
        .arg("view_range", json!([100, 140]));
    let native_view = time_n(n, || assert!(!toolbox.call(&view).is_error));
    let python_view = time_n(50, || {
        python(VIEW_SCRIPT, &[target.to_str().unwrap(), "100", "140"])
    });
    report.row(
        "file_editor view (41 lines of a 300-line file)",
        "swerve native",
        &native_view,
        None,
    );
    report.row(
        "file_editor view (41 lines of a 300-line file)",
        "python3 script per call (R2E-Gym floor, anchor)",
        &python_view,
        Some(&native_view),
    );

    let original = std::fs::read(&target).unwrap();
    let mut flip = false;
    let native_replace = time_n(n, || {
        let (old, new) = if flip {
            ("value_2500_100 + 2", "value_2500_100 + 1")
        } else {
            ("value_2500_100 + 1", "value_2500_100 + 2")
        };
        flip = !flip;
        let call = ToolCall::new("file_editor")
            .arg("command", "str_replace")
            .arg("path", sandbox_target)
            .arg("old_str", old)
            .arg("new_str", new);
        let result = toolbox.call(&call);
        assert!(!result.is_error, "{}", result.observation);
    });
    std::fs::write(&target, &original).unwrap();
    let mut flip = false;
    let python_replace = time_n(50, || {
        let (old, new) = if flip {
            ("value_2500_100 + 2", "value_2500_100 + 1")
        } else {
            ("value_2500_100 + 1", "value_2500_100 + 2")
        };
        flip = !flip;
        python(REPLACE_SCRIPT, &[target.to_str().unwrap(), old, new]);
    });
    report.row(
        "file_editor str_replace (300-line file)",
        "swerve native",
        &native_replace,
        None,
    );
    report.row(
        "file_editor str_replace (300-line file)",
        "python3 script per call (R2E-Gym floor, anchor)",
        &python_replace,
        Some(&native_replace),
    );

    let search = ToolCall::new("search")
        .arg("search_term", "def function_4242")
        .arg("path", "/testbed");
    let native_search = time_n(30, || assert!(!toolbox.call(&search).is_error));
    let grep = time_n(30, || {
        let output = Command::new("grep")
            .args(["-rn", "--include=*.py", "def function_4242", "."])
            .current_dir(&root)
            .output()
            .unwrap();
        assert!(output.status.success());
    });
    report.row(
        &format!("search literal over the tree ({files} files)"),
        "swerve native (.gitignore-aware walk)",
        &native_search,
        None,
    );
    report.row(
        &format!("search literal over the tree ({files} files)"),
        "`grep -rn --include=*.py` (anchor)",
        &grep,
        Some(&native_search),
    );
    report.print();
}

/// The real interpreter behind `python3` (not a version-manager shim, which would add its own start-up).
fn python_executable() -> String {
    static EXECUTABLE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    EXECUTABLE
        .get_or_init(|| {
            let output = Command::new("python3")
                .args(["-c", "import sys; print(sys.executable)"])
                .output()
                .unwrap();
            String::from_utf8(output.stdout).unwrap().trim().to_owned()
        })
        .clone()
}

fn python(script: &str, args: &[&str]) {
    let status = Command::new(python_executable())
        .arg("-c")
        .arg(script)
        .args(args)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
}

/// Writes `count` Python files of 300 lines into 100-file packages; returns the count.
fn generate_tree(root: &Path, count: usize) -> usize {
    for index in 0..count {
        let dir = root.join(format!("pkg{}", index / 100));
        std::fs::create_dir_all(&dir).unwrap();
        let body: String = (0..150)
            .map(|line| {
                format!(
                    "def function_{index}_{line}(x):\n    return x + value_{index}_{line} + 1\n"
                )
            })
            .collect();
        let body = body.replacen(
            &format!("def function_{index}_0("),
            &format!("def function_{index}("),
            1,
        );
        std::fs::write(dir.join(format!("module_{index}.py")), body).unwrap();
    }
    count
}
