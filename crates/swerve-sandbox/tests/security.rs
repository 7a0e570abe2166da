//! Real security tests: each runs real processes in a real sandbox and checks from the host.

mod common;

use std::net::TcpListener;
use std::time::{Duration, Instant};

use common::{Fixture, host_processes_with, isolated};
use swerve_core::Shell;
use swerve_sandbox::{IsolationInForce, Limits, SandboxConfig, Workspace};

/// As root, limits must come from cgroups: RLIMIT_NPROC does not bind root, so without them a
/// fork bomb would exhaust the host. (Unprivileged, rlimits apply and cgroups are optional.)
fn assert_limits_enforced(workspace: &Workspace) {
    if nix::unistd::Uid::effective().is_root() {
        assert_eq!(
            workspace.sandbox().isolation(),
            IsolationInForce::Namespaces { cgroups: true }
        );
    }
}

const CONNECT: &str = "python3 -c \"import socket,sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 2); print('connected')\"";

#[test]
fn a_command_cannot_reach_a_loopback_server_outside_the_sandbox() {
    let fixture = Fixture::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let closed = fixture.workspace(isolated());
    let outcome = closed
        .sandbox()
        .run(&format!("{CONNECT} {port}"), Duration::from_secs(10))
        .unwrap();
    assert!(!outcome.success(), "connected: {}", outcome.stdout_text());
    assert!(
        outcome.stderr_text().contains("ConnectionRefusedError"),
        "{}",
        outcome.stderr_text()
    );
    // The same command does connect when network is switched on, so the check above can fail.
    let open = fixture.workspace(SandboxConfig {
        network: true,
        ..isolated()
    });
    let outcome = open
        .sandbox()
        .run(&format!("{CONNECT} {port}"), Duration::from_secs(10))
        .unwrap();
    assert_eq!(
        outcome.stdout_text().trim(),
        "connected",
        "{}",
        outcome.stderr_text()
    );
}

#[test]
fn loopback_inside_the_sandbox_works() {
    let fixture = Fixture::new();
    let workspace = fixture.workspace(isolated());
    let command = "python3 -c \"import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); s.listen(); \
                   c=socket.create_connection(s.getsockname()); print('ok')\"";
    let outcome = workspace
        .sandbox()
        .run(command, Duration::from_secs(10))
        .unwrap();
    assert_eq!(
        outcome.stdout_text().trim(),
        "ok",
        "{}",
        outcome.stderr_text()
    );
}

#[test]
fn background_processes_do_not_survive_the_rollout() {
    let fixture = Fixture::new();
    let workspace = fixture.workspace(isolated());
    let outcome = workspace
        .sandbox()
        .run(
            "sleep 1000.4242 & setsid sleep 1000.4343 & echo started",
            Duration::from_secs(5),
        )
        .unwrap();
    assert_eq!(outcome.stdout_text().trim(), "started");
    assert_eq!(
        host_processes_with("1000.4242").len(),
        1,
        "the background sleep should be running"
    );
    assert_eq!(host_processes_with("1000.4343").len(), 1);
    workspace.destroy().unwrap();
    let deadline = Instant::now() + Duration::from_secs(2);
    while !host_processes_with("1000.4").is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        host_processes_with("1000.4").is_empty(),
        "a background process outlived its rollout"
    );
}

#[test]
fn a_timeout_kills_grandchildren_even_in_new_sessions() {
    let fixture = Fixture::new();
    let workspace = fixture.workspace(isolated());
    let started = Instant::now();
    let outcome = workspace
        .sandbox()
        .run(
            "setsid sh -c 'sleep 1000.5151' & (sh -c 'sleep 1000.5252') & sleep 1000.5353",
            Duration::from_millis(500),
        )
        .unwrap();
    assert!(outcome.timed_out);
    assert_eq!(outcome.shell_status(), 124);
    assert!(started.elapsed() < Duration::from_secs(3));
    let deadline = Instant::now() + Duration::from_secs(2);
    while !host_processes_with("1000.5").is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        host_processes_with("1000.5").is_empty(),
        "a grandchild survived the timeout"
    );
    let after = workspace
        .sandbox()
        .run("echo still-usable", Duration::from_secs(5))
        .unwrap();
    assert_eq!(after.stdout_text().trim(), "still-usable");
}

