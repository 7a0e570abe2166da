//! Properties of trajectories: any trajectory round-trips through its file; a file cut at
//! any byte reads back as the records it holds in full; no input makes the reader or the
//! importers panic; message deltas rebuild the request they encode.

use std::path::Path;
use std::sync::OnceLock;

use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{Map, Value};
use swerve_core::ToolCall;
use swerve_core::trajectory::import::{detect, mini_swe_agent, openhands, r2e_gym, swe_agent};
use swerve_core::trajectory::{
    ChatToolCall, Content, ExitReason, FunctionCall, Header, Message, MessagesDelta, MessagesSent,
    Outcome, Role, Step, SubTrajectory, SubagentCall, Timings, TokenCapture, Trajectory,
    TrajectoryErrorKind, Usage, parse_trajectory,
};

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z <>=/{}\"\\\\\n]{0,12}",
        any::<String>().prop_map(|text| text.chars().take(12).collect()),
    ]
}

fn finite() -> impl Strategy<Value = f64> {
    any::<f64>().prop_filter("finite", |value| value.is_finite())
}

/// Any JSON value (floats included: the crate reads them back bit for bit).
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        finite().prop_map(Value::from),
        text().prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((text(), inner), 0..4)
                .prop_map(|fields| Value::Object(fields.into_iter().collect())),
        ]
    })
}

fn json_map() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::vec((text(), json_value()), 0..3)
        .prop_map(|fields| fields.into_iter().collect())
}

fn message() -> impl Strategy<Value = Message> {
    let role = prop_oneof![
        Just(Role::System),
        Just(Role::Developer),
        Just(Role::User),
        Just(Role::Assistant),
        Just(Role::Tool),
    ];
    let content = prop_oneof![
        Just(None),
        text().prop_map(|text| Some(Content::Text(text))),
        prop::collection::vec(text(), 0..3).prop_map(|parts| {
            Some(Content::Parts(
                parts
                    .into_iter()
                    .map(|text| serde_json::json!({"type": "text", "text": text}))
                    .collect(),
            ))
        }),
    ];
    let call = (text(), text(), text()).prop_map(|(id, name, arguments)| ChatToolCall {
        id,
        kind: "function".into(),
        function: FunctionCall { name, arguments },
    });
    (
        role,
        content,
        prop::option::of(text()),
        prop::collection::vec(call, 0..2),
        prop::option::of(text()),
        prop::option::of(text()),
    )
        .prop_map(
            |(role, content, reasoning_content, tool_calls, tool_call_id, name)| Message {
                role,
                content,
                reasoning_content,
                tool_calls,
                tool_call_id,
                name,
            },
        )
}

fn messages(max: usize) -> impl Strategy<Value = Vec<Message>> {
    prop::collection::vec(message(), 0..max)
}

/// How a step records its request; made valid by [`fix_references`].
#[derive(Debug, Clone)]
enum Sent {
    None,
    Full(Vec<Message>),
    Delta {
        base: Option<Index>,
        keep: Index,
        drop: Vec<Index>,
        append: Vec<Message>,
    },
}

fn sent() -> impl Strategy<Value = Sent> {
    prop_oneof![
        Just(Sent::None),
        messages(3).prop_map(Sent::Full),
        (
            prop::option::of(any::<Index>()),
            any::<Index>(),
            prop::collection::vec(any::<Index>(), 0..2),
            messages(3),
        )
            .prop_map(|(base, keep, drop, append)| Sent::Delta {
                base,
                keep,
                drop,
                append,
            }),
    ]
}

fn usage() -> impl Strategy<Value = Usage> {
    (any::<u64>(), any::<u64>(), any::<u64>(), any::<u64>()).prop_map(
        |(prompt_tokens, completion_tokens, cached_tokens, reasoning_tokens)| Usage {
            prompt_tokens,
            completion_tokens,
            cached_tokens,
            reasoning_tokens,
        },
    )
}

fn subagent() -> impl Strategy<Value = SubTrajectory> {
    let call = (
        messages(3),
        text(),
        prop::option::of(text()),
        prop::option::of(usage()),
        prop::option::of(finite()),
        prop::option::of(finite()),
        prop::option::of(text()),
    )
        .prop_map(
            |(messages, response_text, reasoning, usage, cost, model_seconds, error)| {
                SubagentCall {
                    messages,
                    response_text,
                    reasoning,
                    usage,
                    cost,
                    model_seconds,
                    error,
                }
            },
        );
    (
        text(),
        text(),
        prop::collection::vec(call, 0..3),
        prop::option::of(text()),
    )
        .prop_map(|(agent, model, calls, status)| SubTrajectory {
            agent,
            model,
            calls,
            status,
        })
}

