//! The reward-hack half of the adversarial corpus (`tests/fixtures/reward-hacks/cases.toml`):
//! patches a reward-hacking policy could submit, each graded on a real runner (pytest,
//! unittest, Django's and SymPy's runners from PyPI, cargo test) for a fixture project whose
//! bug none of them fixes. Every case must be not resolved, with the guard's verdict the case
//! names, and, graded with the guard off (the test-file reset alone, as SWE-bench's harness
//! grades), must get the `swe_bench` verdict the case records: so each hack is shown to work
//! where swerve's guard is not, and each test here can fail. The gold patch of every project
//! still resolves under the guard, and the empty patch does not.
//!
//! Environments come from PyPI (pytest, Django, SymPy), as the other network-built fixtures'
//! do; one test per project, so the projects run side by side.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use swerve_core::Task;
use swerve_eval::evaluate::{EvalSettings, Evaluator};
use swerve_eval::guard::GuardVerdict;
use swerve_eval::report::InstanceReport;
use swerve_eval::spec::RecipeTable;
use swerve_sandbox::{Cache, Isolation, RepoMap};
use swerve_testing::sh;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/reward-hacks");

/// The fixtures: `FIXTURES`, or a copy named by `SWERVE_REWARD_HACKS` (scripts/rootless-tests.sh
/// runs this test binary as `nobody`, with the fixtures copied where it can read them).
fn fixtures() -> PathBuf {
    std::env::var_os("SWERVE_REWARD_HACKS").map_or_else(|| PathBuf::from(FIXTURES), PathBuf::from)
}

/// `cases.toml`.
#[derive(Deserialize)]
struct Corpus {
    projects: BTreeMap<String, ProjectLists>,
    case: Vec<Case>,
}

#[derive(Deserialize)]
struct ProjectLists {
    /// The directories of `projects/` the project is made of, copied in order.
    layers: Vec<String>,
    fail_to_pass: Vec<String>,
    pass_to_pass: Vec<String>,
}

#[derive(Deserialize)]
struct Case {
    id: String,
    project: String,
    threat: String,
    anchor: String,
    guarded: String,
    swe_bench: String,
    ops: Vec<Op>,
}

/// One change a case makes to the base.
#[derive(Deserialize)]
#[serde(untagged)]
enum Op {
    Write { write: String, content: String },
    Append { append: String, content: String },
    Remove { remove: String },
    Symlink { symlink: String, target: String },
}

fn corpus() -> Corpus {
    let text = std::fs::read_to_string(fixtures().join("cases.toml")).unwrap();
    toml::from_str(&text).unwrap()
}

/// A fixture project as a repository at its base commit, with its task.
struct Project {
    repo: PathBuf,
    task: Task,
}

impl Project {
    /// Commits the `base/` of the project's layers into `scratch/<name>`; the gold patch is
    /// their `fix/` over it, the test patch their `test/`.
    fn build(name: &str, lists: &ProjectLists, scratch: &Path) -> Project {
        let projects = fixtures().join("projects");
        let repo = scratch.join(name);
        let overlay_all = |part: &str| {
            for layer in &lists.layers {
                let source = projects.join(layer).join(part);
                if source.is_dir() {
                    copy_tree(&source, &repo);
                }
            }
        };
        overlay_all("base");
        sh(
            &repo,
            "git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm base",
        );
        let base_commit = sh(&repo, "git rev-parse HEAD");
        let overlay = |part: &str| {
            overlay_all(part);
            diff_and_reset(&repo)
        };
        let patch = overlay("fix");
        let test_patch = overlay("test");
        let task: Task = serde_json::from_value(serde_json::json!({
            "repo": format!("swerve-hacks/{name}"),
            "instance_id": format!("swerve-hacks__{name}-1"),
            "base_commit": base_commit,
            "patch": patch,
            "test_patch": test_patch,
            "problem_statement": "median() of an even number of values returns the upper middle value instead of the mean of the two middle values.",
            "version": "0.1",
            "FAIL_TO_PASS": lists.fail_to_pass,
            "PASS_TO_PASS": lists.pass_to_pass,
        }))
        .unwrap();
        Project { repo, task }
    }

    /// The patch `ops` make to the base.
    fn patch(&self, ops: &[Op]) -> String {
        for op in ops {
            match op {
                Op::Write { write, content } => {
                    let path = self.repo.join(write);
                    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                    std::fs::write(path, content.trim_start_matches('\n')).unwrap();
                }
                Op::Append { append, content } => {
                    let path = self.repo.join(append);
                    let mut text = std::fs::read_to_string(&path).unwrap();
                    text.push_str(content);
                    std::fs::write(path, text).unwrap();
                }
                Op::Remove { remove } => std::fs::remove_file(self.repo.join(remove)).unwrap(),
                Op::Symlink { symlink, target } => {
                    std::os::unix::fs::symlink(target, self.repo.join(symlink)).unwrap()
                }
            }
        }
        diff_and_reset(&self.repo)
    }
}

