//! `swerve view` in a real headless Chromium: how long a run of 500 trajectories and a
//! 200-step trajectory take from navigation to rendered (the page marks itself rendered
//! once its data is drawn), beside anchors measured in the same run: the page's own JSON
//! fetched over HTTP without a browser, and `swerve traj show` of the same trajectory.
//!
//! The data is the bundled replay run (`swerve run --model replay`, 8 rollouts), copied to
//! 500 rollouts (ids `<instance>__<n>`), and its longest trajectory's steps cycled to 200
//! steps, each request recorded as a delta of the previous one as swerve writes them.
//!
//! Run with `cargo bench -p swerve-cli --no-default-features --bench view` (needs `chromium`;
//! the viewer does not use the default features); `SWERVE_BENCH_QUICK=1` repeats fewer
//! times. Prints a Markdown table for `BENCHMARKS.md`.

// The end-to-end tests' support, for `RunArgs`, `View` and `http`.
#[path = "../tests/cli/common/mod.rs"]
#[allow(unused_imports)]
mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::{RunArgs, View, http, succeeded};
use swerve_core::trajectory::{
    Message, MessagesDelta, MessagesSent, Role, Trajectory, Usage, read_trajectory,
    write_trajectory,
};
use swerve_testing::Browser;
use swerve_testing::bench::{Report, Samples};

const ROLLOUTS: usize = 500;
const STEPS: usize = 200;

fn main() {
    let quick = std::env::var_os("SWERVE_BENCH_QUICK").is_some();
    let repeats = if quick { 3 } else { 10 };
    let browser = Browser::start().expect("the view bench needs chromium");
    let scratch = tempfile::tempdir().unwrap();
    let replay = scratch.path().join("replay");
    succeeded(&RunArgs::new(&replay).model("replay").run(scratch.path()));
    let sources: Vec<Trajectory> = {
        let mut files: Vec<_> = std::fs::read_dir(replay.join("trajectories"))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .collect();
        files.sort();
        files
            .iter()
            .map(|file| read_trajectory(file).unwrap().trajectory)
            .collect()
    };

    let big = scratch.path().join("run-500");
    std::fs::create_dir_all(big.join("trajectories")).unwrap();
    std::fs::copy(replay.join("summary.json"), big.join("summary.json")).unwrap();
    for n in 0..ROLLOUTS {
        let mut trajectory = sources[n % sources.len()].clone();
        let id = format!("{}__{}", trajectory.header.instance_id, n / sources.len());
        trajectory.header.id = id.clone();
        write_trajectory(big.join(format!("trajectories/{id}.jsonl")), &trajectory).unwrap();
    }
    let long = scratch.path().join("run-long");
    std::fs::create_dir_all(long.join("trajectories")).unwrap();
    std::fs::copy(replay.join("summary.json"), long.join("summary.json")).unwrap();
    let long_file = long.join("trajectories/long__0.jsonl");
    write_trajectory(&long_file, &lengthen(&sources)).unwrap();

    let view = View::start(&[&big, &long], &["--listen", "127.0.0.1:0"]);
    let (url, address) = (view.url.clone(), view.address.clone());
    let mut page = browser.page();

    let mut rendered = |route: &str, check: &str| {
        let mut durations = Vec::new();
        for _ in 0..=repeats {
            page.navigate("about:blank");
            let started = Instant::now();
            page.call(
                "Page.navigate",
                serde_json::json!({"url": format!("{url}{route}")}),
            );
            page.wait_for(check, Duration::from_secs(60));
            durations.push(started.elapsed());
        }
        // The first load reads and parses the files (the server's cache is cold).
        let first = durations.remove(0);
        (Samples::single(first), Samples::from(durations))
    };
    let (run_cold, run_page) = rendered(
        "#/run/0",
        &format!(
            "document.body.getAttribute('data-page') === 'run' && document.querySelectorAll('tr.rollout').length === {ROLLOUTS}"
        ),
    );
    let (traj_cold, traj_page) = rendered(
        "#/traj/r1%3Along__0",
        &format!(
            "document.body.getAttribute('data-page') === 'traj' && document.querySelectorAll('section.step').length === {STEPS}"
        ),
    );
    let fetch = |path: &str| {
        let mut durations = Vec::new();
        for _ in 0..=repeats {
            let started = Instant::now();
            assert_eq!(http(&address, "GET", path, None, None).status, 200);
            durations.push(started.elapsed());
        }
        durations.remove(0);
        Samples::from(durations)
    };
    let run_json = fetch("/api/run/0");
    let traj_json = fetch("/api/traj/r1%3Along__0");
    let show = {
        let mut durations = Vec::new();
        for _ in 0..=repeats {
            let started = Instant::now();
            let output = Command::new(env!("CARGO_BIN_EXE_swerve"))
                .args(["traj", "show"])
                .arg(&long_file)
                .output()
                .unwrap();
            assert!(output.status.success());
            durations.push(started.elapsed());
        }
        durations.remove(0);
        Samples::from(durations)
    };
    let (run_bytes, traj_bytes) = (
        size(&address, "/api/run/0"),
        size(&address, "/api/traj/r1%3Along__0"),
    );
    drop(view);

    let mut report = Report::default();
    let run_what = format!("run page, {ROLLOUTS} rollouts: navigation to rendered table");
    report.row(&run_what, "swerve view in Chromium", &run_page, None);
    report.row(
        &run_what,
        "swerve view in Chromium, first load (files parsed)",
        &run_cold,
        None,
    );
    report.row(
        &run_what,
        "its JSON (`/api/run/0`) over HTTP, no browser (anchor)",
        &run_json,
        None,
    );
    let traj_what =
        format!("trajectory page, {STEPS} steps: navigation to rendered steps and charts");
    report.row(&traj_what, "swerve view in Chromium", &traj_page, None);
    report.row(
        &traj_what,
        "swerve view in Chromium, first load (file parsed)",
        &traj_cold,
        None,
    );
    report.row(
        &traj_what,
        "its JSON (`/api/traj/…`) over HTTP, no browser (anchor)",
        &traj_json,
        None,
    );
    report.row(
        &traj_what,
        "`swerve traj show` of the same file, a process (anchor)",
        &show,
        None,
    );
    // The anchors are the faster side here: the ratios go into a note, page over anchor.
    report.note(format!(
        "the run page takes {:.1}× its JSON fetch; the trajectory page {:.1}× its JSON fetch \
         and {:.1}× `swerve traj show`",
        run_page.p50_ms() / run_json.p50_ms(),
        traj_page.p50_ms() / traj_json.p50_ms(),
        traj_page.p50_ms() / show.p50_ms()
    ));
    report.note(format!(
        "run JSON {} KB, trajectory JSON {} KB, trajectory file {} KB",
        run_bytes / 1024,
        traj_bytes / 1024,
        std::fs::metadata(&long_file).unwrap().len() / 1024
    ));
    report.print();
}

