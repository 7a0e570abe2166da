//! Tests of `swerve_eval::spec::resolve_spec`: directives for real SWE-bench rows, the order
//! of sources (task field, recipe table, detection), SWE-rebench's `install_config`, task
//! field errors and project detection.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use swerve_core::task::{Task, load_tasks};
use swerve_eval::EvalType;
use swerve_eval::spec::{
    DirectiveStyle, Origin, ProjectType, RecipeTable, detect_project, resolve_spec,
};

/// A file under `tests/fixtures/spec/`.
fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/spec")
        .join(name)
}

fn swe_bench_row(instance_id: &str) -> Task {
    load_tasks(&fixture("swe_bench_rows.json"))
        .expect("fixture loads")
        .into_iter()
        .find(|task| task.instance_id == instance_id)
        .expect("row in fixture")
}

/// A path that does not exist: detection falls back to unittest there.
fn nowhere() -> &'static Path {
    Path::new("/nonexistent/swerve-spec-test")
}

fn task(repo: &str, version: Option<&str>, extra: Value) -> Task {
    let mut task = Task::new("octo__demo-1", repo, "0123456789abcdef", "Fix it.");
    task.version = version.map(str::to_owned);
    task.test_patch = Some(
        "diff --git a/tests/test_demo.py b/tests/test_demo.py\n--- a/tests/test_demo.py\n+++ b/tests/test_demo.py\n@@ -1 +1 @@\n-x\n+y\n"
            .into(),
    );
    if let Value::Object(map) = extra {
        task.extra = map;
    }
    task
}

fn recipes(text: &str) -> RecipeTable {
    RecipeTable::parse(text, "user.toml").expect("valid recipes")
}

// --- Real rows: directives as SWE-bench computes them -------------------------------------

#[test]
fn django_rows_get_django_module_directives() {
    let shipped = RecipeTable::shipped();
    let spec = resolve_spec(&swe_bench_row("django__django-16255"), nowhere(), &shipped).unwrap();
    // SWE-bench keeps support modules such as urls/http.py (no test-file filter).
    assert_eq!(
        spec.directives,
        ["sitemaps_tests.test_http", "sitemaps_tests.urls.http"]
    );
    assert_eq!(spec.directive_style, DirectiveStyle::Django);
    assert_eq!(
        spec.test_cmd,
        "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1"
    );
    assert_eq!(spec.log_parser, "django");
    assert_eq!(
        spec.test_files,
        [
            "tests/sitemaps_tests/test_http.py",
            "tests/sitemaps_tests/urls/http.py"
        ]
    );
    assert!(spec.new_test_files.is_empty());
    let recipe = spec.recipe.as_ref().unwrap();
    assert_eq!(recipe.python.as_deref(), Some("3.9"));
    assert_eq!(
        recipe.install.as_deref(),
        Some("python -m pip install -e .")
    );
    assert_eq!(recipe.requirements, ["tests/requirements/py3.txt"]);

    let spec = resolve_spec(&swe_bench_row("django__django-13251"), nowhere(), &shipped).unwrap();
    assert_eq!(spec.directives, ["queries.models", "queries.tests"]);
    let recipe = spec.recipe.unwrap();
    assert_eq!(recipe.python.as_deref(), Some("3.6"));
    assert_eq!(recipe.env["LC_ALL"], "en_US.UTF-8");
}

#[test]
fn sympy_row_gets_paths_and_bin_test() {
    let spec = resolve_spec(
        &swe_bench_row("sympy__sympy-13031"),
        nowhere(),
        &RecipeTable::shipped(),
    )
    .unwrap();
    assert_eq!(spec.directives, ["sympy/matrices/tests/test_sparse.py"]);
    assert_eq!(
        spec.test_cmd,
        "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose"
    );
    assert_eq!(spec.log_parser, "sympy");
    assert_eq!(
        spec.recipe.unwrap().packages,
        ["mpmath==1.3.0", "flake8", "flake8-comprehensions", "pytest"],
        "SWE-bench's packages, and pytest for agents"
    );
}

