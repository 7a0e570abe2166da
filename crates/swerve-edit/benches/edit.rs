//! SWE-Edit's edit path and PR-Edit's throughput, each beside its anchor.
//!
//! - Edit application: 50 SEARCH/REPLACE blocks on a 10,000-line file, applied in memory
//!   with the changed regions rendered (what the agent sees), beside SWE-Edit's algorithm
//!   in Python (regex blocks, `count`, `replace`, `difflib` regions; timed inside the
//!   interpreter, so without its start-up) and `git apply` of the equivalent diff; plus the
//!   cost of the two matching aids when they act.
//! - PR-Edit: mining instances from a 200-commit history beside `git log -p` of it, and a
//!   run of 200 instances against an editor served on loopback HTTP beside the same model
//!   calls made bare (no application, scoring or recording).
//!
//! Run with `cargo bench -p swerve-edit --bench edit` (`SWERVE_BENCH_QUICK=1` for fewer runs).

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use swerve_edit::bench::{MineOptions, RunOptions, mine, run_and_summarize};
use swerve_edit::blocks::{MatchOptions, apply};
use swerve_edit::diff::unified_diff;
use swerve_edit::regions::changed_regions;
use swerve_llm::{HttpModel, HttpModelConfig, Model, ModelRequest};
use swerve_testing::bench::{Report, Samples, time_n};
use swerve_testing::{ModelServer, sh};

const PYTHON_ANCHOR: &str = r#"
import difflib, json, re, sys, time

BLOCK = re.compile(r"<<<<<<< SEARCH\n(.*?)=======\n(.*?)>>>>>>> REPLACE", re.DOTALL)

def edit(text, reply):
    new = text
    for search, replace in BLOCK.findall(reply):
        search, replace = search.rstrip("\n"), replace.rstrip("\n")
        if new.count(search) != 1:
            raise SystemExit("block does not match once")
        new = new.replace(search, replace, 1)
    before, after = text.splitlines(), new.splitlines()
    spans = []
    for tag, _, _, j1, j2 in difflib.SequenceMatcher(None, before, after).get_opcodes():
        if tag == "equal":
            continue
        span = [max(0, j1 - 2), min(len(after), j2 + 2)]
        if spans and span[0] - spans[-1][1] <= 10:
            spans[-1][1] = max(spans[-1][1], span[1])
        else:
            spans.append(span)
    parts = ["\n".join(f"{n + 1:6d}\t{after[n]}" for n in range(a, b)) for a, b in spans]
    return new, "\n".join(parts)

text, reply, runs = open(sys.argv[1]).read(), open(sys.argv[2]).read(), int(sys.argv[3])
times = []
for _ in range(runs + 1):
    started = time.perf_counter()
    edit(text, reply)
    times.append(time.perf_counter() - started)
print(json.dumps(times[1:]))
"#;

fn main() {
    let quick = std::env::var_os("SWERVE_BENCH_QUICK").is_some();
    let scratch = tempfile::tempdir().unwrap();
    let mut report = Report::default();
    edit_application(scratch.path(), quick, &mut report);
    edit_bench(scratch.path(), quick, &mut report);
    report.print();
}

/// A 10,000-line Python file: 2,000 functions of five lines.
fn large_file() -> String {
    (0..2000)
        .map(|i| {
            format!(
                "def function_{i}(value):\n    \"\"\"Scale value by {i}.\"\"\"\n    result = value * {i}\n    return result + {}\n\n",
                i % 7
            )
        })
        .collect()
}

/// 50 blocks, each rewriting the body of one function in forty, its lines indented by
/// `indent`.
fn fifty_blocks(indent: &str) -> String {
    (0..50)
        .map(|k| {
            let i = k * 40 + 3;
            format!(
                "<<<<<<< SEARCH\n{indent}result = value * {i}\n{indent}return result + {}\n=======\n{indent}result = value * {i} + 1\n{indent}return result - {}\n>>>>>>> REPLACE\n",
                i % 7,
                i % 7
            )
        })
        .collect()
}