/// The bytes of an API answer.
fn size(address: &str, path: &str) -> usize {
    http(address, "GET", path, None, None)
        .body
        .to_string()
        .len()
}

/// The longest source trajectory's steps cycled to [`STEPS`] steps; each request is the
/// previous one plus the previous answer and observation, recorded as a delta.
fn lengthen(sources: &[Trajectory]) -> Trajectory {
    let source = sources.iter().max_by_key(|t| t.steps.len()).unwrap();
    let mut trajectory = Trajectory::new(source.header.clone());
    trajectory.header.id = "long__0".into();
    let mut request_len = trajectory.header.prompt.len();
    for index in 0..STEPS {
        let mut step = source.steps[index % source.steps.len()].clone();
        step.index = index;
        let append = match index.checked_sub(1).map(|at| &trajectory.steps[at]) {
            None => Vec::new(),
            Some(previous) => vec![
                Message::new(Role::Assistant, previous.response_text.clone()),
                Message::new(Role::User, previous.observation.clone().unwrap_or_default()),
            ],
        };
        step.messages_sent = Some(MessagesSent::Delta(MessagesDelta {
            base: index.checked_sub(1),
            keep: request_len,
            drop_reasoning: Vec::new(),
            append: append.clone(),
        }));
        request_len += append.len();
        step.usage = Some(Usage {
            prompt_tokens: 1000 + 150 * index as u64,
            completion_tokens: 80,
            ..Usage::default()
        });
        trajectory.steps.push(step);
    }
    trajectory.outcome = source.outcome.clone();
    trajectory
}