#[test]
fn pytest_and_sklearn_rows_get_paths() {
    let shipped = RecipeTable::shipped();
    let spec = resolve_spec(
        &swe_bench_row("pytest-dev__pytest-11143"),
        nowhere(),
        &shipped,
    )
    .unwrap();
    assert_eq!(spec.directives, ["testing/test_assertrewrite.py"]);
    assert_eq!(
        spec.test_command(),
        "pytest -rA testing/test_assertrewrite.py"
    );
    assert_eq!(spec.log_parser, "pytest");
    assert_eq!(spec.eval_type, EvalType::PassAndFail);
    assert_eq!(spec.source.eval_type, Origin::Default);

    let spec = resolve_spec(
        &swe_bench_row("scikit-learn__scikit-learn-11574"),
        nowhere(),
        &shipped,
    )
    .unwrap();
    assert_eq!(
        spec.directives,
        [
            "sklearn/ensemble/tests/test_iforest.py",
            "sklearn/linear_model/tests/test_sag.py"
        ]
    );
    assert_eq!(spec.log_parser, "pytest_v2");
    assert_eq!(spec.recipe.unwrap().python.as_deref(), Some("3.6"));
}

#[test]
fn bundled_examples_resolve_from_their_own_fields() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/tasks/tasks.jsonl");
    let shipped = RecipeTable::shipped();
    for task in load_tasks(&path).unwrap() {
        let spec = resolve_spec(&task, nowhere(), &shipped).unwrap();
        assert_eq!(spec.source.test_cmd, Origin::Task("test_cmd".into()));
        assert_eq!(spec.source.log_parser, Origin::Inferred);
        assert!(spec.recipe.is_none(), "{}", task.instance_id);
        if task.extra["language"] == "rust" {
            assert_eq!(spec.log_parser, "cargo");
            assert!(spec.directives.is_empty());
        } else {
            assert_eq!(spec.log_parser, "unittest");
            assert!(spec.directives.iter().all(|d| d.starts_with("tests.test_")));
        }
    }
}

// --- Resolution order -------------------------------------------------------------------

const USER_RECIPES: &str = r#"
[[recipe]]
repo = "octo/demo"
versions = ["1.0"]
test_cmd = "pytest -rA -p no:cacheprovider"
log_parser = "pytest_v2"
eval_type = "fail_only"
python = "3.10"
packages = ["attrs==23.1.0"]
install = "python -m pip install -e ."
"#;

#[test]
fn task_fields_beat_the_recipe_entry() {
    let task = task(
        "octo/demo",
        Some("1.0"),
        json!({
            "test_cmd": "python3 -m unittest -v",
            "eval_type": "pass_and_fail",
            "python": "3.12",
        }),
    );
    let spec = resolve_spec(&task, nowhere(), &recipes(USER_RECIPES)).unwrap();
    assert_eq!(spec.test_cmd, "python3 -m unittest -v");
    assert_eq!(spec.source.test_cmd, Origin::Task("test_cmd".into()));
    // The parser follows the task's command, not the entry's parser for another command.
    assert_eq!(spec.log_parser, "unittest");
    assert_eq!(spec.source.log_parser, Origin::Inferred);
    assert_eq!(spec.directives, ["tests.test_demo"]);
    assert_eq!(spec.eval_type, EvalType::PassAndFail);
    assert_eq!(spec.source.eval_type, Origin::Task("eval_type".into()));
    let recipe = spec.recipe.unwrap();
    assert_eq!(recipe.python.as_deref(), Some("3.12"));
    // Fields the task does not give still come from the entry.
    assert_eq!(recipe.packages, ["attrs==23.1.0"]);
    assert_eq!(
        spec.source.environment["python"],
        Origin::Task("python".into())
    );
    assert!(matches!(
        spec.source.environment["packages"],
        Origin::Recipe(_)
    ));
}

#[test]
fn the_recipe_entry_beats_detection() {
    let checkout = tempfile::tempdir().unwrap();
    fs::write(checkout.path().join("Cargo.toml"), "[package]\n").unwrap();
    let task = task("octo/demo", Some("1.0"), json!({}));
    let spec = resolve_spec(&task, checkout.path(), &recipes(USER_RECIPES)).unwrap();
    assert_eq!(spec.test_cmd, "pytest -rA -p no:cacheprovider");
    assert_eq!(spec.log_parser, "pytest_v2");
    assert_eq!(spec.eval_type, EvalType::FailOnly);
    let Origin::Recipe(entry) = &spec.source.test_cmd else {
        panic!("test_cmd from {:?}", spec.source.test_cmd);
    };
    assert_eq!(
        (entry.file.as_str(), entry.number, entry.line),
        ("user.toml", 1, 2)
    );
    assert_eq!(spec.source.log_parser, spec.source.test_cmd);
    assert_eq!(spec.directives, ["tests/test_demo.py"]);
}

