//! The task's environment, end to end with real parts: a repository built here whose recipe
//! installs a package from a wheel directory in the repository (no network), a project
//! install and a variable. `swerve env exec` (the way every rollout opens its workspace)
//! sees exactly what grading sees; a task whose tests reach for the network is named
//! `needs_network`, unless its recipe asks for the network fixtures its tests need (a local
//! httpbin from PyPI as `httpbin.org`, the tarpit); `swerve tasks check` certifies a task file
//! with a table and a JSON file.

use crate::common;

use std::path::{Path, PathBuf};

use common::{sh, stdout, succeeded, swerve};
use serde_json::{Value, json};

/// A repository with `wheels/helper-1.0-py3-none-any.whl` (pure Python, made here), a buggy
/// `app.py`, and a base commit; returns (its directory, the base commit).
fn repository(dir: &Path) -> (PathBuf, String) {
    let repo = dir.join("repos/t/helper");
    std::fs::create_dir_all(repo.join("wheels")).unwrap();
    sh(
        &repo,
        r#"python3 - <<'EOF'
import zipfile
files = {
    "helper/__init__.py": "X = 42\n",
    "helper-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: helper\nVersion: 1.0\n",
    "helper-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: swerve-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = "".join(f"{name},,\n" for name in files) + "helper-1.0.dist-info/RECORD,,\n"
with zipfile.ZipFile("wheels/helper-1.0-py3-none-any.whl", "w") as wheel:
    for name, text in files.items():
        wheel.writestr(name, text)
    wheel.writestr("helper-1.0.dist-info/RECORD", record)
EOF"#,
    );
    std::fs::write(
        repo.join("app.py"),
        "import helper\n\ndef value():\n    return helper.X - 1\n",
    )
    .unwrap();
    std::fs::write(repo.join(".gitignore"), "installed.txt\n").unwrap();
    let commit = sh(
        &repo,
        "git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm base && git rev-parse HEAD",
    );
    (repo, commit.trim().to_owned())
}

/// A unified diff creating `path` with `text`.
fn new_file(path: &str, text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut diff = format!(
        "diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{} @@\n",
        lines.len()
    );
    for line in lines {
        diff.push_str(&format!("+{line}\n"));
    }
    diff
}

const GOLD: &str = "diff --git a/app.py b/app.py\n--- a/app.py\n+++ b/app.py\n@@ -1,4 +1,4 @@\n import helper\n \n def value():\n-    return helper.X - 1\n+    return helper.X\n";

/// Two tasks on the repository: `t__helper-1` (its test imports the recipe's package and
/// reads the recipe's variable) and `t__helper-net` (its test downloads a file).
fn task_file(dir: &Path, commit: &str) -> PathBuf {
    let test = "import os\nimport unittest\n\nimport app\n\n\nclass T(unittest.TestCase):\n    def test_value(self):\n        self.assertEqual(app.value(), 42)\n        self.assertEqual(os.environ['HELPER_MODE'], 'on')\n        self.assertTrue(os.path.exists('installed.txt'))\n";
    let net = "import unittest\nimport urllib.request\n\n\nclass N(unittest.TestCase):\n    def test_fetch(self):\n        urllib.request.urlopen('http://example.com/data.bin', timeout=10).read()\n";
    let row = |id: &str, test_patch: String, f2p: &str| {
        json!({
            "repo": "t/helper", "instance_id": id, "base_commit": commit, "version": "1.0",
            "patch": GOLD, "test_patch": test_patch, "problem_statement": "value() is off by one",
            "FAIL_TO_PASS": [f2p], "PASS_TO_PASS": [],
        })
    };
    let rows = [
        row(
            "t__helper-1",
            new_file("test_app.py", test),
            "test_value (test_app.T.test_value)",
        ),
        row(
            "t__helper-net",
            new_file("test_net.py", net),
            "test_fetch (test_net.N.test_fetch)",
        ),
    ];
    let path = dir.join("tasks.jsonl");
    std::fs::write(
        &path,
        rows.iter()
            .map(|row| format!("{row}\n"))
            .collect::<String>(),
    )
    .unwrap();
    let recipes = r#"
[[recipe]]
repo = "t/helper"
versions = ["*"]
test_cmd = "python -m unittest -v"
log_parser = "unittest"
python = "3.11"
packages = ["helper==1.0"]
pip_args = ["--no-index", "--find-links", "/testbed/wheels"]
install = "echo installed > installed.txt"
env = { HELPER_MODE = "on" }
"#;
    std::fs::write(dir.join("recipes.toml"), recipes).unwrap();
    path
}

struct Fixture {
    _scratch: tempfile::TempDir,
    dir: PathBuf,
    cache: PathBuf,
    tasks: PathBuf,
}

impl Fixture {
    fn new() -> Self {
        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path().to_path_buf();
        let (_, commit) = repository(&dir);
        let tasks = task_file(&dir, &commit);
        Fixture {
            cache: dir.join("cache"),
            dir,
            tasks,
            _scratch: scratch,
        }
    }

    /// Runs swerve with the fixture's repositories and recipes.
    fn swerve(&self, args: &[&str]) -> std::process::Output {
        let recipes = format!(
            "run.recipes=\"{}\"",
            self.dir.join("recipes.toml").display()
        );
        let mut all = vec!["--repos", self.dir.to_str().unwrap(), "--set", &recipes];
        all.extend(args);
        swerve(&self.cache, &all)
    }
}

#[test]
fn env_exec_sees_the_environment_grading_uses() {
    let fixture = Fixture::new();
    let tasks = fixture.tasks.to_str().unwrap();
    let probe = "python -c 'import sys, helper, app; print(sys.prefix, helper.X, app.value())'; \
                 echo \"${VIRTUAL_ENV-no-venv} $HELPER_MODE\"; cat installed.txt; \
                 echo x > ~/.probe && echo home-writable; command -v python";
    let output = fixture.swerve(&["env", "exec", "--tasks", tasks, "t__helper-1", "--", probe]);
    let text = succeeded(&output);
    assert_eq!(
        text,
        "/swerve-env 42 41\nno-venv on\ninstalled\nhome-writable\n/swerve-env/bin/python\n",
        "{}",
        common::stderr(&output)
    );

    // The tool path too: the agent's execute_bash runs in the same environment.
    let output = fixture.swerve(&[
        "env",
        "tool",
        "--tasks",
        tasks,
        "t__helper-1",
        r#"<function=execute_bash><parameter=command>python -c 'import helper; print("tool", helper.X)'</parameter></function>"#,
    ]);
    assert!(succeeded(&output).contains("tool 42"));

    // Grading the gold patch runs the same interpreter, package, install and variable.
    let out = fixture.dir.join("gold");
    let output = fixture.swerve(&[
        "eval",
        "--tasks",
        tasks,
        "--gold",
        "--out",
        out.to_str().unwrap(),
        "t__helper-1",
    ]);
    let text = succeeded(&output);
    assert!(text.contains("1/1 gold patches resolve"), "{text}");
}

#[test]
fn tests_that_need_the_network_are_named_and_tasks_check_certifies_a_file() {
    let fixture = Fixture::new();
    let tasks = fixture.tasks.to_str().unwrap();
    let out = fixture.dir.join("gold");
    let output = fixture.swerve(&[
        "eval",
        "--tasks",
        tasks,
        "--gold",
        "--out",
        out.to_str().unwrap(),
    ]);
    let text = stdout(&output);
    assert!(!output.status.success());
    assert!(
        text.contains("1 tasks cannot be validated offline")
            && text.contains("t__helper-net: the tests use the network"),
        "{text}"
    );
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let needs = &results["t__helper-net"]["needs_network"];
    assert_eq!(needs["reason"], "network", "{needs}");
    assert!(!needs["evidence"].as_array().unwrap().is_empty());
    assert!(results["t__helper-1"].get("needs_network").is_none());

    let check = fixture.dir.join("check");
    let output = fixture.swerve(&["tasks", "check", tasks, "--out", check.to_str().unwrap()]);
    let text = succeeded(&output);
    assert!(
        text.contains("2 tasks: 1 ok, 1 cannot be validated offline, 0 with broken expected test ids, 0 failed"),
        "{text}"
    );
    let rows: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(check.join("check.json")).unwrap()).unwrap();
    assert_eq!(rows[0]["instance_id"], "t__helper-1");
    assert_eq!(rows[0]["status"], "ok");
    assert_eq!(rows[0]["gold_resolved"], true);
    assert_eq!(rows[0]["empty_fails"], true);
    assert!(rows[0]["seconds"]["gold_tests"].as_f64().unwrap() > 0.0);
    assert_eq!(rows[1]["status"], "offline");
    assert!(
        rows[1]["reason"]
            .as_str()
            .unwrap()
            .contains("use the network")
    );
    assert!(check.join("logs/gold/t__helper-1/test_output.txt").exists());
    assert!(
        check
            .join("logs/empty/t__helper-1/test_output.txt")
            .exists()
    );
    // Per repository: one ok, one offline; gold resolves on the one that needs no network.
    let line = text
        .lines()
        .find(|line| line.starts_with("t/helper "))
        .unwrap_or_else(|| panic!("no summary line for t/helper in {text}"));
    let fields: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(
        fields,
        [
            "t/helper", "2", "1", "1", "0", "0", "0", "0", "1", "of", "1"
        ],
        "{text}"
    );

    // Each task's record is written as it ends; --resume keeps them and checks the rest.
    let records = check.join("checks");
    let kept = records.join("t__helper-1.json");
    let mut record: Value = serde_json::from_str(&std::fs::read_to_string(&kept).unwrap()).unwrap();
    record["reason"] = json!("kept from the interrupted check");
    std::fs::write(&kept, record.to_string()).unwrap();
    std::fs::remove_file(records.join("t__helper-net.json")).unwrap();
    let out_dir = check.to_str().unwrap();
    let output = fixture.swerve(&["tasks", "check", tasks, "--out", out_dir, "--resume"]);
    succeeded(&output);
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("1 of 2 tasks already checked"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let rows: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(check.join("check.json")).unwrap()).unwrap();
    assert_eq!(rows[0]["reason"], "kept from the interrupted check");
    assert_eq!(rows[1]["status"], "offline");
    assert!(records.join("t__helper-net.json").exists());
    // Without --resume every task is checked again.
    succeeded(&fixture.swerve(&["tasks", "check", tasks, "--out", out_dir]));
    let rows: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(check.join("check.json")).unwrap()).unwrap();
    assert!(rows[0].get("reason").is_none(), "{}", rows[0]);
    // A record that is not one is an error naming it, not a task silently checked again.
    std::fs::write(&kept, "{").unwrap();
    let output = fixture.swerve(&["tasks", "check", tasks, "--out", out_dir, "--resume"]);
    assert!(!output.status.success());
    let message = String::from_utf8_lossy(&output.stderr);
    assert!(
        message.contains("t__helper-1.json: not a task check record"),
        "{message}"
    );
}