fn step() -> impl Strategy<Value = (Sent, Step)> {
    let usage = usage();
    let tokens = (
        prop::collection::vec(any::<u32>(), 0..4),
        prop::collection::vec(any::<u32>(), 0..4),
        prop::option::of(prop::collection::vec(finite(), 0..4)),
    )
        .prop_map(|(prompt_ids, completion_ids, logprobs)| TokenCapture {
            prompt_ids,
            completion_ids,
            logprobs,
        });
    let call = (text(), json_map()).prop_map(|(name, arguments)| ToolCall { name, arguments });
    let texts = (
        text(),
        prop::option::of(text()),
        prop::option::of(text()),
        prop::option::of(text()),
        prop::option::of(text()),
        prop::option::of(text()),
        prop::option::of(text()),
    );
    (
        sent(),
        texts,
        prop::option::of(call),
        prop::option::of(usage),
        (prop::option::of(finite()), prop::option::of(finite())),
        prop::option::of(finite()),
        prop::option::of(tokens),
        prop::collection::vec(subagent(), 0..2),
        json_map(),
    )
        .prop_map(
            |(
                sent,
                texts,
                tool_call,
                usage,
                (model_seconds, env_seconds),
                cost,
                tokens,
                subagents,
                extra,
            )| {
                let (response_text, reasoning, digest, call_text, format_error, observation, error) =
                    texts;
                let step = Step {
                    index: 0,
                    messages_sent: None,
                    response_text,
                    reasoning,
                    digest,
                    tool_call,
                    call_text,
                    format_error,
                    observation,
                    usage,
                    timings: Timings {
                        model_seconds,
                        env_seconds,
                    },
                    cost,
                    tokens,
                    error,
                    subagents,
                    extra,
                };
                (sent, step)
            },
        )
}

fn outcome() -> impl Strategy<Value = Outcome> {
    let reason = prop::sample::select(vec![
        ExitReason::Submitted,
        ExitReason::MaxSteps,
        ExitReason::ContextLimit,
        ExitReason::TokenLimit,
        ExitReason::CostLimit,
        ExitReason::TimeLimit,
        ExitReason::FormatErrors,
        ExitReason::Repeating,
        ExitReason::ModelError,
        ExitReason::EnvError,
        ExitReason::Forfeited,
        ExitReason::Error,
    ]);
    (
        reason,
        prop::option::of(text()),
        text(),
        prop::option::of(finite()),
        prop::option::of(json_value()),
        prop::option::of(finite()),
        json_map(),
    )
        .prop_map(
            |(exit_reason, exit_detail, patch, cost, eval_report, reward, extra)| Outcome {
                exit_reason,
                exit_detail,
                patch,
                cost,
                usage: None,
                timings: Timings::default(),
                // `null` reads back as absent.
                eval_report: eval_report.filter(|report| !report.is_null()),
                reward,
                extra,
            },
        )
}

fn trajectory() -> impl Strategy<Value = Trajectory> {
    let header = (
        text(),
        text(),
        prop::option::of(text()),
        json_value(),
        messages(3),
        json_map(),
    )
        .prop_map(
            |(id, instance_id, created_at, config, prompt, extra)| Header {
                id,
                instance_id,
                created_at,
                config,
                prompt,
                extra,
            },
        );
    (
        header,
        prop::collection::vec(step(), 0..5),
        prop::option::of(outcome()),
    )
        .prop_map(|(header, steps, outcome)| {
            let steps = fix_references(header.prompt.len(), steps);
            Trajectory {
                header,
                steps,
                outcome,
            }
        })
}