#[test]
fn detection_applies_without_task_fields_or_recipe() {
    let checkout = tempfile::tempdir().unwrap();
    fs::write(checkout.path().join("Cargo.toml"), "[package]\n").unwrap();
    // Version 2.0 has no entry.
    let task = task("octo/demo", Some("2.0"), json!({}));
    let spec = resolve_spec(&task, checkout.path(), &recipes(USER_RECIPES)).unwrap();
    assert_eq!(spec.test_cmd, "cargo test --offline --no-fail-fast");
    assert_eq!(spec.log_parser, "cargo");
    assert!(spec.directives.is_empty());
    assert!(spec.recipe.is_none());
    assert!(spec.source.recipe_entry.is_none());
    let Origin::Detected(detection) = &spec.source.test_cmd else {
        panic!("test_cmd from {:?}", spec.source.test_cmd);
    };
    assert_eq!(detection.project, ProjectType::Cargo);
    assert_eq!(detection.evidence, "Cargo.toml");
}

#[test]
fn task_log_parser_beats_everything_and_accepts_swe_bench_names() {
    let task = task(
        "octo/demo",
        Some("1.0"),
        json!({"log_parser": "parse_log_astropy", "test_cmd": "make test"}),
    );
    let spec = resolve_spec(&task, nowhere(), &recipes(USER_RECIPES)).unwrap();
    assert_eq!(spec.log_parser, "pytest_v2");
    assert_eq!(spec.source.log_parser, Origin::Task("log_parser".into()));
    assert_eq!(spec.directives, ["tests/test_demo.py"]);
}

#[test]
fn unclear_task_command_takes_the_entry_parser() {
    let task = task("octo/demo", Some("1.0"), json!({"test_cmd": "make test"}));
    let spec = resolve_spec(&task, nowhere(), &recipes(USER_RECIPES)).unwrap();
    assert_eq!(spec.log_parser, "pytest_v2");
    assert!(matches!(spec.source.log_parser, Origin::Recipe(_)));
}

#[test]
fn language_field_chooses_the_default() {
    let task = task("octo/demo", None, json!({"language": "go"}));
    let spec = resolve_spec(&task, nowhere(), &RecipeTable::default()).unwrap();
    assert_eq!(spec.test_cmd, "go test -v ./...");
    assert_eq!(spec.log_parser, "gotest");
    assert!(spec.directives.is_empty());
}

#[test]
fn wildcard_entry_covers_unknown_versions() {
    let task = task("django/django", Some("9.9"), json!({}));
    let spec = resolve_spec(&task, nowhere(), &RecipeTable::shipped()).unwrap();
    assert_eq!(spec.log_parser, "django");
    assert_eq!(spec.directives, ["test_demo"]);
    assert!(spec.recipe.is_none());
}

#[test]
fn v5_fields_pass_through() {
    let script = "#!/bin/bash\n: '>>>>> Start Test Output'\npytest\n: '>>>>> End Test Output'\n";
    let task = task(
        "octo/demo",
        None,
        json!({"eval_script": script, "image": "swebench/sweb.eval.x86_64.octo_1776_demo-1", "eval_type": "FAIL_ONLY", "log_parser": "pytest"}),
    );
    let spec = resolve_spec(&task, nowhere(), &RecipeTable::default()).unwrap();
    assert_eq!(spec.eval_script.as_deref(), Some(script));
    assert!(spec.source.task_eval_script);
    assert_eq!(
        spec.image.as_deref(),
        Some("swebench/sweb.eval.x86_64.octo_1776_demo-1")
    );
    assert_eq!(spec.eval_type, EvalType::FailOnly);
}

