//! Evaluation cost on the bundled tasks, beside the test run itself.
//!
//! For each task: `Evaluator::evaluate` of its gold patch (no result cache), split into
//! phases from the report, and, as the anchor, the task's test command run directly on a
//! host checkout with the test and gold patches applied. swerve's overhead is the
//! difference. The same evaluations with the guard off (`EvalSettings::guard`: the test-file
//! reset alone, no machinery snapshots, no canaries, the eval script in one part), rounds
//! interleaved, give the guard's cost. Also a cold environment build (a Python venv) beside a
//! cached one.
//! Run with `cargo bench -p swerve-cli --bench eval`.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use swerve_eval::environment::{EnvironmentRecipe, Environments};
use swerve_eval::evaluate::{EvalSettings, Evaluator};
use swerve_eval::spec::RecipeTable;
use swerve_rollout::config::Config;
use swerve_rollout::open;
use swerve_sandbox::WorkspaceOptions;
use swerve_testing::bench::{Report, Samples, time_n};
use swerve_testing::sh;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let task_file = root.join("examples/tasks/tasks.jsonl");
    let scratch = tempfile::tempdir().unwrap();
    let config = Config {
        cache_dir: Some(scratch.path().join("cache")),
        ..Config::default()
    };
    let cache = config.cache().unwrap();
    let repos = config.repo_map(&task_file);
    let recipes = RecipeTable::shipped();
    let evaluator = Evaluator {
        cache: &cache,
        repos: &repos,
        recipes: &recipes,
        settings: EvalSettings {
            use_cache: false,
            ..EvalSettings::default()
        },
        images: None,
    };
    let unguarded = Evaluator {
        settings: EvalSettings {
            guard: false,
            ..evaluator.settings.clone()
        },
        ..evaluator
    };
    let tasks = open::tasks(&task_file).unwrap();
    let rounds = 5;
    let mut report = Report::default();
    let mut phase_totals = [0.0f64; 5];
    let mut evaluations = Vec::new();
    let mut without_guard = Vec::new();
    let mut direct = Vec::new();
    for task in &tasks {
        let gold = task.patch.clone().unwrap();
        let checkout = scratch.path().join(format!("direct-{}", task.instance_id));
        let bundle = root.join(format!("examples/repos/{}.bundle", task.repo));
        sh(
            scratch.path(),
            &format!(
                "git clone -q {} {} && git -C {} checkout -q {}",
                bundle.display(),
                checkout.display(),
                checkout.display(),
                task.base_commit
            ),
        );
        for (name, patch) in [
            ("gold.patch", &gold),
            ("test.patch", task.test_patch.as_ref().unwrap()),
        ] {
            std::fs::write(checkout.join(name), patch).unwrap();
            sh(&checkout, &format!("git apply {name} && rm {name}"));
        }
        let command = task.extra["test_cmd"].as_str().unwrap().to_owned();
        evaluator.evaluate(task, Some(&gold));
        for _ in 0..rounds {
            let started = Instant::now();
            let result = evaluator.evaluate(task, Some(&gold));
            evaluations.push(started.elapsed());
            assert!(result.resolved, "{}: {:?}", task.instance_id, result.error);
            let started = Instant::now();
            let plain = unguarded.evaluate(task, Some(&gold));
            without_guard.push(started.elapsed());
            assert!(plain.resolved, "{}: {:?}", task.instance_id, plain.error);
            let timings = &result.timings;
            for (total, phase) in phase_totals.iter_mut().zip([
                timings.workspace,
                timings.environment,
                timings.patch,
                timings.tests,
                timings.parsing,
            ]) {
                *total += phase.unwrap_or(0.0);
            }
            let started = Instant::now();
            let output = Command::new("sh")
                .arg("-c")
                .arg(format!("{command} >/dev/null 2>&1"))
                .current_dir(&checkout)
                .status()
                .unwrap();
            assert!(output.success());
            direct.push(started.elapsed());
        }
    }
    let evaluations = Samples::from(evaluations);
    let without_guard = Samples::from(without_guard);
    let direct = Samples::from(direct);
    let title = format!(
        "evaluate one bundled task (gold patch; {} tasks × {rounds})",
        tasks.len()
    );
    report.row(
        &title,
        "swerve evaluate (sandbox, apply, eval script, tests, grading)",
        &evaluations,
        None,
    );
    report.row(
        &title,
        "swerve evaluate with the guard off (the test-file reset alone; anchor)",
        &without_guard,
        Some(&evaluations),
    );
    report.row(
        &title,
        "the test command alone on a host checkout (anchor)",
        &direct,
        Some(&evaluations),
    );
    let count = (tasks.len() * rounds) as f64;
    let names = [
        "workspace",
        "environment",
        "patch",
        "tests (eval script incl. test command)",
        "parsing + grading",
    ];
    let phases: Vec<String> = names
        .iter()
        .zip(phase_totals)
        .map(|(name, total)| format!("{name} {:.1} ms", total / count * 1000.0))
        .collect();
    report.note(format!(
        "mean per evaluation by phase: {}",
        phases.join(", ")
    ));
    report.note(format!(
        "swerve's overhead beyond the test command (p50 difference): {:.1} ms",
        evaluations.p50_ms() - direct.p50_ms()
    ));
    report.note(format!(
        "the guard's cost per evaluation (p50 difference): {:.1} ms",
        evaluations.p50_ms() - without_guard.p50_ms()
    ));

    let task = &tasks[0];
    let base = cache
        .prepare_base(&task.repo, &repos.resolve(task).unwrap(), &task.base_commit)
        .unwrap();
    let mut template = WorkspaceOptions::default();
    template.sandbox.isolation = swerve_sandbox::Isolation::Namespaces;
    let mut cold = Vec::new();
    for round in 0..3 {
        let recipe = EnvironmentRecipe {
            key: format!("bench-venv-{round}"),
            python: Some("3.11".into()),
            ..EnvironmentRecipe::default()
        };
        let started = Instant::now();
        Environments {
            cache: &cache,
            template: &template,
            network: false,
            timeout: Duration::from_secs(600),
        }
        .prepare(&base, &recipe)
        .unwrap();
        cold.push(started.elapsed());
    }
    let warm_recipe = EnvironmentRecipe {
        key: "bench-venv-0".into(),
        python: Some("3.11".into()),
        ..EnvironmentRecipe::default()
    };
    let warm = time_n(20, || {
        Environments {
            cache: &cache,
            template: &template,
            network: false,
            timeout: Duration::from_secs(600),
        }
        .prepare(&base, &warm_recipe)
        .unwrap();
    });
    let cold = Samples::from(cold);
    report.row(
        "prepare a Python 3.11 venv environment",
        "cold build (venv with pip, in a sandbox)",
        &cold,
        None,
    );
    report.row(
        "prepare a Python 3.11 venv environment",
        "cached",
        &warm,
        Some(&cold),
    );
    report.print();
}