/// A task on the repository whose test talks to `http://httpbin.org` and expects a
/// connection to requests' unroutable `TARPIT` address to time out.
const WEB_TEST: &str = "import json\nimport socket\nimport unittest\nimport urllib.request\n\nimport app\n\n\nclass W(unittest.TestCase):\n    def test_web(self):\n        self.assertEqual(app.value(), 42)\n        body = json.load(urllib.request.urlopen('http://httpbin.org/get?x=1', timeout=10))\n        self.assertEqual(body['args'], {'x': '1'})\n        with self.assertRaises(socket.timeout):\n            socket.create_connection(('10.255.255.1', 81), timeout=1)\n";

#[test]
fn a_recipes_network_fixtures_grade_a_task_that_talks_to_httpbin_offline() {
    let fixture = Fixture::new();
    let commit = sh(&fixture.dir.join("repos/t/helper"), "git rev-parse HEAD");
    let row = json!({
        "repo": "t/helper", "instance_id": "t__helper-web", "base_commit": commit.trim(),
        "version": "1.0", "patch": GOLD, "test_patch": new_file("test_web.py", WEB_TEST),
        "problem_statement": "value() is off by one",
        "FAIL_TO_PASS": ["test_web (test_web.W.test_web)"], "PASS_TO_PASS": [],
    });
    let tasks = fixture.dir.join("web.jsonl");
    std::fs::write(&tasks, format!("{row}\n")).unwrap();
    let recipes = std::fs::read_to_string(fixture.dir.join("recipes.toml")).unwrap();
    let grade_gold = |out: &str| {
        let out = fixture.dir.join(out);
        let output = fixture.swerve(&[
            "eval",
            "--tasks",
            tasks.to_str().unwrap(),
            "--gold",
            "--out",
            out.to_str().unwrap(),
        ]);
        let results: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap())
                .unwrap();
        (output, results["t__helper-web"].clone())
    };
    // Without fixtures the tests cannot reach httpbin.org: the task cannot be validated.
    let (output, report) = grade_gold("plain");
    assert!(!output.status.success());
    assert_eq!(report["needs_network"]["reason"], "network", "{report}");
    assert!(report.get("services").is_none(), "{report}");
    // With them (httpbin built from PyPI into a cached environment, served in the sandbox's
    // own network namespace), gold resolves offline and the report says what served it.
    std::fs::write(
        fixture.dir.join("recipes.toml"),
        format!("{recipes}services = [\"httpbin\", \"tarpit\"]\n"),
    )
    .unwrap();
    let (output, report) = grade_gold("served");
    let text = succeeded(&output);
    assert!(text.contains("1/1 gold patches resolve"), "{text}");
    assert_eq!(report["services"], json!(["httpbin", "tarpit"]), "{report}");
    assert_eq!(report["resolved"], true, "{report}");
    // The agent's workspace has the fixtures its grade has (`env exec` makes it as rollouts
    // and the gym do): httpbin answers, nothing else does.
    let probe = "python -c 'import urllib.request as u