#[test]
fn swe_rebench_install_config_is_read() {
    let task: Task =
        serde_json::from_str(&fs::read_to_string(fixture("swe_rebench_row.json")).unwrap())
            .unwrap();
    let spec = resolve_spec(&task, nowhere(), &RecipeTable::shipped()).unwrap();
    assert_eq!(
        spec.test_cmd,
        "pytest --no-header -rA --tb=line --color=no -p no:cacheprovider -W ignore::DeprecationWarning"
    );
    assert_eq!(
        spec.source.test_cmd,
        Origin::Task("install_config.test_cmd".into())
    );
    assert_eq!(spec.log_parser, "pytest");
    assert_eq!(spec.directives, ["tests/test_setup_profile.py"]);
    let recipe = spec.recipe.unwrap();
    assert_eq!(recipe.python.as_deref(), Some("3.9"));
    assert_eq!(recipe.packages, ["pytest", "pytest-cov", "pytest"]);
    assert_eq!(recipe.requirements, ["requirements.txt"]);
    assert_eq!(recipe.install.as_deref(), Some("pip install -e .[dev]"));
    // Its apt-get steps cannot run in a sandbox: what they install is checked on the host.
    assert!(recipe.pre_install.is_empty(), "{:?}", recipe.pre_install);
    assert_eq!(recipe.system_packages, ["gcc"]);
    assert_eq!(
        spec.source.environment["system_packages"],
        Origin::Task("install_config.pre_install".into())
    );
    assert!(recipe.env.is_empty());
    assert!(
        spec.image
            .unwrap()
            .ends_with("fair-workflows_1776_nanopub-140")
    );
}

#[test]
fn explain_lists_every_part() {
    let spec = resolve_spec(
        &swe_bench_row("django__django-16255"),
        nowhere(),
        &RecipeTable::shipped(),
    )
    .unwrap();
    let text = spec.source.to_string();
    let entry = spec.source.recipe_entry.as_ref().unwrap();
    let origin = format!(
        "recipe {} of swerve-eval/data/recipes.toml (line {})",
        entry.number, entry.line
    );
    let expected = format!(
        "test_cmd: {origin}\nlog_parser: {origin}\neval_type: default\n\
         directives: inferred from the test command\ninstall: {origin}\npython: {origin}\n\
         requirements: {origin}\nmatching recipe entry: {origin}"
    );
    assert_eq!(text, expected);
}

// --- Task field errors ------------------------------------------------------------------

fn error_for(extra: Value) -> String {
    let task = task("octo/demo", None, extra);
    resolve_spec(&task, nowhere(), &RecipeTable::default())
        .unwrap_err()
        .to_string()
}

#[test]
fn task_field_errors_name_the_task_and_field() {
    assert_eq!(
        error_for(json!({"log_parser": "pytset"})),
        "task \"octo__demo-1\": field \"log_parser\": unknown log parser \"pytset\"; known: pytest, pytest_options, pytest_v2, matplotlib, django, unittest, sympy, cargo, cargo_exact, gotest, junit, r2e_gym, swe_smith, tap, jq"
    );
    assert_eq!(
        error_for(json!({"eval_type": "both"})),
        "task \"octo__demo-1\": field \"eval_type\": unknown eval type \"both\"; expected \"pass_and_fail\" or \"fail_only\""
    );
    assert_eq!(
        error_for(json!({"test_cmd": ["pytest"]})),
        "task \"octo__demo-1\": field \"test_cmd\": expected a shell command, found a list"
    );
    assert_eq!(
        error_for(json!({"python": 3.9})),
        "task \"octo__demo-1\": field \"python\": expected a string such as \"3.9\", found a number"
    );
    assert_eq!(
        error_for(json!({"install_config": {"log_parser": "parse_log_nope"}})),
        "task \"octo__demo-1\": field \"install_config.log_parser\": unknown log parser \"parse_log_nope\"; known: pytest, pytest_options, pytest_v2, matplotlib, django, unittest, sympy, cargo, cargo_exact, gotest, junit, r2e_gym, swe_smith, tap, jq"
    );
    assert_eq!(
        error_for(json!({"install_config": "pytest"})),
        "task \"octo__demo-1\": field \"install_config\": expected an object, found a string"
    );
    assert_eq!(
        error_for(json!({"env": {"1X": "y"}})),
        "task \"octo__demo-1\": field \"env\": \"1X\" is not a valid environment variable name (letters, digits and _, not starting with a digit)"
    );
    assert_eq!(
        error_for(json!({"eval_script": "#!/bin/bash\npytest\n"})),
        "task \"octo__demo-1\": field \"eval_script\": lacks the \">>>>> Start Test Output\" marker that SWE-bench 5.x requires, so its log could not be graded"
    );
    assert_eq!(
        error_for(json!({"language": "cobol"})),
        "task \"octo__demo-1\": field \"language\": swerve has no default test command for language \"cobol\"; give \"test_cmd\" and \"log_parser\" in the task or a recipe"
    );
}