#[test]
fn commands_cannot_change_the_base_the_host_or_another_workspace() {
    let fixture = Fixture::new();
    let base = fixture.base();
    let first = fixture.workspace(isolated());
    let second = fixture.workspace(isolated());
    let cache = fixture.cache.root().display().to_string();
    let attack = format!(
        "echo changed > a.txt; rm pkg/mod.py; echo new > new.txt; \
         echo x > {base}/a.txt; echo x > {cache}/x; echo x > /etc/swerve-test; touch /usr/swerve-test; \
         ls {cache} | wc -l",
        base = base.path.display()
    );
    let outcome = first
        .sandbox()
        .run(&attack, Duration::from_secs(5))
        .unwrap();
    assert_eq!(
        outcome.stdout_text().trim(),
        "0",
        "the cache must be hidden: {}",
        outcome.stderr_text()
    );
    assert_eq!(
        std::fs::read_to_string(first.host_root().join("a.txt")).unwrap(),
        "changed\n"
    );
    assert_eq!(
        std::fs::read_to_string(base.path.join("a.txt")).unwrap(),
        "one\ntwo\nthree\n"
    );
    assert!(base.path.join("pkg/mod.py").exists());
    assert!(!base.path.join("new.txt").exists());
    assert!(!std::path::Path::new("/etc/swerve-test").exists());
    assert!(!std::path::Path::new("/usr/swerve-test").exists());
    let seen = second
        .sandbox()
        .run("cat a.txt; ls new.txt 2>&1; ls pkg", Duration::from_secs(5))
        .unwrap();
    assert_eq!(
        seen.stdout_text(),
        "one\ntwo\nthree\nls: cannot access 'new.txt': No such file or directory\nmod.py\n"
    );
}

#[test]
fn a_fork_bomb_is_stopped_by_the_process_limit() {
    let fixture = Fixture::new();
    let limits = Limits {
        max_processes: Some(64),
        ..Limits::default()
    };
    let workspace = fixture.workspace(SandboxConfig {
        limits,
        ..isolated()
    });
    assert_limits_enforced(&workspace);
    let outcome = workspace
        .sandbox()
        .run(
            "bomb() { bomb | bomb & }; bomb; sleep 2; echo survived-bomb",
            Duration::from_secs(4),
        )
        .unwrap();
    assert!(
        outcome.stderr_text().contains("fork") || outcome.stderr_text().contains("Resource"),
        "{}",
        outcome.stderr_text()
    );
    // The host can still start processes, and the sandbox recovers once the bomb is killed.
    assert!(
        std::process::Command::new("true")
            .status()
            .unwrap()
            .success()
    );
    let after = workspace
        .sandbox()
        .run("echo alive", Duration::from_secs(10))
        .unwrap();
    assert_eq!(
        after.stdout_text().trim(),
        "alive",
        "{}",
        after.stderr_text()
    );
}

#[test]
fn a_memory_hog_is_killed_by_the_memory_limit() {
    let fixture = Fixture::new();
    let limits = Limits {
        memory_bytes: Some(128 << 20),
        ..Limits::default()
    };
    let workspace = fixture.workspace(SandboxConfig {
        limits,
        ..isolated()
    });
    assert_limits_enforced(&workspace);
    let outcome = workspace
        .sandbox()
        .run(
            "python3 -c \"b = b'x' * (1024 * 1024 * 1024); print('allocated')\"",
            Duration::from_secs(60),
        )
        .unwrap();
    assert!(!outcome.success());
    assert!(!outcome.stdout_text().contains("allocated"));
    assert!(
        outcome.signal == Some(9)
            || outcome.exit_code == Some(137)
            || outcome.stderr_text().contains("MemoryError"),
        "{outcome:?}"
    );
    let after = workspace
        .sandbox()
        .run("echo alive", Duration::from_secs(5))
        .unwrap();
    assert_eq!(after.stdout_text().trim(), "alive");
}

#[test]
fn the_repository_is_always_at_the_same_path() {
    let fixture = Fixture::new();
    let first = fixture.workspace(isolated());
    let second = fixture.workspace(isolated());
    for workspace in [&first, &second] {
        let outcome = workspace
            .sandbox()
            .run("pwd; ls /testbed/a.txt", Duration::from_secs(5))
            .unwrap();
        assert_eq!(outcome.stdout_text(), "/testbed\n/testbed/a.txt\n");
    }
}

#[test]
fn secrets_in_the_host_environment_are_not_passed_to_commands() {
    let fixture = Fixture::new();
    // SAFETY: no other thread of this test binary reads this variable.
    unsafe { std::env::set_var("OPENAI_API_KEY", "sk-secret-for-test") };
    let workspace = fixture.workspace(isolated());
    let outcome = workspace
        .sandbox()
        .run("env", Duration::from_secs(5))
        .unwrap();
    assert!(!outcome.stdout_text().contains("sk-secret-for-test"));
    assert!(outcome.stdout_text().contains("PATH="));
}

#[test]
fn commands_inherit_only_standard_input_output_and_error() {
    let fixture = Fixture::new();
    let workspace = fixture.workspace(isolated());
    // `ls` lists the shell's descriptors: anything beyond 0-2 (the sandbox's control socket,
    // say) would let the agent talk to the init or reach host files.
    let outcome = workspace
        .sandbox()
        .run(
            "ls /proc/$$/fd; readlink /proc/$$/fd/0",
            Duration::from_secs(5),
        )
        .unwrap();
    let listing = outcome.stdout_text();
    assert_eq!(listing, "0\n1\n2\n/dev/null\n", "{}", outcome.stderr_text());
}