print(u.urlopen(\"http://httpbin.org/get\", timeout=5).status)'
python -c 'import socket
try:
    socket.create_connection((\"10.255.255.1\", 80), 2)
except socket.timeout:
    print(\"tarpit\")
except OSError as error:
    print(\"refused\", error)'";
    let output = fixture.swerve(&[
        "env",
        "exec",
        "--tasks",
        tasks.to_str().unwrap(),
        "t__helper-web",
        "--",
        probe,
    ]);
    let text = succeeded(&output);
    assert_eq!(text, "200\ntarpit\n", "{}", common::stderr(&output));
}

#[test]
fn a_replayed_rollout_sees_the_environment_and_its_patch_resolves() {
    let fixture = Fixture::new();
    let demos = fixture.dir.join("demos");
    std::fs::create_dir_all(&demos).unwrap();
    let probe = "python -c 'import app; print(\"value\", app.value())'";
    let demo = json!({
        "instance_id": "t__helper-1",
        "calls": [
            {"name": "execute_bash", "arguments": {"cmd": probe}},
            {"name": "file_editor", "arguments": {
                "command": "str_replace", "path": "/testbed/app.py",
                "old_str": "return helper.X - 1", "new_str": "return helper.X"}},
            {"name": "execute_bash", "arguments": {"cmd": probe}},
            {"name": "finish", "arguments": {"command": "submit"}},
        ]
    });
    std::fs::write(demos.join("t__helper-1.json"), demo.to_string()).unwrap();
    let out = fixture.dir.join("run");
    let output = fixture.swerve(&[
        "run",
        "--tasks",
        fixture.tasks.to_str().unwrap(),
        "--model",
        "replay",
        "--demos",
        demos.to_str().unwrap(),
        "--eval",
        "--out",
        out.to_str().unwrap(),
        "t__helper-1",
    ]);
    let text = succeeded(&output);
    assert!(text.contains("1 of 1 graded resolved"), "{text}");
    let trajectory =
        std::fs::read_to_string(out.join("trajectories/t__helper-1__0.jsonl")).unwrap();
    // The agent's python is the environment's: the package imports, before and after the fix.
    assert!(trajectory.contains("value 41"), "{trajectory}");
    assert!(trajectory.contains("value 42"), "{trajectory}");
}
