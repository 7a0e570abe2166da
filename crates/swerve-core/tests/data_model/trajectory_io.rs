//! Trajectory files: writing record by record, reading back, surviving `kill -9`, and
//! error messages for corrupt files.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use swerve_core::ToolCall;
use swerve_core::trajectory::{
    Content, ExitReason, Header, Message, MessagesDelta, MessagesSent, Outcome, PartialLine, Role,
    Step, Timings, TokenCapture, Trajectory, TrajectoryErrorKind, TrajectoryWriter, Usage,
    parse_trajectory, read_trajectory, write_trajectory,
};

fn header() -> Header {
    let mut header = Header::new("run-7", "octocat__hello-1");
    assert!(
        header
            .created_at
            .as_ref()
            .is_some_and(|at| at.ends_with('Z'))
    );
    header.created_at = Some("2025-04-30T08:32:54.500Z".into());
    header.config = json!({"model": {"name": "m", "temperature": 0.0}, "max_steps": 3});
    header.prompt = vec![
        Message::new(Role::System, "You are an agent."),
        Message::new(Role::User, "Fix the greeting."),
    ];
    header
}

/// A full step `index` whose request extends the previous one (or the prompt).
fn step(index: usize) -> Step {
    let mut step = Step::new(
        index,
        format!("<think>thinking {index}</think>reply {index}"),
    );
    // Request k: the prompt, then reply j and observation j for j < k; only the latest
    // reply keeps its reasoning.
    step.messages_sent = Some(MessagesSent::Delta(match index {
        0 => MessagesDelta {
            base: None,
            keep: 2,
            drop_reasoning: vec![],
            append: vec![],
        },
        _ => {
            let mut reply = Message::new(Role::Assistant, format!("reply {}", index - 1));
            reply.reasoning_content = Some(format!("thinking {}", index - 1));
            MessagesDelta {
                base: Some(index - 1),
                keep: 2 * index,
                drop_reasoning: if index >= 2 {
                    vec![2 * index - 2]
                } else {
                    vec![]
                },
                append: vec![
                    reply,
                    Message::new(Role::User, format!("observation {}", index - 1)),
                ],
            }
        }
    }));
    step.reasoning = Some(format!("thinking {index}"));
    step.digest = Some("digest".into());
    step.tool_call = Some(ToolCall::new("execute_bash").arg("command", format!("echo {index}")));
    step.call_text = Some(format!("<function=execute_bash>echo {index}</function>"));
    step.observation = Some(format!("observation {index}"));
    step.usage = Some(Usage {
        prompt_tokens: 100 + index as u64,
        completion_tokens: 20,
        cached_tokens: 64,
        reasoning_tokens: 5,
    });
    step.timings = Timings {
        model_seconds: Some(1.5),
        env_seconds: Some(0.25),
    };
    step.cost = Some(0.125);
    step.tokens = Some(TokenCapture {
        prompt_ids: vec![1, 2, 3],
        completion_ids: vec![4, 5],
        logprobs: Some(vec![-0.5, -1.25]),
    });
    step.extra
        .insert("note".into(), json!({"kept": [1, "two"]}));
    step
}

fn outcome() -> Outcome {
    let mut outcome = Outcome::new(ExitReason::Submitted, "diff --git a/x b/x\n");
    outcome.cost = Some(0.5);
    outcome.usage = Some(Usage::default());
    outcome.eval_report = Some(json!({"resolved": true}));
    outcome.reward = Some(1.0);
    outcome
}

fn trajectory(steps: usize) -> Trajectory {
    let mut trajectory = Trajectory::new(header());
    trajectory.steps = (0..steps).map(step).collect();
    trajectory.outcome = Some(outcome());
    trajectory
}

#[test]
fn writer_output_reads_back_equal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    let expected = trajectory(3);
    let mut writer = TrajectoryWriter::create(&path, &expected.header).unwrap();
    assert_eq!(writer.path(), path);
    for step in &expected.steps {
        writer.append_step(step).unwrap();
    }
    writer.finish(expected.outcome.as_ref().unwrap()).unwrap();

    let read = read_trajectory(&path).unwrap();
    assert_eq!(read.partial_line, None);
    assert_eq!(read.trajectory, expected);

    let text = fs::read_to_string(&path).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 5);
    assert_eq!(lines[0]["type"], "header");
    assert_eq!(lines[0]["schema_version"], 1);
    assert_eq!(lines[1]["type"], "step");
    assert_eq!(lines[4]["type"], "outcome");
    assert_eq!(lines[4]["exit_reason"], "submitted");

    let again = dir.path().join("again.jsonl");
    write_trajectory(&again, &expected).unwrap();
    assert_eq!(fs::read_to_string(&again).unwrap(), text);
}