#[test]
fn unused_language_is_not_an_error_and_nulls_are_absent() {
    let task = task(
        "octo/demo",
        None,
        json!({"language": "cobol", "test_cmd": "pytest -rA", "python": null, "install": ""}),
    );
    let spec = resolve_spec(&task, nowhere(), &RecipeTable::default()).unwrap();
    assert_eq!(spec.log_parser, "pytest");
    assert!(spec.recipe.is_none());
}

// --- Detection --------------------------------------------------------------------------

fn detect(files: &[(&str, &str)]) -> (ProjectType, String, &'static str, &'static str) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    let found = detect_project(dir.path());
    (
        found.project,
        found.evidence,
        found.test_cmd,
        found.log_parser,
    )
}

/// Files of a checkout, and the expected type, evidence, command and parser.
type DetectionCase = (
    &'static [(&'static str, &'static str)],
    ProjectType,
    &'static str,
    &'static str,
    &'static str,
);

#[test]
fn detection_per_project_type() {
    use ProjectType::*;
    let cases: [DetectionCase; 13] = [
        (
            &[("pytest.ini", "[pytest]\n")],
            Pytest,
            "pytest.ini",
            "pytest -rA",
            "pytest",
        ),
        (
            &[(
                "pyproject.toml",
                "[project]\nname='x'\n\n[tool.pytest.ini_options]\n",
            )],
            Pytest,
            "pyproject.toml [tool.pytest]",
            "pytest -rA",
            "pytest",
        ),
        (
            &[("setup.cfg", "[metadata]\n[tool:pytest]\naddopts = -q\n")],
            Pytest,
            "setup.cfg [tool:pytest]",
            "pytest -rA",
            "pytest",
        ),
        (
            &[("tox.ini", "[tox]\n[pytest]\n")],
            Pytest,
            "tox.ini [pytest]",
            "pytest -rA",
            "pytest",
        ),
        (
            &[("conftest.py", "")],
            Pytest,
            "conftest.py",
            "pytest -rA",
            "pytest",
        ),
        (
            // pytest configuration wins over a package.json for the docs.
            &[("tests/conftest.py", ""), ("package.json", "{}")],
            Pytest,
            "tests/conftest.py",
            "pytest -rA",
            "pytest",
        ),
        (
            &[("tests/runtests.py", ""), ("package.json", "{}")],
            Django,
            "tests/runtests.py",
            "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1",
            "django",
        ),
        (
            &[("manage.py", "")],
            Django,
            "manage.py",
            "python3 manage.py test --verbosity 2",
            "django",
        ),
        (
            &[("runtests.py", "")],
            Django,
            "runtests.py",
            "python3 runtests.py --verbosity 2",
            "django",
        ),
        (
            &[("Cargo.toml", "[package]\n")],
            Cargo,
            "Cargo.toml",
            "cargo test --offline --no-fail-fast",
            "cargo",
        ),
        (
            &[("go.mod", "module x\n")],
            Go,
            "go.mod",
            "go test -v ./...",
            "gotest",
        ),
        (
            &[("package.json", "{}")],
            Npm,
            "package.json",
            "npm test",
            "junit",
        ),
        (
            // A pyproject.toml without pytest configuration is no evidence.
            &[
                ("pyproject.toml", "[project]\nname='x'\n"),
                ("setup.py", ""),
            ],
            Unittest,
            "no marker file found",
            "python3 -m unittest -v",
            "unittest",
        ),
    ];
    for (files, project, evidence, test_cmd, parser) in cases {
        assert_eq!(
            detect(files),
            (project, evidence.to_owned(), test_cmd, parser),
            "files {files:?}"
        );
    }
}

#[test]
fn detected_django_projects_get_module_directives() {
    let checkout = tempfile::tempdir().unwrap();
    fs::write(checkout.path().join("manage.py"), "").unwrap();
    let task = task("octo/site", None, json!({}));
    let spec = resolve_spec(&task, checkout.path(), &RecipeTable::default()).unwrap();
    assert_eq!(
        spec.test_command(),
        "python3 manage.py test --verbosity 2 tests.test_demo"
    );
}
