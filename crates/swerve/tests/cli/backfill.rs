//! `swerve data backfill` end to end: real trajectories of four scaffolds (the importers'
//! fixtures) backfilled by a loopback teacher that answers each request from its session
//! (the trajectory), step and attempt, with unusable replies where a test wants them. The
//! output is read back, rebuilt as a conversation and exported as snapshots; reruns resume,
//! a killed backfill leaves no partial output, and changed settings are refused.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Request, root, stderr, stdout, succeeded, swerve};
use swerve_agent::agile::structure::{self, Structured};
use swerve_agent::agile::{ContextPolicy, SendReasoning, Window};
use swerve_core::seeded::draw;
use swerve_core::trajectory::import::detect_and_import;
use swerve_core::trajectory::{Trajectory, read_trajectory};
use swerve_testing::ModelServer;
use swerve_tools::formats::{ModelOutput, Pick, ToolFormat, XmlFormat};

/// What the teacher answers for step `step` of trajectory `session`, on attempt `attempt`
/// (from 0).
type Answer = fn(&str, usize, usize) -> String;

/// A running teacher; it stops when dropped.
struct TeacherServer(ModelServer);

impl TeacherServer {
    fn start(delay: Duration, answer: Answer) -> Self {
        Self(ModelServer::answering_text(move |request| {
            let (step, attempt) = asked(&request.body);
            let text = answer(request.session(), step, attempt);
            std::thread::sleep(delay);
            text
        }))
    }

    /// Its base URL.
    fn url(&self) -> String {
        self.0.url()
    }

    /// The requests received so far.
    fn requests(&self) -> Vec<Request> {
        self.0.requests()
    }
}

/// The step a teacher request asks about and which attempt it is.
fn asked(body: &serde_json::Value) -> (usize, usize) {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let user = messages
        .get(1)
        .and_then(|message| message["content"].as_str())
        .unwrap_or("");
    let step = user
        .split("# The action of step ")
        .nth(1)
        .and_then(|rest| rest.split('\n').next())
        .and_then(|number| number.parse().ok())
        .unwrap_or(usize::MAX);
    (step, messages.len().saturating_sub(2) / 2)
}

fn good(step: usize) -> String {
    format!(
        "<reasoning>\nreasoning of step {step}\n</reasoning>\n<reasoning_digest>\ndigest of step {step}\n</reasoning_digest>"
    )
}

/// The R2E-Gym trajectory's step 1 needs a second try; the SWE-agent trajectory's step 5
/// never gets a usable reply.
fn picky(session: &str, step: usize, attempt: usize) -> String {
    if session.contains("nanopub") && step == 1 && attempt == 0 {
        return "<reasoning>\nthinking, but no digest\n</reasoning>".into();
    }
    if session.contains("pydicom") && step == 5 {
        return "I would rather not use the tags.".into();
    }
    good(step)
}

fn fixture(name: &str) -> PathBuf {
    root()
        .join("crates/swerve-core/tests/fixtures/trajectories")
        .join(name)
}

const R2E: &str = "r2e-gym.swe-rebench.jsonl";
const SWE_AGENT: &str = "swe-agent.pydicom__pydicom-1458.traj";
const MINI: &str = "mini-swe-agent.pytest-dev__pytest-7432.traj.json";
const OPENHANDS: &str = "openhands.output.jsonl";

/// The one trajectory of a fixture file.
fn source(name: &str) -> Trajectory {
    detect_and_import(fixture(name)).unwrap().remove(0)
}

/// The output file of the trajectory `id`.
fn output(out: &Path, id: &str) -> PathBuf {
    out.join("trajectories")
        .join(format!("{}.jsonl", id.replace('/', "_")))
}

fn backfill_args(out: &Path, url: &str, files: &[&str], extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = ["data", "backfill"].map(String::from).to_vec();
    args.extend(files.iter().map(|name| fixture(name).display().to_string()));
    for arg in [
        "--teacher",
        "teacher-model",
        "--base-url",
        url,
        "--out",
        out.to_str().unwrap(),
    ]
    .iter()
    .chain(extra)
    {
        args.push(arg.to_string());
    }
    args
}

fn run(cache: &Path, args: &[String]) -> std::process::Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    swerve(cache, &args)
}

