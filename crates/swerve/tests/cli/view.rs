//! `swerve view` in a real headless browser (Debian's `chromium`, driven over the DevTools
//! protocol; the tests skip without it unless `SWERVE_REQUIRE_BROWSER=1`): the bundled
//! replay run's page and trajectories, an imported mini-swe-agent trajectory, a hostile
//! trajectory whose text must stay text, live updates of a run being written, the static
//! export opened from disk, and the access rules off loopback.
//!
//! Screenshots of the main pages are saved under `$CARGO_TARGET_DIR/artifacts/view/`
//! (`target/artifacts/view/` by default), which CI keeps as artifacts.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use swerve_core::tool_call::ToolCall;
use swerve_core::trajectory::import::detect_and_import;
use swerve_core::trajectory::{
    ExitReason, Header, Message, Outcome, Role, Step, SubTrajectory, SubagentCall,
    TrajectoryWriter, Usage, read_trajectory,
};
use swerve_testing::Browser;
use swerve_testing::browser::Page;

use crate::common::{
    Replies, RunArgs, View, assistant_turns, completion, demo_turn, http, root, succeeded, swerve,
};
use swerve_testing::{ModelServer, Reply};

const WAIT: Duration = Duration::from_secs(30);

/// Where screenshots go: `$CARGO_TARGET_DIR/artifacts/view/NAME.png`.
fn artifact(name: &str) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"));
    target.join("artifacts/view").join(format!("{name}.png"))
}

/// Opens `url` and waits until page `name` has rendered.
fn open(page: &mut Page, url: &str, name: &str) {
    page.navigate(url);
    page.wait_for(
        &format!("document.body.getAttribute('data-page') === '{name}'"),
        WAIT,
    );
}

fn count(page: &mut Page, selector: &str) -> usize {
    page.eval(&format!("document.querySelectorAll({selector:?}).length"))
        .as_u64()
        .unwrap() as usize
}

fn texts(page: &mut Page, selector: &str) -> Vec<String> {
    let value = page.eval(&format!(
        "Array.from(document.querySelectorAll({selector:?}), e => e.textContent)"
    ));
    serde_json::from_value(value).unwrap()
}

fn no_errors(page: &Page) {
    assert!(page.errors().is_empty(), "{:#?}", page.errors());
}