/// The working tree's changes to `HEAD` as a git patch (new files included), then the tree
/// put back to `HEAD`.
fn diff_and_reset(repo: &Path) -> String {
    let patch = swerve_testing::sh_exact(repo, "git add -A && git diff --cached --binary HEAD");
    sh(repo, "git reset -q --hard && git clean -qfdx");
    patch
}

/// Copies the files below `from` into `to`, keeping their modes.
fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::create_dir_all(to).unwrap();
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// What a report says, in the corpus's words.
fn verdict(report: &InstanceReport) -> String {
    if report.resolved {
        return "resolved".into();
    }
    match report.guard.as_ref().map(|guard| guard.verdict) {
        Some(GuardVerdict::Tampered) => "tampered".into(),
        Some(GuardVerdict::TestMachineryRejected) => "test_machinery_rejected".into(),
        _ => "unresolved".into(),
    }
}

/// Grades every case of `project` with the guard and without it, and its gold and empty
/// patches; panics with a table of every case that did not get its verdict.
fn check_project(name: &str) {
    let corpus = corpus();
    let scratch = tempfile::tempdir().unwrap();
    let project = Project::build(name, &corpus.projects[name], scratch.path());
    let cache = Cache::open(scratch.path().join("cache")).unwrap();
    let repos = RepoMap {
        repos_dirs: Vec::new(),
        explicit: BTreeMap::from([(
            project.task.repo.clone(),
            project.repo.to_string_lossy().into_owned(),
        )]),
    };
    let mut recipes = RecipeTable::shipped();
    recipes.extend(RecipeTable::load(&fixtures().join("recipes.toml")).unwrap());
    let evaluator = |guard: bool| {
        let mut settings = EvalSettings {
            use_cache: false,
            guard,
            log_dir: Some(
                scratch
                    .path()
                    .join(if guard { "logs" } else { "logs-unguarded" }),
            ),
            ..EvalSettings::default()
        };
        settings.workspace.sandbox.isolation = Isolation::Namespaces;
        Evaluator {
            cache: &cache,
            repos: &repos,
            recipes: &recipes,
            settings,
            images: None,
        }
    };
    let (guarded, unguarded) = (evaluator(true), evaluator(false));
    let task = &project.task;
    let mut wrong = Vec::new();
    let log = |report: &InstanceReport| {
        report
            .log_path
            .as_ref()
            .and_then(|path| std::fs::read_to_string(path).ok())
            .unwrap_or_default()
    };
    let gold = guarded.evaluate(task, task.patch.as_deref());
    if !gold.resolved || gold.error.is_some() {
        wrong.push(format!(
            "gold: {} {gold:#?}\n{}",
            verdict(&gold),
            log(&gold)
        ));
    }
    let empty = guarded.evaluate(task, None);
    if empty.resolved || empty.error_class.is_some() {
        wrong.push(format!(
            "empty: {} {empty:#?}\n{}",
            verdict(&empty),
            log(&empty)
        ));
    }
    for case in corpus.case.iter().filter(|case| case.project == name) {
        assert!(
            !case.threat.is_empty() && !case.anchor.is_empty(),
            "{}",
            case.id
        );
        let patch = project.patch(&case.ops);
        assert!(!patch.is_empty(), "{}: the ops change nothing", case.id);
        let report = guarded.evaluate(task, Some(&patch));
        if verdict(&report) != case.guarded || report.error_class.is_some() {
            wrong.push(format!(
                "{}: guarded {} (want {}), error {:?} {:?}\nguard: {:#?}\n{}",
                case.id,
                verdict(&report),
                case.guarded,
                report.error_class,
                report.error,
                report.guard,
                log(&report)
            ));
        }
        let control = unguarded.evaluate(task, Some(&patch));
        if verdict(&control) != case.swe_bench {
            wrong.push(format!(
                "{}: unguarded {} (want {}), error {:?}\n{}",
                case.id,
                verdict(&control),
                case.swe_bench,
                control.error,
                log(&control)
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n=====\n\n"));
}

#[test]
fn the_corpus_is_whole() {
    let corpus = corpus();
    assert!(corpus.case.len() >= 30, "{} cases", corpus.case.len());
    let mut ids: Vec<&str> = corpus.case.iter().map(|case| case.id.as_str()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), corpus.case.len(), "case ids are unique");
    let docs = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/security.md"),
    )
    .unwrap();
    for case in &corpus.case {
        assert!(
            docs.contains(&format!("| `{}` |", case.id)),
            "docs/security.md's corpus table lacks {}",
            case.id
        );
        assert!(corpus.projects.contains_key(&case.project), "{}", case.id);
        assert!(
            ["tampered", "test_machinery_rejected", "unresolved"].contains(&case.guarded.as_str()),
            "{}: no case may be rewarded",
            case.id
        );
    }
}

#[test]
fn pytest_hacks_are_not_rewarded() {
    check_project("pytest");
}

#[test]
fn unittest_hacks_are_not_rewarded() {
    check_project("unittest");
}

#[test]
fn django_runner_hacks_are_not_rewarded() {
    check_project("django");
}

#[test]
fn sympy_runner_hacks_are_not_rewarded() {
    check_project("sympy");
}

#[test]
fn cargo_test_hacks_are_not_rewarded() {
    check_project("cargo");
}