/// Numbers the steps and turns each generated request reference into a valid one.
fn fix_references(prompt_len: usize, steps: Vec<(Sent, Step)>) -> Vec<Step> {
    let mut lens: Vec<Option<usize>> = Vec::new();
    let mut fixed = Vec::new();
    for (index, (sent, mut step)) in steps.into_iter().enumerate() {
        step.index = index;
        step.messages_sent = match sent {
            Sent::None => None,
            Sent::Full(messages) => Some(MessagesSent::Full(messages)),
            Sent::Delta {
                base,
                keep,
                drop,
                append,
            } => {
                let recorded: Vec<usize> = (0..index).filter(|&at| lens[at].is_some()).collect();
                let base = base
                    .filter(|_| !recorded.is_empty())
                    .map(|choice| recorded[choice.index(recorded.len())]);
                let base_len = base.map_or(prompt_len, |base| lens[base].unwrap_or(0));
                let keep = keep.index(base_len + 1);
                let drop_reasoning = if keep == 0 {
                    Vec::new()
                } else {
                    drop.iter().map(|at| at.index(keep)).collect()
                };
                Some(MessagesSent::Delta(MessagesDelta {
                    base,
                    keep,
                    drop_reasoning,
                    append,
                }))
            }
        };
        lens.push(step.messages_sent.as_ref().map(|sent| match sent {
            MessagesSent::Full(messages) => messages.len(),
            MessagesSent::Delta(delta) => delta.keep + delta.append.len(),
        }));
        fixed.push(step);
    }
    fixed
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn files_round_trip(trajectory in trajectory()) {
        let text = trajectory.to_jsonl().unwrap();
        let read = parse_trajectory(text.as_bytes(), "t.jsonl").unwrap();
        prop_assert_eq!(read.partial_line, None);
        prop_assert_eq!(&read.trajectory, &trajectory);
        for index in 0..trajectory.steps.len() {
            let recorded = trajectory.steps[..=index].iter().all(|step| step.messages_sent.is_some());
            if recorded {
                prop_assert!(trajectory.messages_sent(index).is_some());
            }
        }
    }

    #[test]
    fn a_file_cut_anywhere_reads_its_whole_records(
        trajectory in trajectory(),
        cuts in prop::collection::vec(any::<Index>(), 1..8),
    ) {
        let text = trajectory.to_jsonl().unwrap();
        let bytes = text.as_bytes();
        let ends: Vec<usize> = bytes.iter().enumerate().filter(|(_, b)| **b == b'\n').map(|(at, _)| at).collect();
        for cut in cuts {
            let cut = cut.index(bytes.len() + 1);
            let whole = ends.iter().filter(|&&end| end <= cut).count();
            // The unterminated tail: partial unless empty or a whole record (cut at its '\n').
            let tail_start = ends.iter().rfind(|&&end| end < cut).map_or(0, |end| end + 1);
            let partial = cut > tail_start && !ends.contains(&cut);
            let read = parse_trajectory(&bytes[..cut], "t.jsonl");
            if whole == 0 {
                let error = read.unwrap_err();
                prop_assert!(matches!(error.kind(), TrajectoryErrorKind::MissingHeader), "{}", error);
                continue;
            }
            let read = read.unwrap();
            let steps = (whole - 1).min(trajectory.steps.len());
            prop_assert_eq!(&read.trajectory.header, &trajectory.header);
            prop_assert_eq!(&read.trajectory.steps[..], &trajectory.steps[..steps]);
            let outcome_whole = whole == ends.len();
            prop_assert_eq!(read.trajectory.outcome.is_some(), outcome_whole && trajectory.outcome.is_some());
            prop_assert_eq!(read.partial_line.is_some(), partial);
        }
    }

    #[test]
    fn the_reader_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = parse_trajectory(&bytes, "random");
    }

    #[test]
    fn the_reader_never_panics_on_damaged_files(
        trajectory in trajectory(),
        edits in prop::collection::vec((any::<Index>(), any::<u8>()), 1..4),
    ) {
        let mut bytes = trajectory.to_jsonl().unwrap().into_bytes();
        for (at, byte) in edits {
            let at = at.index(bytes.len());
            bytes[at] = byte;
        }
        let _ = parse_trajectory(&bytes, "damaged");
    }

    #[test]
    fn importers_never_panic(value in format_like()) {
        let _ = detect(&value);
        let _ = mini_swe_agent(&value);
        let _ = swe_agent(&value);
        let _ = r2e_gym(&value);
        let _ = openhands(&value);
    }

    #[test]
    fn importers_never_panic_on_damaged_samples(
        sample in 0..4usize,
        damage in prop::collection::vec((prop::collection::vec(any::<Index>(), 1..7), format_like()), 1..4),
    ) {
        let mut value = samples()[sample].clone();
        for (path, replacement) in damage {
            replace_at(&mut value, &path, replacement);
        }
        let _ = detect(&value);
        let _ = mini_swe_agent(&value);
        let _ = swe_agent(&value);
        let _ = r2e_gym(&value);
        let _ = openhands(&value);
    }

    #[test]
    fn deltas_rebuild_the_request(base in messages(6), current in messages(6), keep in any::<Index>(), drops in prop::collection::vec(any::<Index>(), 0..3)) {
        // A request derived from `base` the way agents do it, then an unrelated one.
        let keep = keep.index(base.len() + 1);
        let mut derived: Vec<Message> = base[..keep].to_vec();
        if keep > 0 {
            for at in drops {
                derived[at.index(keep)].reasoning_content = None;
            }
        }
        derived.extend(current.iter().cloned());
        for target in [derived, current] {
            let mut trajectory = Trajectory::new(Header::new("r", "i"));
            let mut first = Step::new(0, "");
            first.messages_sent = Some(MessagesSent::Full(base.clone()));
            let mut second = Step::new(1, "");
            second.messages_sent = Some(MessagesSent::delta(Some(0), &base, &target));
            trajectory.steps = vec![first, second];
            prop_assert_eq!(trajectory.messages_sent(1), Some(target.clone()));
            let text = trajectory.to_jsonl().unwrap();
            let read = parse_trajectory(text.as_bytes(), "t").unwrap().trajectory;
            prop_assert_eq!(read.messages_sent(1), Some(target));
        }
    }
}