#[test]
fn the_replay_run_and_its_trajectories_render_in_the_browser() {
    let Some(browser) = Browser::start() else {
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("run");
    succeeded(
        &RunArgs::new(&out)
            .model("replay")
            .args(["--eval"])
            .run(scratch.path()),
    );
    let mut expected: Vec<(String, String, usize)> = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(out.join("trajectories"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    for file in &files {
        let read = read_trajectory(file).unwrap().trajectory;
        let reason = read.outcome.unwrap().exit_reason.as_str().to_owned();
        expected.push((read.header.id, reason, read.steps.len()));
    }
    assert_eq!(expected.len(), 8);
    let view = View::start(&[&out], &["--listen", "127.0.0.1:0"]);
    let mut page = browser.page();

    open(&mut page, &view.at("#/"), "index");
    assert_eq!(count(&mut page, "#runs tbody tr"), 1);
    page.screenshot(&artifact("view-index"));

    open(&mut page, &view.at("#/run/0"), "run");
    assert_eq!(count(&mut page, "tr.rollout"), 8);
    let shown: Vec<(String, String)> = serde_json::from_value(page.eval(
        "Array.from(document.querySelectorAll('tr.rollout'), r => [r.cells[0].textContent, r.cells[2].textContent])",
    ))
    .unwrap();
    let wanted: Vec<(String, String)> = expected
        .iter()
        .map(|(id, reason, _)| (id.clone(), reason.clone()))
        .collect();
    assert_eq!(shown, wanted);
    // Every demonstration resolves its task: pass@1 is 100%.
    assert_eq!(texts(&mut page, "tr.rollout td:nth-child(4)"), ["✔"; 8]);
    assert_eq!(texts(&mut page, "#pass-at-k td:nth-child(2)"), ["100.0%"]);
    page.screenshot(&artifact("view-run"));

    // Sorting by steps puts the longest first on the second click; filtering narrows.
    page.eval("document.querySelector('th[data-key=steps]').click()");
    page.eval("document.querySelector('th[data-key=steps]').click()");
    let longest = expected.iter().max_by_key(|(_, _, steps)| *steps).unwrap();
    let first_steps = texts(&mut page, "tr.rollout td:nth-child(5)")[0].clone();
    assert_eq!(first_steps, longest.2.to_string());
    page.eval(&format!(
        "const f = document.getElementById('filter'); f.value = {:?}; f.dispatchEvent(new Event('input'))",
        longest.0
    ));
    assert_eq!(count(&mut page, "tr.rollout"), 1);

    // The longest trajectory: every step, one context point per step.
    let stem = longest.0.clone();
    open(&mut page, &view.at(&format!("#/traj/r0%3A{stem}")), "traj");
    let steps = longest.2;
    assert_eq!(count(&mut page, "section.step"), steps);
    assert_eq!(
        count(&mut page, "#chart-context g[data-series=window] circle.pt"),
        steps
    );
    assert_eq!(
        texts(&mut page, "#outcome h2")[0],
        "Final patch",
        "the outcome is shown"
    );
    assert!(
        count(&mut page, "#outcome pre.diff span.add") > 0,
        "the patch is a coloured diff"
    );
    assert!(count(&mut page, "#tests-FAIL_TO_PASS tr.pass") > 0);
    assert_eq!(count(&mut page, "#tests-FAIL_TO_PASS tr.fail"), 0);
    assert_eq!(
        count(&mut page, "#test-log pre"),
        1,
        "the graded run kept its test log"
    );
    page.screenshot(&artifact("view-trajectory"));
    page.eval("document.getElementById('steps').scrollIntoView()");
    page.screenshot(&artifact("view-steps"));
    page.eval("window.scrollTo(0, 0)");

    // Two runs side by side (the same run twice: every row agrees).
    let two = View::start(&[&out, &out], &["--listen", "127.0.0.1:0"]);
    open(&mut page, &two.at("#/compare/0/1"), "compare");
    assert_eq!(
        count(&mut page, "#compare tbody tr"),
        8,
        "{}",
        page.eval("document.body.innerText")
    );
    assert_eq!(count(&mut page, "#compare tr.differs"), 0);
    page.screenshot(&artifact("view-compare"));
    no_errors(&page);
}

/// A loopback model answering each bundled task with its demonstration in SWE-AGILE's
/// structure (reasoning, digest, call), with a paragraph more of reasoning per turn, and
/// reporting usage as a provider would: prompt tokens growing with the request (a
/// quarter of its characters), completion tokens with the answer.
fn agile_model() -> ModelServer {
    const THOUGHT: &str = "Before acting I reread the failing behaviour, the function it goes \
        through and the tests that pin it, then decide the smallest change that fixes it. ";
    ModelServer::answering(|request| {
        let turn = assistant_turns(&request.body, false);
        let text = demo_turn(request.session(), turn, Replies::Agile).replacen(
            "<think>\n",
            &format!("<think>\n{}\n", THOUGHT.repeat(6)),
            1,
        );
        let sent: usize = request.body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|message| message["content"].as_str().map_or(0, str::len))
            .sum();
        let mut body = completion(&text, false);
        body["usage"] = serde_json::json!({
            "prompt_tokens": sent / 4,
            "completion_tokens": text.len() / 4,
            "total_tokens": (sent + text.len()) / 4,
        });
        Reply::Json(200, body)
    })
}

#[test]
fn an_agile_run_shows_reasoning_digests_and_the_window_sliding() {
    let Some(browser) = Browser::start() else {
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    let model = agile_model();
    let out = scratch.path().join("agile");
    succeeded(
        &RunArgs::new(&out)
            .args(["--preset", "agile-upstream", "--eval"])
            .served("gpt-4o", &model.url())
            .run(scratch.path()),
    );
    let view = View::start(&[&out], &["--listen", "127.0.0.1:0"]);
    let mut page = browser.page();
    open(&mut page, &view.at("#/run/0"), "run");
    assert_eq!(count(&mut page, "tr.rollout"), 8);
    // One point per step index of the longest rollout, for the mean and the maximum.
    assert!(
        count(
            &mut page,
            "#chart-run-context g[data-series=mean] circle.pt"
        ) > 5
    );
    // A taller window for this one: the charts and the first rollouts of the table.
    let viewport = |page: &mut Page, height: u32| {
        page.call(
            "Emulation.setDeviceMetricsOverride",
            serde_json::json!({"width": 1280, "height": height, "deviceScaleFactor": 1, "mobile": false}),
        );
    };
    viewport(&mut page, 1400);
    page.screenshot(&artifact("view-agile-run"));
    viewport(&mut page, 900);

    let run = http(&view.address, "GET", "/api/run/0", None, None).body;
    let longest = run["rows"]
        .as_array()
        .unwrap()
        .iter()
        .max_by_key(|row| row["steps"].as_u64())
        .unwrap();
    let key = longest["key"].as_str().unwrap();
    let steps = longest["steps"].as_u64().unwrap() as usize;
    // Tokens and cost over steps across the run: one point per step of the longest rollout.
    for chart in ["chart-run-context", "chart-run-tokens", "chart-run-cost"] {
        let points = format!("#{chart} g[data-series=mean] circle.pt");
        assert_eq!(count(&mut page, &points), steps, "{chart}");
    }
    open(
        &mut page,
        &view.at(&format!("#/traj/{}", key.replace(':', "%3A"))),
        "traj",
    );
    assert_eq!(count(&mut page, "section.step"), steps);
    assert_eq!(count(&mut page, "section.step details.reasoning"), steps);
    assert_eq!(count(&mut page, "section.step details.digest"), steps);
    for series in ["sent", "window", "full"] {
        let points = format!("#chart-context g[data-series={series}] circle.pt");
        assert_eq!(count(&mut page, &points), steps, "{series}");
    }
    // Under a window of one turn, each request re-sends the turn before without its
    // reasoning: the context with all reasoning outgrows the one sent.
    assert!(count(&mut page, "section.step .chip.window") > 0);
    let trajectory = http(
        &view.address,
        "GET",
        &format!("/api/traj/{}", key.replace(':', "%3A")),
        None,
        None,
    )
    .body;
    let last = &trajectory["steps"][steps - 1]["context"];
    assert!(last["full"].as_u64() > last["window"].as_u64(), "{last}");
    page.screenshot(&artifact("view-agile-trajectory"));
    page.eval(
        "document.querySelector('section.step:nth-of-type(3) details.reasoning').open = true",
    );
    page.eval("document.querySelector('section.step:nth-of-type(3)').scrollIntoView(); window.scrollBy(0, -50)");
    page.screenshot(&artifact("view-agile-steps"));
    no_errors(&page);
}

/// A swerve trajectory whose model output and observations carry markup that would run if
/// it were ever parsed as HTML: it must show as text, and nothing may run.
fn write_hostile(path: &Path) {
    const SCRIPT: &str = "<script>window.__pwned = 1; document.title = 'pwned'</script>";
    const IMG: &str = "\"><img src=x onerror=\"window.__pwned = 2; document.title = 'pwned'\">";
    let mut header = Header::new(format!("hostile{IMG}"), format!("evil__repo-1{SCRIPT}"));
    header.config = serde_json::json!({"model": {"name": IMG}});
    let mut writer = TrajectoryWriter::create(path, &header).unwrap();
    for index in 0..3 {
        let mut step = Step::new(index, format!("thinking {SCRIPT}"));
        step.reasoning = Some(format!("reasoning {IMG}"));
        let mut call = ToolCall::new(format!("bash{IMG}"));
        call.arguments
            .insert("command".into(), Value::from(format!("echo '{SCRIPT}'")));
        step.tool_call = Some(call);
        step.observation = Some(format!("{SCRIPT}\n{IMG}\n<b>bold</b>"));
        step.usage = Some(Usage {
            prompt_tokens: 100 * (index as u64 + 1),
            completion_tokens: 20,
            ..Usage::default()
        });
        if index == 1 {
            step.tool_call = None;
            step.format_error = Some(format!("no call in {IMG}"));
        }
        if index == 2 {
            step.subagents = vec![SubTrajectory {
                agent: "viewer".into(),
                model: IMG.into(),
                calls: vec![SubagentCall {
                    messages: vec![Message::new(Role::User, SCRIPT)],
                    response_text: IMG.into(),
                    usage: Some(Usage {
                        prompt_tokens: 50,
                        completion_tokens: 5,
                        ..Usage::default()
                    }),
                    ..SubagentCall::default()
                }],
                status: Some("applied".into()),
            }];
        }
        writer.append_step(&step).unwrap();
    }
    let mut outcome = Outcome::new(
        ExitReason::Submitted,
        format!("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-{SCRIPT}\n+{IMG}\n"),
    );
    outcome.exit_detail = Some(IMG.into());
    outcome.eval_report = Some(serde_json::json!({
        "resolved": false,
        "tests_status": {"FAIL_TO_PASS": {"success": [SCRIPT], "failure": [IMG]}}
    }));
    writer.finish(&outcome).unwrap();
}

/// Nothing of the payloads ran, and they are on the page as text.
fn assert_inert(page: &mut Page) {
    // The `<img onerror>` would fire once its (missing) image fails: give it the time.
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(page.eval("typeof window.__pwned"), "undefined");
    assert_eq!(page.eval("document.title"), "swerve view");
    assert_eq!(count(page, "#main img, #main script, #main b"), 0);
    let text = page.eval("document.getElementById('main').textContent");
    let text = text.as_str().unwrap();
    assert!(text.contains("<script>window.__pwned = 1;"), "{text}");
    assert!(text.contains("<img src=x onerror="), "{text}");
}

#[test]
fn imported_and_hostile_trajectories_render_as_text() {
    let Some(browser) = Browser::start() else {
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    let mini = root().join(
        "crates/swerve-core/tests/fixtures/trajectories/mini-swe-agent.pytest-dev__pytest-7432.traj.json",
    );
    let mini_steps = detect_and_import(&mini).unwrap()[0].steps.len();
    let hostile = scratch.path().join("hostile.jsonl");
    write_hostile(&hostile);
    let view = View::start(&[&mini, &hostile], &["--listen", "127.0.0.1:0"]);
    let mut page = browser.page();

    open(&mut page, &view.at("#/traj/f0%3A0"), "traj");
    assert_eq!(count(&mut page, "section.step"), mini_steps);
    assert_eq!(
        count(&mut page, "#chart-context g[data-series=window] circle.pt"),
        mini_steps
    );
    // The report next to the file grades it: its FAIL_TO_PASS tests are listed.
    assert!(count(&mut page, "#tests-FAIL_TO_PASS tr") > 0);
    page.screenshot(&artifact("view-mini-swe-agent"));

    open(&mut page, &view.at("#/traj/f1%3A0"), "traj");
    assert_eq!(count(&mut page, "section.step"), 3);
    assert_eq!(count(&mut page, "section.step.has-format-error"), 1);
    // The viewer subagent's call, expanded: its messages and answer, as text too.
    assert_eq!(count(&mut page, "details.subagent"), 1);
    page.eval("document.querySelectorAll('details.subagent, details.subagent details').forEach(d => d.open = true)");
    let subagent = page.eval("document.querySelector('details.subagent').innerText");
    assert!(subagent.as_str().unwrap().contains("viewer"), "{subagent}");
    assert!(
        subagent
            .as_str()
            .unwrap()
            .contains("<script>window.__pwned = 1;"),
        "{subagent}"
    );
    assert_inert(&mut page);
    open(&mut page, &view.at("#/"), "index");
    assert_inert(&mut page);
    no_errors(&page);

    // The same pages exported, opened from disk.
    let export = scratch.path().join("export");
    let output = swerve(
        scratch.path(),
        &[
            "view",
            mini.to_str().unwrap(),
            hostile.to_str().unwrap(),
            "--export",
            export.to_str().unwrap(),
        ],
    );
    assert!(succeeded(&output).contains("2 trajectories"));
    let file_url = format!("file://{}/index.html", export.display());
    open(&mut page, &format!("{file_url}#/traj/f1%3A0"), "traj");
    assert_eq!(count(&mut page, "section.step"), 3);
    assert_inert(&mut page);
    open(&mut page, &format!("{file_url}#/traj/f0%3A0"), "traj");
    assert_eq!(count(&mut page, "section.step"), mini_steps);
    no_errors(&page);
}

#[test]
fn every_format_traj_convert_reads_renders_step_by_step() {
    let Some(browser) = Browser::start() else {
        return;
    };
    let fixtures = root().join("crates/swerve-core/tests/fixtures/trajectories");
    let files: Vec<PathBuf> = [
        "mini-swe-agent.pytest-dev__pytest-7432.traj.json",
        "swe-agent.pydicom__pydicom-1458.traj",
        "openhands.output.jsonl",
        "r2e-gym.swe-rebench.jsonl",
        "swe-dev.rft.jsonl",
    ]
    .iter()
    .map(|name| fixtures.join(name))
    .collect();
    let paths: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let view = View::start(&paths, &["--listen", "127.0.0.1:0"]);
    let mut page = browser.page();
    open(&mut page, &view.at("#/"), "index");
    let imported: Vec<_> = files
        .iter()
        .map(|file| detect_and_import(file).unwrap())
        .collect();
    let listed: usize = imported.iter().map(Vec::len).sum();
    assert_eq!(count(&mut page, "tr.rollout"), listed);
    for (at, trajectories) in imported.iter().enumerate() {
        let last = trajectories.len() - 1;
        open(
            &mut page,
            &view.at(&format!("#/traj/f{at}%3A{last}")),
            "traj",
        );
        let steps = trajectories[last].steps.len();
        assert_eq!(count(&mut page, "section.step"), steps, "{:?}", files[at]);
        assert_eq!(
            count(&mut page, "#chart-context g[data-series=window] circle.pt"),
            steps
        );
    }
    no_errors(&page);
}

#[test]
fn a_run_being_written_updates_live() {
    let Some(browser) = Browser::start() else {
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    let run = scratch.path().join("run");
    std::fs::create_dir_all(run.join("trajectories")).unwrap();
    let path = run.join("trajectories/octo__hello-1__0.jsonl");
    let mut writer =
        TrajectoryWriter::create(&path, &Header::new("octo__hello-1__0", "octo__hello-1")).unwrap();
    writer.append_step(&Step::new(0, "first")).unwrap();
    let view = View::start(&[&run], &["--listen", "127.0.0.1:0"]);
    let mut page = browser.page();

    open(&mut page, &view.at("#/run/0"), "run");
    assert_eq!(texts(&mut page, "tr.rollout td:nth-child(3)"), ["running"]);
    // Typing in the filter survives the redraws a new step brings.
    page.eval("const f = document.getElementById('filter'); f.focus(); f.value = 'octo'; f.dispatchEvent(new Event('input'))");
    writer.append_step(&Step::new(1, "second")).unwrap();
    page.wait_for(
        "document.querySelector('tr.rollout td:nth-child(5)').textContent === '2'",
        WAIT,
    );
    assert_eq!(page.eval("document.activeElement.id"), "filter");
    assert_eq!(page.eval("document.getElementById('filter').value"), "octo");
    open(&mut page, &view.at("#/traj/r0%3Aocto__hello-1__0"), "traj");
    assert_eq!(count(&mut page, "section.step"), 2);
    assert_eq!(
        page.eval("document.getElementById('live').textContent"),
        "● live"
    );

    writer.append_step(&Step::new(2, "third")).unwrap();
    page.wait_for(
        "document.querySelectorAll('section.step').length === 3",
        WAIT,
    );
    writer
        .finish(&Outcome::new(ExitReason::MaxSteps, ""))
        .unwrap();
    page.wait_for(
        "document.querySelector('.cards .badge').textContent === 'max_steps'",
        WAIT,
    );
    assert_eq!(page.eval("document.getElementById('live').textContent"), "");
    no_errors(&page);
}

/// One request with an explicit `Host`; the status code.
fn status_with_host(address: &str, path: &str, host: &str) -> u16 {
    let mut stream = TcpStream::connect(address).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn off_loopback_a_token_is_required_and_on_loopback_only_loopback_names_are_served() {
    let scratch = tempfile::tempdir().unwrap();
    let run = scratch.path().join("run");
    std::fs::create_dir_all(run.join("trajectories")).unwrap();

    let open_view = View::start(&[&run], &["--listen", "0.0.0.0:0"]);
    let token = open_view.url.split("?token=").nth(1).unwrap().to_owned();
    assert_eq!(token.len(), 32);
    let port = open_view.address.rsplit(':').next().unwrap();
    let address = format!("127.0.0.1:{port}");
    assert_eq!(http(&address, "GET", "/api/index", None, None).status, 401);
    let answer = http(&address, "GET", "/api/index", Some(&token), None);
    assert_eq!(answer.status, 200);
    assert_eq!(answer.body["runs"][0]["rollouts"], 0);
    let policy = answer.header("content-security-policy").unwrap();
    assert!(policy.contains("script-src 'self'") && !policy.contains("unsafe-inline"));
    // The page and its assets hold no data and need no token.
    assert_eq!(http(&address, "GET", "/app.js", None, None).status, 200);

    let local = View::start(&[&run], &["--listen", "127.0.0.1:0"]);
    assert_eq!(
        status_with_host(&local.address, "/api/index", "localhost"),
        200
    );
    assert_eq!(
        status_with_host(&local.address, "/api/index", "rebound.example:80"),
        403
    );
    assert_eq!(
        status_with_host(
            &local.address,
            "/api/traj/r0%3A..%2F..%2Fetc%2Fpasswd",
            "localhost"
        ),
        404
    );

    let output = swerve(
        scratch.path(),
        &["view", scratch.path().join("nothing").to_str().unwrap()],
    );
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("nothing"));
}
