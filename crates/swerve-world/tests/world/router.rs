//! The router's decision table: one row per command line, including SWE-World's known
//! false positives, multi-command lines, nested command strings and configuration.

use swerve_core::ToolCall;
use swerve_world::{Route, Router, RouterConfig, RouterConfigError, bash_command};

use Route::{Blocked, Install, Sandbox, Simulated};

/// `(command, expected route, expected deciding command)`.
const TABLE: &[(&str, Route, Option<&str>)] = &[
    // reads and navigation
    ("ls -la", Sandbox, Some("ls")),
    ("cat setup.py | head -n 20", Sandbox, Some("cat")),
    (
        "grep -rn 'def foo' src/ | sort | uniq -c",
        Sandbox,
        Some("grep"),
    ),
    (
        "find . -name '*.py' -not -path './.git/*'",
        Sandbox,
        Some("find"),
    ),
    ("git diff", Sandbox, Some("git")),
    ("git log --oneline -5 && git status", Sandbox, Some("git")),
    ("cd /testbed && ls", Sandbox, Some("cd")),
    ("sed -n '10,20p' a.py", Sandbox, Some("sed")),
    ("echo done > /tmp/x", Sandbox, Some("echo")),
    ("", Sandbox, None),
    ("   # only a comment", Sandbox, None),
    ("X=1", Sandbox, None),
    // SWE-World's substring false positives
    ("grep -n 'skip ' tests/test_a.py", Sandbox, Some("grep")),
    ("grep -rn 'skip ' . && cat zip.txt", Sandbox, Some("grep")),
    ("grep -r \"rm -rf\" .", Sandbox, Some("grep")),
    ("grep -n 'scp ' a.py", Sandbox, Some("grep")),
    ("grep -c top README.rst", Sandbox, Some("grep")),
    ("echo \"pytest\"", Sandbox, Some("echo")),
    ("echo 'python -c 1; rm -rf /'", Sandbox, Some("echo")),
    ("cat pip_install_notes.txt", Sandbox, Some("cat")),
    ("ls skip_dir ip_addr", Sandbox, Some("ls")),
    (
        "cat <<'EOF' > notes.txt\npython x.py\nrm -rf /\nEOF",
        Sandbox,
        Some("cat"),
    ),
    // running project code
    ("python reproduce.py", Simulated, Some("python")),
    ("python3 reproduce.py", Simulated, Some("python")),
    ("/usr/bin/python3.11 -u x.py", Simulated, Some("python")),
    (
        "pytest tests/test_a.py::test_b -x -q",
        Simulated,
        Some("pytest"),
    ),
    ("python -m pytest -rA tests/", Simulated, Some("pytest")),
    (
        "python -c 'import sys; print(sys.version)'",
        Simulated,
        Some("python"),
    ),
    (
        "cd /testbed && python reproduce.py",
        Simulated,
        Some("python"),
    ),
    ("timeout 10 python x.py", Simulated, Some("python")),
    ("timeout -s KILL 30s pytest -q", Simulated, Some("pytest")),
    (
        "FOO=1 DJANGO_SETTINGS_MODULE=x python manage.py test",
        Simulated,
        Some("python"),
    ),
    ("env PYTHONPATH=. python x.py", Simulated, Some("python")),
    ("bash -c 'cd tests && pytest -q'", Simulated, Some("pytest")),
    ("sh -c \"ls; python3 t.py\"", Simulated, Some("python")),
    ("bash -lc 'ls'", Sandbox, Some("ls")),
    ("bash run_tests.sh", Simulated, Some("bash")),
    (
        "./tests/runtests.py admin_views",
        Simulated,
        Some("./tests/runtests.py"),
    ),
    ("echo $(python -c 'print(1)')", Simulated, Some("python")),
    ("echo \"`python -V`\"", Simulated, Some("python")),
    (
        "diff <(python a.py) expected.txt",
        Simulated,
        Some("python"),
    ),
    ("(cd src && python -m mypkg)", Simulated, Some("python")),
    ("ls && python x.py", Simulated, Some("python")),
    ("python x.py || echo failed; ls", Simulated, Some("python")),
    ("cat x.py | python", Simulated, Some("python")),
    ("python - <<'EOF'\nprint(1)\nEOF", Simulated, Some("python")),
    ("python <<EOF\nimport os\nEOF", Simulated, Some("python")),
    ("bash <<'EOF'\nls\nEOF", Sandbox, Some("ls")),
    ("bash <<'EOF'\npytest -q\nEOF", Simulated, Some("pytest")),
    (
        "cat > t.py <<'EOF'\nprint(1)\nEOF\npython t.py",
        Simulated,
        Some("python"),
    ),
    ("cat <<EOF\n$(python -V)\nEOF", Simulated, Some("python")),
    (
        "for f in tests/*.py; do python $f; done",
        Simulated,
        Some("python"),
    ),
    (
        "if python -c 'import x'; then echo ok; fi",
        Simulated,
        Some("python"),
    ),
    ("while true; do ls; done", Sandbox, Some("true")),
    (
        "case $x in a) ls ;; b) pytest ;; esac",
        Simulated,
        Some("pytest"),
    ),
    ("[[ -f a && -d b ]] && echo yes", Sandbox, Some("[[")),
    (
        "find . -name '*.py' -exec python {} \\;",
        Simulated,
        Some("python"),
    ),
    ("ls *.py | xargs python", Simulated, Some("python")),
    ("uv run pytest -q", Simulated, Some("pytest")),
    ("$PYTHON x.py", Simulated, Some("$PYTHON")),
    ("make test", Simulated, Some("make")),
    ("node index.js", Simulated, Some("node")),
    ("frobnicate --all", Simulated, Some("frobnicate")),
    ("eval 'python x.py'", Simulated, Some("python")),
    ("f() { python x.py; }; f", Simulated, Some("python")),
    ("echo $((1 + 2))", Sandbox, Some("echo")),
    ("python x.py 2>&1 | tail -n 5", Simulated, Some("python")),
    (
        "nohup python x.py > out.log 2>&1 &",
        Simulated,
        Some("python"),
    ),
    ("command -v python", Sandbox, Some("command")),
    // installs
    ("pip install -e .", Install, Some("pip install")),
    ("pip3 install numpy==1.26", Install, Some("pip install")),
    (
        "python -m pip install requests",
        Install,
        Some("pip install"),
    ),
    (
        "pip install -q x && pip install y",
        Install,
        Some("pip install"),
    ),
    ("uv pip install foo", Install, Some("uv pip install")),
    ("conda install -y numpy", Install, Some("conda install")),
    ("pip list", Simulated, Some("pip")),
    ("pip install x && python t.py", Simulated, Some("python")),
    // blocked
    ("rm -rf build", Blocked, Some("rm")),
    ("ls && rm x.py", Blocked, Some("rm")),
    ("python x.py; kill -9 1", Blocked, Some("kill")),
    ("sudo apt-get install -y foo", Blocked, Some("sudo")),
    ("apt-get install -y libfoo", Blocked, Some("apt-get")),
    ("find . -name '*.pyc' -exec rm {} +", Blocked, Some("rm")),
    ("ls | xargs rm", Blocked, Some("rm")),
    ("bash -c 'rm -rf /'", Blocked, Some("rm")),
    ("echo $(rm -rf x)", Blocked, Some("rm")),
    ("timeout 5 ip addr", Blocked, Some("ip")),
    ("mkfs.ext4 /dev/sda1", Blocked, Some("mkfs")),
    ("docker ps", Blocked, Some("docker")),
    ("vim a.py", Blocked, Some("vim")),
    ("git rm -r --cached build && ls", Sandbox, Some("git")),
];

