//! PR-Edit end to end at the library level: instances mined from a git repository the test
//! builds (only commits changing one source file qualify), instructions rewritten by a
//! model, and a run of an editor model answering per instruction, whose metrics are checked
//! one by one, including the normalization edge case of comment-like text in strings.

use std::path::Path;
use std::process::Command;

use swerve_edit::bench::judge::JudgeSource;
use swerve_edit::bench::writer::write_instructions;
use swerve_edit::bench::{EditInstance, MineOptions, Rate, RunOptions, mine, run_and_summarize};
use swerve_edit::blocks::{MatchOptions, Mode};
use swerve_edit::subagent::EditStatus;
use swerve_llm::{Model, ModelError, ModelFuture, ModelInput, ModelRequest, ModelResponse, Usage};

fn git(repo: &Path, args: &[&str]) {
    let output = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn commit(repo: &Path, files: &[(&str, &str)], message: &str) {
    for (path, text) in files {
        let path = repo.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    git(repo, &["add", "-A"]);
    git(
        repo,
        &["commit", "-q", "--allow-empty-message", "-m", message],
    );
}

const CALC: &str = "import math\n\n\ndef perimeter(r):\n    return 2 * math.pi * r\n";
const CLIENT: &str = "BASE = \"http://old.example/api\"  # production\nTIMEOUT = 10\n";
const UTIL: &str = "function total(xs) {\n  return xs.reduce((a, b) => a + b, 0);\n}\n";
const GREET: &str = "def greet():\n    print(\"hi # there\")\n";

/// A repository whose history holds five qualifying commits among others.
fn repository(root: &Path) -> std::path::PathBuf {
    let repo = root.join("shapes");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    commit(
        &repo,
        &[
            ("calc.py", CALC),
            ("client.py", CLIENT),
            ("web/util.js", UTIL),
            ("greet.py", GREET),
            ("README.md", "# shapes\n"),
        ],
        "Initial import",
    );
    commit(
        &repo,
        &[("calc.py", &CALC.replace("2 * math.pi", "math.tau"))],
        "Use math.tau in perimeter",
    );
    commit(
        &repo,
        &[("README.md", "# shapes\n\nGeometry.\n")],
        "Describe the project",
    );
    commit(
        &repo,
        &[
            ("calc.py", &CALC.replace("perimeter", "circumference")),
            ("greet.py", "x = 1\n"),
        ],
        "Two files at once",
    );
    commit(
        &repo,
        &[("client.py", &CLIENT.replace("old.example", "new.example"))],
        "Point the client at the new API host",
    );
    commit(&repo, &[("greet.py", &GREET.replace("hi", "hello"))], "");
    commit(&repo, &[("new.py", "print(1)\n")], "Add a new file");
    let big: String = (0..40).map(|n| format!("line_{n} = {n}\n")).collect();
    commit(
        &repo,
        &[("client.py", &format!("{CLIENT}{big}"))],
        "A change too large",
    );
    commit(
        &repo,
        &[("client.py", &CLIENT.replace("old.example", "new.example"))],
        "Drop the generated lines",
    );
    commit(
        &repo,
        &[("web/util.js", &UTIL.replace("total", "sumAll"))],
        "Rename total to sumAll",
    );
    git(&repo, &["checkout", "-q", "-b", "side"]);
    commit(
        &repo,
        &[("greet.py", &GREET.replace("hi", "hey"))],
        "Say hey",
    );
    git(&repo, &["checkout", "-q", "main"]);
    commit(&repo, &[("calc.py", "import math\n")], "Strip calc down");
    git(&repo, &["merge", "-q", "--no-ff", "--no-edit", "side"]);
    repo
}

#[test]
fn mining_keeps_single_file_source_commits_within_limits() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repository(dir.path());
    let options = MineOptions {
        max_changed_lines: 20,
        ..MineOptions::default()
    };
    let instances = mine(&repo, &options).unwrap();
    let summary: Vec<(&str, &str)> = instances
        .iter()
        .map(|instance| (instance.path.as_str(), instance.instruction.as_str()))
        .collect();
    assert_eq!(
        summary,
        [
            ("calc.py", "Strip calc down"),
            ("greet.py", "Say hey"),
            ("web/util.js", "Rename total to sumAll"),
            ("client.py", "Point the client at the new API host"),
            ("calc.py", "Use math.tau in perimeter"),
        ]
    );
    let tau = &instances[4];
    assert_eq!(tau.original, CALC);
    assert_eq!(tau.target, CALC.replace("2 * math.pi", "math.tau"));
    assert!(
        tau.instance_id.starts_with("shapes@") && tau.instance_id.len() == "shapes@".len() + 12
    );
    assert_eq!(tau.metadata["lines_added"], 1);
    assert_eq!(tau.metadata["lines_deleted"], 1);
    assert_eq!(tau.metadata["subject"], "Use math.tau in perimeter");
    assert_eq!(tau.metadata["instruction_source"], "commit_message");
    let limited = MineOptions {
        max_instances: 2,
        extensions: vec!["py".into()],
        ..options
    };
    let paths: Vec<String> = mine(&repo, &limited)
        .unwrap()
        .into_iter()
        .map(|i| i.path)
        .collect();
    assert_eq!(paths, ["calc.py", "greet.py"]);
    let error = mine(&dir.path().join("nowhere"), &MineOptions::default()).unwrap_err();
    assert!(
        error.to_string().starts_with("git log --no-merges"),
        "{error}"
    );
}

/// A model that answers by the instruction (or file) its request carries.
struct Answers(Vec<(&'static str, Result<String, ModelError>)>);

impl Model for Answers {
    fn complete<'a>(&'a self, request: &'a ModelRequest) -> ModelFuture<'a> {
        let ModelInput::Chat { messages, .. } = &request.input else {
            panic!("chat requests only")
        };
        let user = messages[1].content.as_ref().unwrap().text();
        let answer = self
            .0
            .iter()
            .find(|(key, _)| user.contains(key))
            .map(|(_, answer)| answer.clone())
            .unwrap_or_else(|| Err(ModelError::malformed(format!("no answer for {user}"))));
        let answer = answer.map(|text| ModelResponse {
            usage: Usage {
                prompt_tokens: 100,
                completion_tokens: 10,
                ..Usage::default()
            },
            cost: 0.001,
            ..ModelResponse::text(text)
        });
        Box::pin(std::future::ready(answer))
    }

    fn name(&self) -> &str {
        "answers"
    }
}

fn block(search: &str, replace: &str) -> String {
    format!("<<<<<<< SEARCH\n{search}\n=======\n{replace}\n>>>>>>> REPLACE\n")
}

fn rate(count: usize, of: usize) -> Rate {
    Rate {
        count,
        of,
        rate: count as f64 / of as f64,
    }
}

#[tokio::test]
async fn a_run_scores_each_instance_and_the_summary_adds_up() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repository(dir.path());
    let mut instances = mine(
        &repo,
        &MineOptions {
            max_changed_lines: 20,
            ..MineOptions::default()
        },
    )
    .unwrap();
    // The writer rewrites every instruction but one, whose call fails.
    let writer = Answers(vec![
        (
            "Commit message:\nStrip calc down",
            Ok("<think>hm</think>\nRemove perimeter; keep the import.".into()),
        ),
        (
            "Commit message:\nSay hey",
            Ok("In greet, print \"hey # there\" instead.".into()),
        ),
        (
            "Commit message:\nRename total",
            Ok("Rename the function total to sumAll.".into()),
        ),
        (
            "Commit message:\nPoint the client",
            Ok("Change BASE to http://new.example/api.".into()),
        ),
        (
            "Commit message:\nUse math.tau",
            Err(ModelError::RateLimited { attempts: 1 }),
        ),
    ]);
    write_instructions(&writer, &mut instances, 3).await;
    let by_path = |path: &str| instances.iter().find(|i| i.path == path).unwrap();
    assert_eq!(
        by_path("web/util.js").instruction,
        "Rename the function total to sumAll."
    );
    assert_eq!(
        by_path("web/util.js").metadata["commit_message"],
        "Rename total to sumAll"
    );
    assert_eq!(
        by_path("web/util.js").metadata["instruction_source"],
        "writer"
    );
    let tau: &EditInstance = instances
        .iter()
        .find(|i| i.instruction == "Use math.tau in perimeter")
        .unwrap();
    assert_eq!(tau.metadata["instruction_source"], "commit_message");
    assert!(
        tau.metadata["writer_error"]
            .as_str()
            .unwrap()
            .contains("429")
    );

    let editor = Answers(vec![
        // Exact.
        (
            "Use math.tau",
            Ok(block(
                "    return 2 * math.pi * r",
                "    return math.tau * r",
            )),
        ),
        // Changes the comment, not the URL: SWE-Edit's normalization cuts both lines at
        // `//` and calls it a match; the string-preserving one does not.
        (
            "Change BASE",
            Ok(block(
                "BASE = \"http://old.example/api\"  # production",
                "BASE = \"http://old.example/api\"  # staging",
            )),
        ),
        // A whole-file rewrite, right but for indentation and an added comment.
        (
            "Rename the function",
            Ok(block(
                "",
                "function sumAll(xs) {\n    // add them up\n    return xs.reduce((a, b) => a + b, 0);\n}\n",
            )),
        ),
        // Well-formed, matches nothing.
        (
            "print \"hey",
            Ok(block("    print(\"hi\")", "    print(\"hey\")")),
        ),
        // No blocks at all.
        ("Remove perimeter", Ok("Sure, I removed it.".into())),
    ]);
    let judge = Answers(vec![
        (
            "# staging",
            Ok("The host differs.\nResult: NOT_EQUIVALENT".into()),
        ),
        (
            "sumAll",
            Ok("Same function.\n**Result:** EQUIVALENT".into()),
        ),
    ]);
    let options = RunOptions {
        concurrency: 3,
        matching: MatchOptions::default(),
        format: swerve_edit::EditFormat::Adaptive,
    };
    let mut recorded = Vec::new();
    let (results, summary) =
        run_and_summarize(&instances, &editor, Some(&judge), &options, |result| {
            recorded.push(result.instance_id.clone());
            Ok::<(), std::convert::Infallible>(())
        })
        .await
        .unwrap();
    let ids: Vec<&String> = instances.iter().map(|i| &i.instance_id).collect();
    assert_eq!(
        recorded.iter().collect::<Vec<_>>(),
        ids,
        "results come in the instances' order"
    );

    // Results by the start of their instance's instruction.
    let by = |instruction: &str| {
        let (result, _) = results
            .iter()
            .zip(&instances)
            .find(|(_, instance)| instance.instruction.starts_with(instruction))
            .unwrap();
        result
    };
    let row = |instruction: &str| {
        let r = by(instruction);
        (
            r.status,
            r.format_ok,
            r.applied,
            r.mode,
            r.exact_match,
            r.normalized_match,
            r.normalized_match_strings,
        )
    };
    use EditStatus::{Applied, FormatError, MatchFailure};
    let (targeted, rewrite) = (Some(Mode::Targeted), Some(Mode::Rewrite));
    assert_eq!(
        row("Use math.tau"),
        (Applied, true, true, targeted, true, true, true)
    );
    assert_eq!(
        row("Change BASE"),
        (Applied, true, true, targeted, false, true, false)
    );
    assert_eq!(
        row("Rename the"),
        (Applied, true, true, rewrite, false, true, true)
    );
    assert_eq!(
        row("In greet"),
        (MatchFailure, true, false, targeted, false, false, false)
    );
    assert_eq!(
        row("Remove perimeter"),
        (FormatError, false, false, None, false, false, false)
    );
    let verdict = |instruction: &str| {
        let judgement = by(instruction).judge.as_ref().unwrap();
        (judgement.source, judgement.equivalent)
    };
    assert_eq!(
        verdict("Use math.tau"),
        (JudgeSource::ExactMatch, Some(true))
    );
    assert_eq!(verdict("Change BASE"), (JudgeSource::Model, Some(false)));
    assert_eq!(verdict("Rename the"), (JudgeSource::Model, Some(true)));
    assert_eq!(verdict("In greet"), (JudgeSource::NotApplied, Some(false)));
    assert_eq!(
        verdict("Remove perimeter"),
        (JudgeSource::NotApplied, Some(false))
    );
    assert_eq!(by("Rename the").usage.prompt_tokens, 100);
    assert!(
        by("In greet")
            .message
            .starts_with("ERROR: Could not find the search block")
    );
    assert!(by("Remove perimeter").reply.starts_with("Sure"));

    assert_eq!(summary.instances, 5);
    assert_eq!(summary.format_success, rate(4, 5));
    assert_eq!(summary.match_failures, rate(1, 5));
    assert_eq!(summary.model_errors, rate(0, 5));
    assert_eq!(summary.applied, rate(3, 5));
    assert_eq!(summary.exact_match, rate(1, 5));
    assert_eq!(summary.normalized_match, rate(3, 5));
    assert_eq!(summary.normalized_match_strings, rate(2, 5));
    assert_eq!(summary.whole_file_rewrite, rate(1, 4));
    assert_eq!(summary.fallback_used, rate(0, 5));
    assert_eq!(summary.judge_equivalent, Some(rate(2, 5)));
    assert_eq!(summary.judge_errors, 0);
    assert_eq!(summary.editor_usage.prompt_tokens, 500);
    assert!((summary.editor_cost - 0.005).abs() < 1e-12);
    assert_eq!(summary.judge_usage.prompt_tokens, 200, "two judge calls");
    assert!(summary.instances_per_second > 0.0);
}