/// Checks a backfilled trajectory against its source and the teacher's requests for it.
fn check_backfilled(out: &Path, source: &Trajectory, requests: &[Request]) {
    let id = &source.header.id;
    let read = read_trajectory(output(out, id)).unwrap();
    assert!(read.partial_line.is_none());
    let trajectory = read.trajectory;
    let header = &trajectory.header;
    let n = draw(0, id, 1, 4) as usize;
    assert_eq!(header.extra["reasoning_window"], n, "{id}");
    assert_eq!(header.extra["backfill"]["teacher"], "teacher-model");
    assert_eq!(
        header.extra["backfill"]["source"],
        fixture_for(id).display().to_string()
    );
    assert_eq!(header.prompt, source.header.prompt);
    assert_eq!(trajectory.outcome, source.outcome);
    assert_eq!(trajectory.steps.len(), source.steps.len());

    let format = XmlFormat::new(Pick::First);
    let has_call = |segment: &str| format.parse(&ModelOutput::from_text(segment)).is_ok();
    for (k, step) in trajectory.steps.iter().enumerate() {
        let parsed = structure::parse(&step.response_text, None, has_call).unwrap();
        let action = format.render_call("", source.steps[k].tool_call.as_ref().unwrap(), None);
        assert_eq!(
            parsed,
            Structured {
                reasoning: format!("reasoning of step {k}"),
                digest: format!("digest of step {k}"),
                action: action.content.trim().to_owned(),
            },
            "{id} step {k}"
        );
        assert_eq!(step.observation, source.steps[k].observation);
        assert_eq!(step.tokens, None);
    }

    // The file rebuilds its conversation, and every recorded request is the step's context
    // under the trajectory's window.
    let conversation = trajectory.conversation().unwrap();
    let window = ContextPolicy {
        window: Window::Last(n),
        send: SendReasoning::Field,
    };
    for k in 0..trajectory.steps.len() {
        assert_eq!(
            trajectory.messages_sent(k),
            window.before_turn(&conversation, k),
            "{id} step {k}"
        );
    }

    // The teacher saw the reasoning of exactly the last N steps.
    let mine: Vec<&Request> = requests.iter().filter(|r| r.session() == id).collect();
    for request in mine {
        let (step, _) = asked(&request.body);
        let user = request.body["messages"][1]["content"].as_str().unwrap();
        for earlier in 0..step {
            let shown = user.contains(&format!("<think>\nreasoning of step {earlier}\n</think>"));
            assert_eq!(
                shown,
                step - earlier <= n,
                "{id}: step {step} sees step {earlier}?"
            );
            assert!(user.contains(&format!("digest of step {earlier}")));
        }
    }
}

/// The fixture a trajectory id comes from.
fn fixture_for(id: &str) -> PathBuf {
    [R2E, SWE_AGENT, MINI, OPENHANDS]
        .into_iter()
        .map(fixture)
        .find(|path| detect_and_import(path).unwrap()[0].header.id == id)
        .unwrap()
}

