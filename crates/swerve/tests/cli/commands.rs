//! The `swerve` binary end to end: exit codes, outputs, and errors on bad input.

use crate::common;

use std::process::Output;

use common::{examples, root, stderr, stdout, succeeded, swerve};
use swerve_testing::assert_cmd_snapshot;

/// Exit status 1, `expected` in stderr and no panic; the whole output (exit code, stdout and
/// stderr) pinned as the snapshot `name`.
fn assert_clean_failure(name: &str, output: &Output, expected: &str) {
    let printed = stderr(output);
    assert_eq!(output.status.code(), Some(1), "stderr: {printed}");
    assert!(
        printed.contains(expected),
        "expected {expected:?} in: {printed}"
    );
    assert!(!printed.contains("panicked"), "{printed}");
    assert_cmd_snapshot!(name, output);
}

#[test]
fn every_shared_task_file_validates() {
    let shared = root().join("../shared/data/swe-bench");
    if !shared.is_dir() {
        eprintln!("skipping: {} not found", shared.display());
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let mut args = vec!["tasks".to_owned(), "validate".to_owned()];
    for entry in std::fs::read_dir(&shared).unwrap() {
        args.push(entry.unwrap().path().display().to_string());
    }
    let output = swerve(
        cache.path(),
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    succeeded(&output);
    assert_eq!(stdout(&output).lines().count(), args.len() - 2);
}

#[test]
fn a_malformed_task_file_names_file_line_and_field() {
    let cache = tempfile::tempdir().unwrap();
    let file = cache.path().join("bad.jsonl");
    std::fs::write(
        &file,
        "{\"instance_id\":\"a__b-1\",\"repo\":\"a/b\",\"base_commit\":\"abc1234\",\"problem_statement\":\"x\"}\n\
         {\"instance_id\":\"a__b-2\",\"repo\":\"a/b\",\"base_commit\":\"abc1234\",\"problem_statement\":\"x\",\"FAIL_TO_PASS\":7}\n",
    )
    .unwrap();
    let output = swerve(cache.path(), &["tasks", "validate", file.to_str().unwrap()]);
    assert_clean_failure(
        "error_task_field_of_wrong_type",
        &output,
        "bad.jsonl line 2 (instance_id \"a__b-2\"): field \"FAIL_TO_PASS\": expected a list",
    );
    std::fs::write(&file, "{not json").unwrap();
    assert_clean_failure(
        "error_task_file_invalid_json",
        &swerve(cache.path(), &["tasks", "list", file.to_str().unwrap()]),
        "invalid JSON",
    );
    assert_clean_failure(
        "error_task_file_missing",
        &swerve(cache.path(), &["tasks", "list", "/nonexistent/tasks.json"]),
        "cannot read",
    );
}

#[test]
fn tasks_list_shows_the_examples() {
    let cache = tempfile::tempdir().unwrap();
    let output = swerve(
        cache.path(),
        &["tasks", "list", "--json", examples().to_str().unwrap()],
    );
    assert!(output.status.success());
    let rows: Vec<serde_json::Value> = stdout(&output)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert!(rows.len() >= 6);
    assert!(
        rows.iter()
            .all(|row| row["FAIL_TO_PASS"].as_u64().unwrap() > 0)
    );
}

#[test]
fn env_exec_prints_output_and_exits_with_the_command_status() {
    let cache = tempfile::tempdir().unwrap();
    let tasks = examples();
    let output = swerve(
        cache.path(),
        &[
            "env",
            "exec",
            "--tasks",
            tasks.to_str().unwrap(),
            "swerve-examples__calc-1",
            "--",
            "pwd; echo err >&2; exit 3",
        ],
    );
    assert_eq!(output.status.code(), Some(3));
    assert_eq!(stdout(&output), "/testbed\n");
    assert_eq!(stderr(&output), "err\n");
}

#[test]
fn env_exec_kills_a_command_at_its_timeout() {
    let cache = tempfile::tempdir().unwrap();
    let tasks = examples();
    let started = std::time::Instant::now();
    let output = swerve(
        cache.path(),
        &[
            "env",
            "exec",
            "--tasks",
            tasks.to_str().unwrap(),
            "--timeout",
            "0.5",
            "swerve-examples__calc-1",
            "--",
            "sleep 30",
        ],
    );
    assert_eq!(output.status.code(), Some(124));
    assert!(stderr(&output).contains("timed out"));
    assert!(started.elapsed().as_secs() < 10);
}

#[test]
fn unknown_tasks_repositories_and_commits_are_clear_errors() {
    let cache = tempfile::tempdir().unwrap();
    let tasks = examples();
    let output = swerve(
        cache.path(),
        &[
            "env",
            "exec",
            "--tasks",
            tasks.to_str().unwrap(),
            "calc",
            "--",
            "true",
        ],
    );
    assert_clean_failure(
        "error_unknown_instance",
        &output,
        "no task with instance_id \"calc\"; did you mean: swerve-examples__calc-1?",
    );

    let file = cache.path().join("tasks.jsonl");
    let row = r#"{"instance_id":"o__r-1","repo":"nobody/nothing","base_commit":"0123456789abcdef0123456789abcdef01234567","problem_statement":"x"}"#;
    std::fs::write(&file, format!("{row}\n")).unwrap();
    let output = swerve(
        cache.path(),
        &[
            "env",
            "exec",
            "--tasks",
            file.to_str().unwrap(),
            "o__r-1",
            "--",
            "true",
        ],
    );
    assert_clean_failure(
        "error_unknown_repository",
        &output,
        "repository \"nobody/nothing\" not found",
    );

    let repos = root().join("examples/repos");
    let row = row.replace("nobody/nothing", "swerve-examples/calc");
    std::fs::write(&file, format!("{row}\n")).unwrap();
    let output = swerve(
        cache.path(),
        &[
            "--repos",
            repos.to_str().unwrap(),
            "env",
            "exec",
            "--tasks",
            file.to_str().unwrap(),
            "o__r-1",
            "--",
            "true",
        ],
    );
    assert_clean_failure(
        "error_commit_not_in_repository",
        &output,
        "commit 0123456789abcdef0123456789abcdef01234567 is not in repository",
    );
}

#[test]
fn a_config_file_with_an_unknown_key_is_an_error_naming_it() {
    let cache = tempfile::tempdir().unwrap();
    let config = cache.path().join("swerve.toml");
    std::fs::write(&config, "[sandbox]\nnetwrok = true\n").unwrap();
    let output = swerve(
        cache.path(),
        &["--config", config.to_str().unwrap(), "doctor"],
    );
    assert_clean_failure("error_config_unknown_key", &output, "swerve.toml");
    assert!(stderr(&output).contains("netwrok"));
}

#[test]
fn doctor_reports_the_isolation_in_force() {
    let cache = tempfile::tempdir().unwrap();
    let output = swerve(cache.path(), &["doctor"]);
    let report = succeeded(&output);
    for line in [
        "namespaces",
        "overlay",
        "network isolated",
        "cgroups",
        "in force",
        "git",
        "nsenter",
        "cache",
    ] {
        assert!(report.contains(line), "{line} missing from:\n{report}");
    }
    assert!(report.contains(&cache.path().display().to_string()));
    assert!(
        report.contains("userland             host: this machine's /usr"),
        "{report}"
    );
}

#[test]
fn doctor_says_which_base_userland_is_configured_without_building_it() {
    let cache = tempfile::tempdir().unwrap();
    let config = cache.path().join("swerve.toml");
    std::fs::write(
        &config,
        "[sandbox]\nuserland = \"base\"\n[sandbox.base_userland]\nsuite = \"bookworm\"\npackages = [\"ed\", \"git\"]\n",
    )
    .unwrap();
    let output = swerve(
        cache.path(),
        &["--config", config.to_str().unwrap(), "doctor"],
    );
    let report = succeeded(&output);
    assert!(
        report.contains("userland             base: Debian bookworm with 2 packages (key "),
        "{report}"
    );
    assert!(report.contains("not built yet"), "{report}");
}

#[test]
fn foreign_trajectories_convert_and_show() {
    let samples = root().join("crates/swerve-core/tests/fixtures/trajectories");
    let cache = tempfile::tempdir().unwrap();
    for (file, steps) in [
        ("mini-swe-agent.pytest-dev__pytest-7432.traj.json", 35),
        ("swe-agent.pydicom__pydicom-1458.traj", 12),
        ("r2e-gym.swe-rebench.jsonl", 27),
        ("openhands.output.jsonl", 23),
    ] {
        let source = samples.join(file);
        let out = cache.path().join("converted").join(format!("{file}.jsonl"));
        let output = swerve(
            cache.path(),
            &[
                "traj",
                "convert",
                source.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ],
        );
        assert!(output.status.success(), "{file}: {}", stderr(&output));
        assert!(
            stdout(&output).contains(&format!("1 trajectory, {steps} steps")),
            "{file}: {}",
            stdout(&output)
        );
        let shown = swerve(
            cache.path(),
            &["traj", "show", out.to_str().unwrap(), "--width", "3"],
        );
        let rendered = stdout(&shown);
        assert!(shown.status.success());
        assert!(
            rendered.contains(&format!("── step {steps} ")),
            "{file}: {rendered}"
        );
        assert!(rendered.contains("patch:"), "{file}");
    }
    // SWE-Dev's RFT lines (two runs): one swerve file per run, named by its `traj_id`.
    let source = samples.join("swe-dev.rft.jsonl");
    let out = cache.path().join("converted/swe-dev");
    let output = swerve(
        cache.path(),
        &[
            "traj",
            "convert",
            source.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(output.status.success(), "swe-dev: {}", stderr(&output));
    assert!(
        stdout(&output).contains("2 trajectories"),
        "{}",
        stdout(&output)
    );
    let solved = out.join("swe-dev_marshmallow-code__marshmallow-1359_2.jsonl");
    let shown = swerve(cache.path(), &["traj", "show", solved.to_str().unwrap()]);
    assert!(shown.status.success(), "{}", stderr(&shown));
    let rendered = stdout(&shown);
    assert!(rendered.contains("── step 3 "), "{rendered}");
    assert!(rendered.contains("str_replace_editor"), "{rendered}");
    assert!(
        rendered.contains("+    precision = 'microseconds'"),
        "{rendered}"
    );

    let bad = cache.path().join("bad.json");
    std::fs::write(&bad, "{\"not\": \"a trajectory\"}").unwrap();
    assert_clean_failure(
        "error_not_a_trajectory",
        &swerve(cache.path(), &["traj", "show", bad.to_str().unwrap()]),
        "not a trajectory swerve can import",
    );
}