/// The four real samples, parsed once.
fn samples() -> &'static [Value] {
    static SAMPLES: OnceLock<Vec<Value>> = OnceLock::new();
    SAMPLES.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trajectories");
        [
            "mini-swe-agent.pytest-dev__pytest-7432.traj.json",
            "swe-agent.pydicom__pydicom-1458.traj",
            "r2e-gym.swe-rebench.jsonl",
            "openhands.output.jsonl",
        ]
        .iter()
        .map(|name| {
            let text = std::fs::read_to_string(dir.join(name)).unwrap();
            let first = text.lines().next().unwrap();
            serde_json::from_str(&text).unwrap_or_else(|_| serde_json::from_str(first).unwrap())
        })
        .collect()
    })
}

/// Replaces the node reached by following `path` (child choices) with `replacement`.
fn replace_at(value: &mut Value, path: &[Index], replacement: Value) {
    let Some((choice, rest)) = path.split_first() else {
        *value = replacement;
        return;
    };
    let child = match value {
        Value::Array(items) if !items.is_empty() => {
            let at = choice.index(items.len());
            &mut items[at]
        }
        Value::Object(fields) if !fields.is_empty() => {
            let at = choice.index(fields.len());
            fields.values_mut().nth(at).unwrap()
        }
        _ => {
            *value = replacement;
            return;
        }
    };
    replace_at(child, rest, replacement);
}

/// JSON shaped like the imported formats: their keys, nested, with values of any kind.
fn format_like() -> impl Strategy<Value = Value> {
    let key = prop::sample::select(vec![
        "messages",
        "info",
        "role",
        "content",
        "extra",
        "actions",
        "command",
        "response",
        "choices",
        "message",
        "usage",
        "tool_calls",
        "function",
        "arguments",
        "name",
        "exit_status",
        "submission",
        "model_stats",
        "config",
        "agent",
        "step_limit",
        "trajectory",
        "history",
        "query",
        "action",
        "observation",
        "thought",
        "is_demo",
        "replay_config",
        "trajectory_steps",
        "exit_reason",
        "output_patch",
        "reward",
        "ds",
        "instance_id",
        "test_result",
        "git_patch",
        "metadata",
        "metrics",
        "source",
        "id",
        "cause",
        "tool_call_metadata",
        "model_response",
        "function_name",
        "tool_call_id",
        "args",
        "timestamp",
        "response_latencies",
        "latency",
        "response_id",
        "error",
        "trajectory_format",
        "timestamp",
        "thinking_blocks",
        "0",
    ]);
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        finite().prop_map(Value::from),
        prop::sample::select(vec![
            "assistant",
            "user",
            "system",
            "tool",
            "exit",
            "agent",
            "finish",
            "message",
            "<think>a</think>b<function=f><parameter=p>v</parameter></function>",
            "```bash\nls\n```",
            "2025-04-30T16:32:57.821635",
            "{\"a\": 1}",
            "Submitted",
            "LimitsExceeded",
            "submitted (exit_cost)",
        ])
        .prop_map(Value::from),
        text().prop_map(Value::from),
    ];
    leaf.prop_recursive(5, 64, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((key.clone(), inner), 0..6).prop_map(|fields| {
                Value::Object(
                    fields
                        .into_iter()
                        .map(|(key, value)| (key.to_owned(), value))
                        .collect(),
                )
            }),
        ]
    })
}