#[test]
fn routes_every_row_of_the_table() {
    let router = Router::default();
    let mut failures = Vec::new();
    for (command, route, key) in TABLE {
        let decision = router.route_command(command);
        if decision.route != *route || decision.command.as_deref() != *key {
            failures.push(format!(
                "{command:?}: expected {route} by {key:?}, got {} by {:?} ({})",
                decision.route, decision.command, decision.reason
            ));
        }
        assert!(!decision.reason.is_empty(), "{command:?}");
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn unparsable_commands_get_the_configured_route_and_say_why() {
    let router = Router::default();
    for command in [
        "echo 'unclosed",
        "python -c \"print(1)",
        "ls $(pwd",
        "ls )",
        "echo `date",
        "bash -c 'echo \"x'",
    ] {
        let decision = router.route_command(command);
        assert_eq!(
            decision.route, Simulated,
            "{command:?}: {}",
            decision.reason
        );
        assert!(
            decision.reason.contains("cannot be parsed"),
            "{command:?}: {}",
            decision.reason
        );
    }
    let decision = router.route_command("echo 'unclosed");
    assert!(
        decision
            .reason
            .contains("unclosed ' quote starting at character 5"),
        "{}",
        decision.reason
    );
    let strict = Router::from_config(&RouterConfig {
        unparsable: Blocked,
        ..RouterConfig::default()
    })
    .unwrap();
    assert_eq!(strict.route_command("cat 'x").route, Blocked);
}

#[test]
fn file_tools_run_on_the_sandbox_whatever_their_payload() {
    let router = Router::default();
    let edit = ToolCall::new("file_editor")
        .arg("command", "create")
        .arg("path", "/testbed/skip_test.py")
        .arg(
            "file_text",
            "import os\nos.system('rm -rf / && pip install x')\n",
        );
    assert_eq!(router.route_call(&edit).route, Sandbox);
    let search = ToolCall::new("search").arg("search_term", "ip route");
    assert_eq!(router.route_call(&search).route, Sandbox);
    assert_eq!(router.route_call(&ToolCall::new("finish")).route, Sandbox);
    let bash = ToolCall::new("execute_bash").arg("cmd", "pytest -q");
    assert_eq!(router.route_call(&bash).route, Simulated);
    let agile = ToolCall::new("execute_bash").arg("command", "rm x");
    assert_eq!(router.route_call(&agile).route, Blocked);
    let missing = ToolCall::new("execute_bash");
    assert_eq!(router.route_call(&missing).route, Sandbox);
    let blank = ToolCall::new("execute_bash").arg("cmd", "  ");
    assert_eq!(bash_command(&blank), None);
    assert_eq!(bash_command(&agile).as_deref(), Some("rm x"));
}

#[test]
fn configuration_from_toml_overrides_the_builtin_table() {
    let config: RouterConfig = toml::from_str(
        r#"
        default = "sandbox"
        [commands]
        rm = "sandbox"
        "make  test" = "simulated"
        make = "sandbox"
        "pip install" = "simulated"
        "#,
    )
    .unwrap();
    let router = Router::from_config(&config).unwrap();
    assert_eq!(router.route_command("rm -f reproduce.py").route, Sandbox);
    assert_eq!(router.route_command("make test").route, Simulated);
    assert_eq!(router.route_command("make docs").route, Sandbox);
    assert_eq!(router.route_command("pip install -e .").route, Simulated);
    assert_eq!(router.route_command("frobnicate").route, Sandbox);
    assert_eq!(router.route_command("mv a b").route, Blocked);
    let reason = router.route_command("rm x").reason;
    assert!(reason.contains("configured as sandbox"), "{reason}");

    let bare: RouterConfig =
        toml::from_str("builtin = false\n[commands]\nls = \"sandbox\"").unwrap();
    let router = Router::from_config(&bare).unwrap();
    assert_eq!(router.route_command("ls").route, Sandbox);
    assert_eq!(router.route_command("cat x").route, Simulated);

    let error = toml::from_str::<RouterConfig>("defualt = \"sandbox\"").unwrap_err();
    assert!(error.to_string().contains("defualt"), "{error}");
    let error = toml::from_str::<RouterConfig>("default = \"maybe\"").unwrap_err();
    assert!(error.to_string().contains("maybe"), "{error}");
    let empty = RouterConfig {
        commands: [(" ".to_owned(), Sandbox)].into(),
        ..RouterConfig::default()
    };
    assert!(matches!(
        Router::from_config(&empty),
        Err(RouterConfigError::EmptyKey { .. })
    ));
}

#[test]
fn install_and_blocked_replies_render_as_execute_bash_results() {
    let router = Router::default();
    let install = router.route_command("pip install -e .");
    let reply = router.reply(&install, 40).unwrap();
    assert_eq!(reply.output, "Successfully installed packages.");
    assert_eq!(reply.error_code, "0");
    assert!(!reply.is_error);
    assert_eq!(
        reply.observation,
        "Exit code: 0\nExecution output of [execute_bash]:\nSuccessfully installed packages."
    );
    let blocked = router.route_command("ls; rm -rf build");
    let reply = router.reply(&blocked, 40).unwrap();
    assert_eq!(
        reply.output,
        "This command rm is not allowed. Please try other approaches."
    );
    assert_eq!(reply.error_code, "Error: Exit code 1");
    assert!(reply.is_error);
    assert!(router.reply(&router.route_command("ls"), 40).is_none());
    assert!(router.reply(&router.route_command("pytest"), 40).is_none());
}