#[test]
fn messages_sent_rebuilds_each_request_exactly() {
    let trajectory = trajectory(3);
    let prompt = &trajectory.header.prompt;
    assert_eq!(trajectory.messages_sent(0).unwrap(), *prompt);
    let third = trajectory.messages_sent(2).unwrap();
    assert_eq!(third.len(), 6);
    assert_eq!(third[..2], prompt[..]);
    assert_eq!(third[2].text(), "reply 0");
    assert_eq!(
        third[2].reasoning_content, None,
        "dropped by the step-2 delta"
    );
    assert_eq!(third[4].reasoning_content.as_deref(), Some("thinking 1"));
    assert_eq!(
        third[5].content,
        Some(Content::Text("observation 1".into()))
    );
    assert_eq!(trajectory.messages_sent(3), None);

    let mut unrecorded = trajectory.clone();
    unrecorded.steps[1].messages_sent = None;
    assert_eq!(
        unrecorded.messages_sent(2),
        None,
        "its base is not recorded"
    );
    assert!(unrecorded.messages_sent(0).is_some());

    let mut full = trajectory.clone();
    full.steps[1].messages_sent = Some(MessagesSent::Full(third[..4].to_vec()));
    assert_eq!(full.messages_sent(1).unwrap(), third[..4]);
}

#[test]
fn delta_encodes_what_it_is_given() {
    let trajectory = trajectory(3);
    let second = trajectory.messages_sent(1).unwrap();
    let third = trajectory.messages_sent(2).unwrap();
    let mut rebuilt = trajectory.clone();
    rebuilt.steps[2].messages_sent = Some(MessagesSent::delta(Some(1), &second, &third));
    assert_eq!(rebuilt.messages_sent(2).unwrap(), third);
    assert_eq!(
        rebuilt.steps[2].messages_sent,
        trajectory.steps[2].messages_sent
    );
}

#[test]
fn writer_rejects_bad_steps_and_keeps_going() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    let mut writer = TrajectoryWriter::create(&path, &header()).unwrap();
    let error = writer.append_step(&step(1)).unwrap_err();
    assert!(matches!(
        error.kind(),
        TrajectoryErrorKind::StepIndex {
            expected: 0,
            found: 1
        }
    ));
    assert_eq!(error.field(), Some("index"));
    let mut bad = step(0);
    bad.messages_sent = Some(MessagesSent::Delta(MessagesDelta {
        base: Some(0),
        keep: 0,
        drop_reasoning: vec![],
        append: vec![],
    }));
    let error = writer.append_step(&bad).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("base 0 is not a step before step 0"),
        "{error}"
    );
    writer.append_step(&step(0)).unwrap();
    writer.append_step(&step(1)).unwrap();
    let read = read_trajectory(&path).unwrap();
    assert_eq!(read.trajectory.steps, [step(0), step(1)]);
    assert_eq!(read.trajectory.outcome, None);

    let mut invalid = trajectory(2);
    invalid.steps[1].index = 5;
    let error = write_trajectory(dir.path().join("whole.jsonl"), &invalid).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("step index 5 where 1 was expected"),
        "{error}"
    );
}

#[test]
fn a_cut_last_line_is_dropped_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    write_trajectory(&path, &trajectory(2)).unwrap();
    let text = fs::read(&path).unwrap();
    let lines: Vec<usize> = text
        .iter()
        .enumerate()
        .filter(|(_, byte)| **byte == b'\n')
        .map(|(at, _)| at)
        .collect();
    // Cut in the middle of the second step's line.
    let cut = &text[..lines[1] + 40];
    let read = parse_trajectory(cut, "run.jsonl").unwrap();
    assert_eq!(read.trajectory.steps, [step(0)]);
    assert_eq!(read.trajectory.outcome, None);
    assert_eq!(read.partial_line, Some(PartialLine { line: 3, bytes: 39 }));

    // Cut just before the newline: the record is whole, so it is kept.
    let read = parse_trajectory(&text[..lines[2]], "run.jsonl").unwrap();
    assert_eq!(read.trajectory.steps.len(), 2);
    assert_eq!(read.partial_line, None);

    // Cut inside a multi-byte character of the header: no header, an error.
    let error = parse_trajectory(&text[..10], "run.jsonl").unwrap_err();
    assert!(matches!(error.kind(), TrajectoryErrorKind::MissingHeader));
    let mut invalid_utf8 = text[..lines[1] + 1].to_vec();
    invalid_utf8.extend_from_slice(b"{\"type\":\"step\",\"response_text\":\"\xe2\x82");
    let read = parse_trajectory(&invalid_utf8, "run.jsonl").unwrap();
    assert!(read.partial_line.is_some());
}