fn edit_application(scratch: &Path, quick: bool, report: &mut Report) {
    let text = large_file();
    let reply = fifty_blocks("    ");
    let paper = MatchOptions::default();
    let expected = apply(&text, &reply, &paper).unwrap().text;
    let runs = if quick { 20 } else { 200 };
    let what = "apply 50 blocks to a 10,000-line file and render the changed regions";
    let swerve = time_n(runs, || {
        let applied = apply(&text, &reply, &paper).unwrap();
        assert!(!changed_regions(&text, &applied.text).is_empty());
    });
    report.row(what, "swerve (in memory)", &swerve, None);

    std::fs::write(scratch.join("large.py"), &text).unwrap();
    std::fs::write(scratch.join("reply.txt"), &reply).unwrap();
    let python_runs = if quick { 5 } else { 30 };
    let output = Command::new("python3")
        .args(["-c", PYTHON_ANCHOR])
        .args([scratch.join("large.py"), scratch.join("reply.txt")])
        .arg(python_runs.to_string())
        .output()
        .expect("python3 runs the anchor");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let seconds: Vec<f64> = serde_json::from_slice(&output.stdout).unwrap();
    let python = Samples::from(seconds.into_iter().map(Duration::from_secs_f64).collect());
    report.row(
        what,
        "SWE-Edit's algorithm in Python, in-process (anchor)",
        &python,
        Some(&swerve),
    );

    let repo = scratch.join("apply");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(
        repo.join("edit.patch"),
        unified_diff(&text, &expected, "a/large.py", "b/large.py"),
    )
    .unwrap();
    let git_apply = time_n(if quick { 5 } else { 30 }, || {
        std::fs::write(repo.join("large.py"), &text).unwrap();
        sh(&repo, "git apply edit.patch");
    });
    assert_eq!(
        std::fs::read_to_string(repo.join("large.py")).unwrap(),
        expected
    );
    report.row(
        what,
        "`git apply` of the equivalent diff (anchor)",
        &git_apply,
        Some(&swerve),
    );

    let aided = MatchOptions {
        whitespace_fallback: true,
        did_you_mean: true,
    };
    let misindented = fifty_blocks("  ");
    let fallback = time_n(if quick { 5 } else { 50 }, || {
        let applied = apply(&text, &misindented, &aided).unwrap();
        assert_eq!(applied.fallbacks.len(), 50);
    });
    report.row(
        "the same 50 blocks indented by 2 instead of 4: every block through the whitespace fallback",
        "swerve",
        &fallback,
        None,
    );
    let typo = "<<<<<<< SEARCH\n    result = valeu * 1003\n    return result + 2\n=======\nx\n>>>>>>> REPLACE\n";
    let nearest = time_n(if quick { 5 } else { 50 }, || {
        let error = apply(&text, typo, &aided).unwrap_err();
        assert!(error.message().contains("Did you mean lines"));
    });
    report.row(
        "a 2-line SEARCH with a typo: \"did you mean\" over 10,000 lines",
        "swerve",
        &nearest,
        None,
    );
}

/// The editor's answer to a request: the one-line block its instruction
/// (`Change VALUE_{k} from {old} to {new} in {module}`) asks for.
fn answer(request: &serde_json::Value) -> String {
    let user = request["messages"][1]["content"].as_str().unwrap_or("");
    let asked = user.split_once("Instruction: Change ").map(|(_, rest)| {
        let words: Vec<&str> = rest.split_whitespace().collect();
        (words[0], words[2], words[4])
    });
    match asked {
        Some((name, old, new)) => {
            format!("<<<<<<< SEARCH\n{name} = {old}\n=======\n{name} = {new}\n>>>>>>> REPLACE\n")
        }
        None => "no instruction".to_owned(),
    }
}