#[test]
fn backfills_trajectories_of_every_format_rejects_what_it_cannot_and_resumes() {
    let cache = tempfile::tempdir().unwrap();
    let out = cache.path().join("backfill");
    let teacher = TeacherServer::start(Duration::ZERO, picky);
    let files = [R2E, SWE_AGENT, MINI, OPENHANDS];
    let args = backfill_args(&out, &teacher.url(), &files, &["--concurrency", "2"]);
    let first = run(cache.path(), &args);
    let printed = stdout(&first);
    assert!(first.status.success(), "{}\n{printed}", stderr(&first));

    let requests = teacher.requests();
    let (r2e, swe_agent, mini, openhands) = (
        source(R2E),
        source(SWE_AGENT),
        source(MINI),
        source(OPENHANDS),
    );
    check_backfilled(&out, &r2e, &requests);
    check_backfilled(&out, &openhands, &requests);
    // A retried step: the second request carried the reply and what was wrong with it.
    let retry = requests
        .iter()
        .find(|r| r.session() == r2e.header.id && asked(&r.body) == (1, 1))
        .unwrap();
    let feedback = retry.body["messages"][3]["content"].as_str().unwrap();
    assert!(feedback.starts_with("Your reply has no <reasoning_digest> tag."));

    // Rejections: unusable replies at the bounded number of attempts, and a step without a
    // call before any teacher call.
    let rejected = |id: &str| -> serde_json::Value {
        let path = out
            .join("rejected")
            .join(format!("{}.json", id.replace('/', "_")));
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    let pydicom = rejected(&swe_agent.header.id);
    assert_eq!(pydicom["teacher_calls"], 5 + 3);
    let reason = pydicom["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("step 5: 3 teacher replies in a row were not usable; the last: Your reply has no <reasoning> tag."),
        "{reason}"
    );
    let pytest = rejected(&mini.header.id);
    assert_eq!(pytest["teacher_calls"], 0);
    assert!(
        pytest["reason"]
            .as_str()
            .unwrap()
            .contains("has no tool call")
    );
    assert!(!output(&out, &swe_agent.header.id).exists());
    let sessions: Vec<&str> = requests.iter().map(|r| r.session()).collect();
    assert!(!sessions.contains(&mini.header.id.as_str()));

    // The summary counts it all: every teacher call answered 100 prompt and 20 completion
    // tokens.
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let calls = requests.len() as u64;
    assert_eq!(summary["trajectories"], 4);
    assert_eq!(summary["done"], 2);
    assert_eq!(summary["steps"], r2e.steps.len() + openhands.steps.len());
    assert_eq!(summary["rejected"].as_array().unwrap().len(), 2);
    assert_eq!(summary["teacher"]["teacher_calls"], calls);
    assert_eq!(summary["teacher"]["usage"]["prompt_tokens"], calls * 100);
    assert_eq!(summary["teacher"]["usage"]["completion_tokens"], calls * 20);
    assert_eq!(
        summary["this_invocation"]["teacher"]["teacher_calls"],
        calls
    );
    assert_eq!(summary["failed"].as_array().unwrap().len(), 0);
    assert!(
        printed.contains("2 of 4 trajectories backfilled (4 run this time), 2 rejected"),
        "{printed}"
    );
    assert!(printed.contains("(no price for this model)"), "{printed}");
    assert!(
        printed.contains("REJECTED swe-agent_swe-agent.pydicom__pydicom-1458: step 5"),
        "{printed}"
    );

    // The output feeds the snapshot exporter.
    let samples = cache.path().join("samples.jsonl");
    let exported = swerve(
        cache.path(),
        &[
            "data",
            "snapshots",
            output(&out, &r2e.header.id).to_str().unwrap(),
            "--window",
            "1",
            "--out",
            samples.to_str().unwrap(),
        ],
    );
    succeeded(&exported);
    let rows = std::fs::read_to_string(&samples).unwrap().lines().count();
    assert_eq!(rows, r2e.steps.len());

    // A rerun has nothing left to do and asks the teacher nothing.
    let again = run(cache.path(), &args);
    succeeded(&again);
    assert_eq!(teacher.requests().len(), requests.len());
    assert!(
        stdout(&again).contains("2 of 4 trajectories backfilled (0 run this time), 2 rejected")
    );

    // Other settings would mix two set-ups in one directory.
    let changed = backfill_args(&out, &teacher.url(), &files, &["--window", "2"]);
    let refused = run(cache.path(), &changed);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("different settings (backfill.window)"),
        "{}",
        stderr(&refused)
    );
    swerve_testing::assert_cmd_snapshot!("error_resume_with_other_settings", refused);
}

#[test]
fn a_killed_backfill_leaves_no_partial_output_and_resumes() {
    let cache = tempfile::tempdir().unwrap();
    let out = cache.path().join("backfill");
    let teacher = TeacherServer::start(Duration::from_millis(40), |_, step, _| good(step));
    let files = [OPENHANDS, R2E];
    let args = backfill_args(&out, &teacher.url(), &files, &["--concurrency", "1"]);
    let (first, second) = (source(OPENHANDS), source(R2E));

    // Kill it while the second trajectory is under way.
    let mut child = Command::new(env!("CARGO_BIN_EXE_swerve"))
        .args(&args)
        .env("SWERVE_CACHE_DIR", cache.path())
        .env_remove("RUST_LOG")
        .current_dir(root())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let second_asked = || {
        teacher
            .requests()
            .iter()
            .filter(|r| r.session() == second.header.id)
            .count()
    };
    while second_asked() < 3 {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the backfill is stuck"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(output(&out, &first.header.id).exists());
    assert!(!output(&out, &second.header.id).exists());

    // A cut-off copy at the output path (not written by swerve) does not count as done.
    let finished = std::fs::read_to_string(output(&out, &first.header.id)).unwrap();
    let cut: String = finished
        .lines()
        .take(3)
        .map(|line| format!("{line}\n"))
        .collect();
    std::fs::write(output(&out, &second.header.id), cut).unwrap();

    let before = teacher.requests().len();
    let resumed = run(cache.path(), &args);
    succeeded(&resumed);
    let requests = teacher.requests();
    assert!(
        requests[before..]
            .iter()
            .all(|request| request.session() == second.header.id),
        "the finished trajectory was backfilled again"
    );
    assert_eq!(requests.len() - before, second.steps.len());
    check_backfilled(&out, &first, &requests);
    check_backfilled(&out, &second, &requests[before..]);
}