/// Not a test by itself: run by `kill_9_loses_at_most_the_step_in_flight` in a child
/// process, where it writes steps until killed.
#[test]
fn child_writer() {
    let Some(path) = std::env::var_os("SWERVE_TRAJECTORY_CHILD") else {
        return;
    };
    let mut writer = TrajectoryWriter::create(&path, &header()).unwrap();
    for index in 0.. {
        let mut step = step(index);
        // Big steps, so the kill often lands in the middle of a write.
        step.observation = Some("x".repeat(256 * 1024));
        writer.append_step(&step).unwrap();
    }
}

#[test]
fn kill_9_loses_at_most_the_step_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "trajectory_io::child_writer",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("SWERVE_TRAJECTORY_CHILD", &path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while count_newlines(&path) < 4 {
        assert!(Instant::now() < deadline, "the child wrote too little");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let written = count_newlines(&path);

    let read = read_trajectory(&path).unwrap();
    assert_eq!(read.trajectory.header, read_header(&path));
    assert_eq!(read.trajectory.outcome, None);
    // Every line the child finished (the header and whole steps) is read back; only the
    // step being written when it died can be missing.
    assert!(written >= 4);
    assert_eq!(read.trajectory.steps.len(), written - 1);
    for (index, step) in read.trajectory.steps.iter().enumerate() {
        assert_eq!(step.index, index);
        assert_eq!(step.observation.as_ref().map(String::len), Some(256 * 1024));
    }
    let last = read.trajectory.steps.len() - 1;
    assert_eq!(
        read.trajectory.messages_sent(last).unwrap().len(),
        2 * last + 2
    );
}

fn count_newlines(path: &Path) -> usize {
    fs::read(path)
        .map(|bytes| bytes.iter().filter(|&&byte| byte == b'\n').count())
        .unwrap_or(0)
}

fn read_header(path: &Path) -> Header {
    let text = fs::read_to_string(path).unwrap();
    let first = text.lines().next().unwrap();
    parse_trajectory(format!("{first}\n").as_bytes(), "header")
        .unwrap()
        .trajectory
        .header
}

/// `lines` joined as a file, each with its newline.
fn file(lines: &[String]) -> Vec<u8> {
    lines
        .iter()
        .map(|line| format!("{line}\n"))
        .collect::<String>()
        .into_bytes()
}

fn valid_lines() -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    write_trajectory(&path, &trajectory(2)).unwrap();
    fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Parses `lines` with line `at` replaced by `record` (a JSON object edited by `edit`).
fn error_with(at: usize, edit: impl FnOnce(&mut Map<String, Value>)) -> String {
    let mut lines = valid_lines();
    let mut record: Map<String, Value> = serde_json::from_str(&lines[at]).unwrap();
    edit(&mut record);
    lines[at] = Value::Object(record).to_string();
    parse_trajectory(&file(&lines), "run.jsonl")
        .unwrap_err()
        .to_string()
}

#[test]
fn corruption_errors_name_the_line_and_field() {
    assert_eq!(
        error_with(2, |step| {
            step.insert("usage".into(), json!({"prompt_tokens": "12"}));
        }),
        "run.jsonl line 3: field \"usage\": invalid type: string \"12\", expected u64"
    );
    assert_eq!(
        error_with(1, |step| {
            step.remove("response_text");
        }),
        "run.jsonl line 2: field \"response_text\": required but missing"
    );
    assert_eq!(
        error_with(1, |step| {
            step.insert("bogus".into(), json!(1));
        }),
        "run.jsonl line 2: field \"bogus\": unknown field; put data of other tools under \"extra\""
    );
    assert_eq!(
        error_with(2, |step| {
            step.insert("index".into(), json!(0));
        }),
        "run.jsonl line 3: field \"index\": step index 0 where 1 was expected"
    );
    assert_eq!(
        error_with(0, |header| {
            header.insert("schema_version".into(), json!(2));
        }),
        "run.jsonl line 1: field \"schema_version\": schema_version 2 is newer than the newest this swerve reads (1)"
    );
    assert_eq!(
        error_with(3, |outcome| {
            outcome.insert("exit_reason".into(), json!("bored"));
        }),
        "run.jsonl line 4: field \"exit_reason\": unknown variant `bored`, expected one of `submitted`, `max_steps`, `context_limit`, `token_limit`, `cost_limit`, `time_limit`, `format_errors`, `repeating`, `model_error`, `env_error`, `forfeited`, `error`"
    );
    assert_eq!(
        error_with(1, |step| {
            step.insert("type".into(), json!("stop"));
        }),
        "run.jsonl line 2: field \"type\": unknown record type \"stop\"; expected \"header\", \"step\" or \"outcome\""
    );
    assert!(
        error_with(2, |step| {
            step.insert("messages_sent".into(), json!({"base": 0, "keep": 99}));
        })
        .starts_with(
            "run.jsonl line 3: field \"messages_sent\": invalid messages reference: keep 99"
        )
    );
}

#[test]
fn structure_errors() {
    let lines = valid_lines();
    let parse = |lines: &[String]| {
        parse_trajectory(&file(lines), "run.jsonl")
            .unwrap_err()
            .to_string()
    };
    let mut twice = lines.clone();
    twice.insert(1, lines[0].clone());
    assert_eq!(parse(&twice), "run.jsonl line 2: a second header record");
    let mut after = lines.clone();
    after.push(lines[2].clone());
    assert_eq!(
        parse(&after),
        "run.jsonl line 5: a record after the outcome record"
    );
    assert_eq!(
        parse(&lines[1..]),
        "run.jsonl line 1: a record before the header record"
    );
    let mut broken = lines.clone();
    broken[1] = "{\"type\":".into();
    assert_eq!(
        parse(&broken),
        "run.jsonl line 2: invalid JSON: EOF while parsing a value at column 8"
    );
    broken[1] = "[1]".into();
    assert_eq!(
        parse(&broken),
        "run.jsonl line 2: expected a JSON object, found a list"
    );
    let mut not_utf8 = file(&lines[..1]);
    not_utf8.extend_from_slice(b"\xff\n");
    assert_eq!(
        parse_trajectory(&not_utf8, "run.jsonl")
            .unwrap_err()
            .to_string(),
        "run.jsonl line 2: not valid UTF-8"
    );
    assert_eq!(
        parse_trajectory(b"\n\n", "run.jsonl")
            .unwrap_err()
            .to_string(),
        "run.jsonl: no header record; a trajectory file starts with {\"type\":\"header\",…}"
    );
    let mut blank = lines.clone();
    blank.insert(2, "   ".into());
    assert_eq!(
        parse_trajectory(&file(&blank), "run.jsonl")
            .unwrap()
            .trajectory,
        trajectory(2)
    );
    let missing = read_trajectory("/nonexistent/run.jsonl").unwrap_err();
    assert!(matches!(missing.kind(), TrajectoryErrorKind::Read(_)));
    assert_eq!(missing.file(), Some("/nonexistent/run.jsonl"));
}

#[test]
fn writer_reports_unwritable_paths() {
    let error = TrajectoryWriter::create("/nonexistent/dir/run.jsonl", &header()).unwrap_err();
    assert!(matches!(error.kind(), TrajectoryErrorKind::Write(_)));
    assert!(
        error
            .to_string()
            .starts_with("/nonexistent/dir/run.jsonl: cannot write the file")
    );
}

#[test]
fn step_fields_are_optional_in_json() {
    let mut bytes = Vec::new();
    writeln!(
        bytes,
        r#"{{"type":"header","schema_version":1,"id":"r","instance_id":"i","config":null}}"#
    )
    .unwrap();
    writeln!(bytes, r#"{{"type":"step","index":0,"response_text":"hi"}}"#).unwrap();
    writeln!(
        bytes,
        r#"{{"type":"outcome","exit_reason":"max_steps","patch":""}}"#
    )
    .unwrap();
    let trajectory = parse_trajectory(&bytes, "min.jsonl").unwrap().trajectory;
    assert_eq!(trajectory.header.created_at, None);
    assert_eq!(trajectory.steps, [Step::new(0, "hi")]);
    assert_eq!(
        trajectory.outcome,
        Some(Outcome::new(ExitReason::MaxSteps, ""))
    );
}