fn edit_bench(scratch: &Path, quick: bool, report: &mut Report) {
    // 20 modules of 300 lines; 200 commits, each changing one constant of one module.
    let repo = scratch.join("history");
    std::fs::create_dir_all(&repo).unwrap();
    sh(&repo, "git init -q -b main");
    let mut modules: Vec<Vec<String>> = (0..20)
        .map(|m| {
            (0..300)
                .map(|line| format!("VALUE_{} = {line}", m * 1000 + line))
                .collect()
        })
        .collect();
    let write = |modules: &[Vec<String>]| {
        for (m, lines) in modules.iter().enumerate() {
            std::fs::write(repo.join(format!("module_{m}.py")), lines.join("\n") + "\n").unwrap();
        }
    };
    write(&modules);
    sh(
        &repo,
        "git add -A && git -c user.name=b -c user.email=b@b commit -q -m init",
    );
    for commit in 0..200 {
        let (m, line) = (commit % 20, (commit * 37) % 300);
        let name = format!("VALUE_{}", m * 1000 + line);
        let old = modules[m][line].rsplit(' ').next().unwrap().to_owned();
        let new = 100_000 + commit;
        modules[m][line] = format!("{name} = {new}");
        std::fs::write(
            repo.join(format!("module_{m}.py")),
            modules[m].join("\n") + "\n",
        )
        .unwrap();
        sh(
            &repo,
            &format!(
                "git -c user.name=b -c user.email=b@b commit -q -am 'Change {name} from {old} to {new} in module_{m}'"
            ),
        );
    }

    let options = MineOptions::default();
    let mined = time_n(if quick { 2 } else { 5 }, || {
        assert_eq!(mine(&repo, &options).unwrap().len(), 200);
    });
    report.row(
        "mine 200 instances from a 200-commit history",
        "swerve edit-bench build (no writer)",
        &mined,
        None,
    );
    let log = time_n(if quick { 2 } else { 5 }, || {
        sh(&repo, "git log -p --no-merges > /dev/null");
    });
    report.row(
        "mine 200 instances from a 200-commit history",
        "`git log -p` of the history (anchor)",
        &log,
        Some(&mined),
    );

    let instances = mine(&repo, &options).unwrap();
    let editor_server = ModelServer::answering_text(|request| answer(&request.body));
    let url = editor_server.url();
    let editor = HttpModel::new(HttpModelConfig::new(&url, "bench-editor")).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let run_options = RunOptions {
        concurrency: 8,
        matching: MatchOptions::default(),
        format: swerve_edit::EditFormat::Adaptive,
    };
    let repeats = if quick { 2 } else { 5 };
    let mut per_run = Vec::new();
    let mut recorded = Vec::new();
    for _ in 0..=repeats {
        recorded.clear();
        let (_, summary) = runtime
            .block_on(run_and_summarize(
                &instances,
                &editor,
                None,
                &run_options,
                |result| {
                    recorded.push(serde_json::to_string(result)?);
                    Ok::<(), serde_json::Error>(())
                },
            ))
            .unwrap();
        assert_eq!(summary.exact_match.count, 200, "{summary:?}");
        per_run.push(Duration::from_secs_f64(summary.wall_seconds));
    }
    per_run.remove(0);
    let bench = Samples::from(per_run);
    let what = "edit-bench run: 200 instances, loopback editor, 8 at once";
    report.row(
        what,
        "swerve edit-bench run (call, apply, score, record)",
        &bench,
        None,
    );

    let requests: Vec<ModelRequest> = instances
        .iter()
        .map(|instance| {
            ModelRequest::chat(vec![
                swerve_llm::Message::new(swerve_llm::Role::System, "edit"),
                swerve_llm::Message::new(
                    swerve_llm::Role::User,
                    format!(
                        "{}\nInstruction: {}",
                        instance.original, instance.instruction
                    ),
                ),
            ])
        })
        .collect();
    let editor = Arc::new(editor);
    let bare = (0..=repeats)
        .map(|_| {
            let started = Instant::now();
            runtime.block_on(async {
                let slots = Arc::new(tokio::sync::Semaphore::new(8));
                let calls: Vec<_> = requests
                    .iter()
                    .map(|request| {
                        let (editor, slots, request) =
                            (editor.clone(), slots.clone(), request.clone());
                        tokio::spawn(async move {
                            let _slot = slots.acquire().await.unwrap();
                            editor.complete(&request).await.is_ok()
                        })
                    })
                    .collect();
                for call in calls {
                    assert!(call.await.unwrap());
                }
            });
            started.elapsed()
        })
        .skip(1)
        .collect();
    report.row(
        what,
        "the same 200 model calls alone (anchor)",
        &Samples::from(bare),
        Some(&bench),
    );
    report.note(format!(
        "edit-bench throughput: {:.0} instances per second through the loopback editor (p50 run {:.1} ms for 200)",
        200.0 / (bench.p50_ms() / 1000.0),
        bench.p50_ms()
    ));
}
