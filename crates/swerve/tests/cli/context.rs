//! `swerve context stats | plot | reward` and `swerve data snapshots` end to end, on the
//! trajectories of `swerve run --preset agile-upstream --eval` (window 1) in prompt-rendered
//! mode with Qwen3's tokenizer and template (a loopback model answers with the task's
//! demonstration in SWE-AGILE's structure, so each run resolves its task). The figures are checked against
//! the chat template applied by hand, and each snapshot against the prompt the model was
//! actually sent at that step.

use crate::common;
use crate::tokenizers;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use common::{Behaviour, DemoServer, Replies, RunArgs, failed, stderr, succeeded, swerve};
use quick_xml::events::Event;
use serde_json::Value;
use swerve_agent::agile::{ContextPolicy, SendReasoning, Window, WindowPolicy};
use swerve_chat::{ChatModel, RenderOptions};
use swerve_core::trajectory::turn::inline;
use swerve_core::trajectory::{Message, Trajectory, read_trajectory};

const TASK: &str = "swerve-examples__calc-1";

/// A finished `swerve run` and what its model was sent.
struct Run {
    _cache: tempfile::TempDir,
    dir: PathBuf,
    server: DemoServer,
    /// The trajectory files, one per sample.
    files: Vec<PathBuf>,
}

impl Run {
    /// Runs the agile-upstream preset (window 1) on the task, `samples` times, in
    /// prompt-rendered mode with Qwen3, graded; `extra` adds options.
    fn agile(samples: &str, extra: &[&str]) -> Self {
        let cache = tempfile::tempdir().unwrap();
        let server = common::start_with(Behaviour::Good, Duration::ZERO, Replies::Agile);
        let dir = cache.path().join("run");
        let tokenizer = format!("run.tokenizer={}", tokenizers::model_dir("qwen3").display());
        let output = RunArgs::new(&dir)
            .args(["--preset", "agile-upstream"])
            .served("demo-model", &server.url)
            .set("model.mode=completions")
            .set(&tokenizer)
            .args(["--eval", "--samples", samples])
            .args(extra)
            .args([TASK])
            .run(cache.path());
        succeeded(&output);
        let files = (0..samples.parse().unwrap())
            .map(|k| dir.join(format!("trajectories/{TASK}__{k}.jsonl")))
            .collect();
        let dir = dir.to_owned();
        Run {
            _cache: cache,
            dir,
            server,
            files,
        }
    }

    fn trajectory(&self, sample: usize) -> Trajectory {
        read_trajectory(&self.files[sample]).unwrap().trajectory
    }

    /// The prompts the model received for one trajectory, in order.
    fn prompts(&self, id: &str) -> Vec<String> {
        let received = self.server.received.lock().unwrap();
        received
            .iter()
            .filter(|request| request.session() == id)
            .map(|request| request.body["prompt"].as_str().unwrap().to_owned())
            .collect()
    }

    fn swerve(&self, args: &[&str]) -> Output {
        swerve(self._cache.path(), args)
    }

    fn file(&self, sample: usize) -> &str {
        self.files[sample].to_str().unwrap()
    }
}

fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn dir(name: &str) -> String {
    tokenizers::model_dir(name).display().to_string()
}

/// Qwen3's template without its rule that drops reasoning before the last user message,
/// as a file in `dir`.
fn qwen3_keeping_reasoning(dir: &Path) -> PathBuf {
    let config: Value = serde_json::from_str(
        &std::fs::read_to_string(tokenizers::model_dir("qwen3").join("tokenizer_config.json"))
            .unwrap(),
    )
    .unwrap();
    let source = config["chat_template"].as_str().unwrap();
    let rule = "{%- if loop.index0 > ns.last_query_index %}";
    assert!(source.contains(rule));
    let path = dir.join("qwen3-keep-reasoning.jinja");
    std::fs::write(&path, source.replace(rule, "{%- if true %}")).unwrap();
    path
}

/// Tokens of `messages` under the model's template, counted by hand.
fn count(model: &ChatModel, messages: &[Message], generation_prompt: bool) -> usize {
    let options = RenderOptions::default().generation_prompt(generation_prompt);
    model.count(messages, &options).unwrap()
}

fn inline_policy(window: Window) -> ContextPolicy {
    ContextPolicy {
        window,
        send: SendReasoning::Inline,
    }
}

#[test]
fn snapshots_train_each_turn_on_exactly_the_context_the_model_was_sent() {
    let run = Run::agile("2", &[]);
    let out = run.dir.join("snapshots.jsonl");
    let qwen = dir("qwen3");
    // Both trajectories' snapshots with a window of 1, as token ids, into `out`.
    let snapshots = |out: &Path| {
        succeeded(&run.swerve(&[
            "data",
            "snapshots",
            run.file(0),
            run.file(1),
            "--window",
            "1",
            "--format",
            "tokens",
            "--tokenizer",
            &qwen,
            "--out",
            out.to_str().unwrap(),
        ]))
    };
    let text = snapshots(&out);
    assert!(text.starts_with("2 trajectories, 16 samples, "), "{text}");
    let rows = json_lines(&std::fs::read_to_string(&out).unwrap());
    assert_eq!(rows.len(), 16);
    #[cfg(feature = "parquet")]
    {
        // The same samples as Parquet: the same rows, ids and masks as lists of integers.
        let parquet = run.dir.join("snapshots.parquet");
        snapshots(&parquet);
        assert_eq!(parquet_rows(&parquet), rows);
    }
    let model = tokenizers::model("qwen3");
    let tokenizer = model.tokenizer();
    for sample in 0..2 {
        let trajectory = run.trajectory(sample);
        let id = &trajectory.header.id;
        let prompts = run.prompts(id);
        assert_eq!(prompts.len(), 8);
        for (step, row) in rows[sample * 8..(sample + 1) * 8].iter().enumerate() {
            assert_eq!(row["id"], format!("{id}/{step}"));
            assert_eq!(
                (row["step"].as_u64(), row["window"].as_u64()),
                (Some(step as u64), Some(1))
            );
            assert_eq!(row["is_last_step"], step == 7);
            let ids: Vec<u32> = serde_json::from_value(row["input_ids"].clone()).unwrap();
            let mask: Vec<u8> = serde_json::from_value(row["loss_mask"].clone()).unwrap();
            assert_eq!(ids.len(), mask.len());
            // TRL reads the same mask as completion_mask.
            assert_eq!(row["completion_mask"], row["loss_mask"]);
            // The sample starts with exactly the prompt the model was sent at this step.
            let sent = tokenizer.encode(&prompts[step], false).unwrap();
            assert_eq!(ids[..sent.len()], sent[..], "{id} step {step}");
            // The mask is 0 on the context, then 1 to the end, from the turn's header on.
            let context = mask.iter().take_while(|&&m| m == 0).count();
            assert!(mask[context..].iter().all(|&m| m == 1));
            let header = tokenizer.decode(&ids[context..sent.len()], false).unwrap();
            assert_eq!(header, "<|im_start|>assistant\n");
            // Decoding the trained tokens gives the turn the model wrote, as rendered.
            let step_record = &trajectory.steps[step];
            let reply = &step_record.response_text;
            let written = reply.split_once("</think>\n").unwrap().1;
            let expected = format!(
                "<|im_start|>assistant\n{}<|im_end|>\n",
                inline(step_record.reasoning.as_deref().unwrap(), written)
            );
            assert_eq!(tokenizer.decode(&ids[context..], false).unwrap(), expected);
        }
    }

    // Messages: the context is the request the trajectory records, then the target.
    let messages = run.dir.join("messages.jsonl");
    succeeded(&run.swerve(&[
        "data",
        "snapshots",
        run.file(0),
        "--window",
        "1",
        "--tokenizer",
        &qwen,
        "--out",
        messages.to_str().unwrap(),
    ]));
    let trajectory = run.trajectory(0);
    for (step, row) in json_lines(&std::fs::read_to_string(&messages).unwrap())
        .iter()
        .enumerate()
    {
        let rows = row["messages"].as_array().unwrap();
        let (target, context) = rows.split_last().unwrap();
        let context: Vec<Message> = context
            .iter()
            .map(|message| serde_json::from_value(message.clone()).unwrap())
            .collect();
        assert_eq!(Some(context), trajectory.messages_sent(step), "step {step}");
        assert!(
            rows[..rows.len() - 1]
                .iter()
                .all(|m| m["loss_weight"] == 0.0 && m["train"] == false)
        );
        assert_eq!(
            (&target["loss_weight"], &target["train"]),
            (&1.0.into(), &true.into())
        );
        assert_eq!(target["role"], "assistant");
        assert!(
            target["content"]
                .as_str()
                .unwrap()
                .starts_with("<think>\nreasoning of turn")
        );
        assert!(row["num_tokens"].as_u64().unwrap() > 0);
        assert!(row.get("tools").is_none(), "XML calls carry no schemas");
    }
}

/// The rows of a Parquet file as JSON values, read with the Parquet crate's Arrow reader.
#[cfg(feature = "parquet")]
fn parquet_rows(path: &Path) -> Vec<Value> {
    let file = std::fs::File::open(path).unwrap();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap();
    let mut out = Vec::new();
    let mut writer = arrow_json::LineDelimitedWriter::new(&mut out);
    for batch in reader {
        writer.write(&batch.unwrap()).unwrap();
    }
    writer.finish().unwrap();
    json_lines(&String::from_utf8(out).unwrap())
}

#[test]
fn a_window_range_is_drawn_per_trajectory_and_bad_input_names_file_and_record() {
    let run = Run::agile("2", &["--max-steps", "3"]);
    let out = run.dir.join("drawn.jsonl");
    let args = |file: &str| {
        vec![
            "data".to_owned(),
            "snapshots".into(),
            file.into(),
            "--window".into(),
            "0..3".into(),
            "--seed".into(),
            "9".into(),
            "--out".into(),
            out.display().to_string(),
        ]
    };
    let call = |args: Vec<String>| run.swerve(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let mut both = args(run.file(0));
    both.insert(3, run.file(1).to_owned());
    succeeded(&call(both));
    let rows = json_lines(&std::fs::read_to_string(&out).unwrap());
    assert_eq!(rows.len(), 6);
    for row in &rows {
        let id = row["trajectory_id"].as_str().unwrap();
        let drawn = WindowPolicy::Random { min: 0, max: 3 }.resolve(9, id);
        assert_eq!(
            Window::Last(row["window"].as_u64().unwrap() as usize),
            drawn
        );
    }

    // A broken record: the error names the file and line; the old output stays.
    let broken = run.dir.join("broken.jsonl");
    let text = std::fs::read_to_string(&run.files[0]).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[2] = r#"{"type":"step","index":1,"response_text":7}"#;
    std::fs::write(&broken, lines.join("\n") + "\n").unwrap();
    let before = std::fs::read_to_string(&out).unwrap();
    let output = call(args(broken.to_str().unwrap()));
    let error = failed(&output);
    assert!(
        error.contains("broken.jsonl line 3") && error.contains("response_text"),
        "{error}"
    );
    swerve_testing::assert_cmd_snapshot!("error_trajectory_field_of_wrong_type", output);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), before);

    // Token rows need a tokenizer.
    let mut tokens = args(run.file(0));
    tokens.extend(["--format".into(), "tokens".into()]);
    let output = call(tokens);
    let error = stderr(&output);
    assert!(error.contains("--tokenizer DIR"), "{error}");
    swerve_testing::assert_cmd_snapshot!("error_token_rows_need_a_tokenizer", output);

    // An unresolved run gets no compression bonus.
    let output = run.swerve(&[
        "context",
        "reward",
        run.file(0),
        "--tokenizer",
        &dir("llama3_1"),
        "--json",
    ]);
    let reward = &json_lines(&succeeded(&output))[0];
    assert_eq!(
        (reward["reward"].as_f64(), reward["resolved"].as_f64()),
        (Some(0.0), Some(0.0))
    );
    assert_eq!(reward["window"], 1);
}

/// The conversation of a trajectory, checked against what its requests hold.
fn conversation(trajectory: &Trajectory) -> Vec<Message> {
    let conversation = trajectory.conversation().unwrap();
    let policy = inline_policy(Window::Last(1));
    for step in 0..trajectory.steps.len() {
        assert_eq!(
            policy.before_turn(&conversation, step),
            trajectory.messages_sent(step)
        );
    }
    conversation
}

#[test]
fn stats_plot_and_reward_measure_the_window_with_the_chat_template() {
    let run = Run::agile("1", &[]);
    let trajectory = run.trajectory(0);
    let conversation = conversation(&trajectory);
    let llama = tokenizers::model("llama3_1");
    let output = run.swerve(&[
        "context",
        "stats",
        run.file(0),
        "--tokenizer",
        &dir("llama3_1"),
        "--steps",
        "--json",
    ]);
    assert!(!stderr(&output).contains("warning"), "{}", stderr(&output));
    let stats = &json_lines(&succeeded(&output))[0];
    assert_eq!(stats["window"], 1);
    assert_eq!(stats["template_drops_reasoning"], false);
    let steps = stats["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 8);
    let tokens = llama.tokenizer();
    let plain = |text: &str| tokens.count(text, false).unwrap() as u64;
    let (mut hybrid, mut full) = (0, 0);
    for (k, step) in steps.iter().enumerate() {
        let sent = count(llama, &trajectory.messages_sent(k).unwrap(), true) as u64;
        let all = inline_policy(Window::All)
            .before_turn(&conversation, k)
            .unwrap();
        assert_eq!(step["sent"], sent);
        assert_eq!(step["window"], sent, "the run sent window 1, inline");
        assert_eq!(step["full"], count(llama, &all, true) as u64);
        let record = &trajectory.steps[k];
        let reasoning = plain(record.reasoning.as_deref().unwrap());
        assert_eq!(step["reasoning"], reasoning);
        assert_eq!(step["digest"], plain(record.digest.as_deref().unwrap()));
        assert_eq!(
            step["observation"],
            plain(record.observation.as_deref().unwrap())
        );
        let action = record
            .response_text
            .split_once("</reasoning_digest>\n")
            .unwrap()
            .1;
        assert_eq!(step["action"], plain(action));
        let rest = step["digest"].as_u64().unwrap()
            + step["action"].as_u64().unwrap()
            + step["observation"].as_u64().unwrap();
        hybrid += rest + if k == 7 { reasoning } else { 0 };
        full += rest + reasoning;
    }
    // Later steps carry more reasoning without the window.
    assert!(steps[7]["full"].as_u64() > steps[7]["window"].as_u64());
    let final_window = count(
        llama,
        &inline_policy(Window::Last(1)).apply(&conversation),
        false,
    );
    let final_full = count(
        llama,
        &inline_policy(Window::All).apply(&conversation),
        false,
    );
    assert_eq!(stats["final_window"], final_window as u64);
    assert_eq!(stats["final_full"], final_full as u64);
    let rate = 1.0 - final_window as f64 / final_full as f64;
    assert!(rate > 0.0);
    assert_eq!(stats["compression_rate"].as_f64(), Some(rate));
    let paper = 1.0 - hybrid as f64 / full as f64;
    assert_eq!(
        (stats["paper_hybrid"].as_u64(), stats["paper_full"].as_u64()),
        (Some(hybrid), Some(full))
    );
    assert_eq!(stats["paper_compression_rate"].as_f64(), Some(paper));

    // Qwen3's own template drops earlier reasoning: said, and fixed by a template file.
    let qwen = dir("qwen3");
    let output = run.swerve(&["context", "stats", run.file(0), "--tokenizer", &qwen]);
    let warning = stderr(&output);
    assert!(
        warning.contains("drops the reasoning of earlier turns"),
        "{warning}"
    );
    assert!(succeeded(&output).contains("compression 0.0000 (code)"));
    let template = qwen3_keeping_reasoning(&run.dir);
    let output = run.swerve(&[
        "context",
        "stats",
        run.file(0),
        "--tokenizer",
        &qwen,
        "--chat-template",
        template.to_str().unwrap(),
        "--json",
    ]);
    assert!(stderr(&output).is_empty(), "{}", stderr(&output));
    let kept = &json_lines(&succeeded(&output))[0];
    assert!(kept["compression_rate"].as_f64().unwrap() > 0.0);

    // The figure: well-formed SVG, a polyline per policy with a point per step.
    let svg = run.dir.join("context.svg");
    succeeded(&run.swerve(&[
        "context",
        "plot",
        run.file(0),
        "--tokenizer",
        &dir("llama3_1"),
        "--out",
        svg.to_str().unwrap(),
    ]));
    let lines = polylines(&std::fs::read_to_string(&svg).unwrap());
    let column = |name: &str| -> Vec<u64> {
        steps
            .iter()
            .map(|step| step[name].as_u64().unwrap())
            .collect()
    };
    let current: Vec<u64> = (0..8)
        .map(|k| {
            let context = inline_policy(Window::Last(0))
                .before_turn(&conversation, k)
                .unwrap();
            count(llama, &context, true) as u64
        })
        .collect();
    let expected = [
        ("interleaved", column("full")),
        ("current step", current),
        ("window N = 1", column("window")),
    ];
    assert_eq!(lines.len(), 3);
    let mut scale = None;
    for ((series, values, points), (label, expected)) in lines.iter().zip(&expected) {
        assert_eq!((series.as_str(), values), (*label, expected));
        assert_eq!(points.len(), 8);
        // Evenly spaced steps; heights proportional to the values, on one scale.
        let dx = points[1].0 - points[0].0;
        for (k, (&(x, y), &value)) in points.iter().zip(values).enumerate() {
            assert!((x - points[0].0 - dx * k as f64).abs() < 0.02);
            let (bottom, per_token) = *scale.get_or_insert_with(|| {
                let (low, high) = (points[0], points[7]);
                let per_token = (low.1 - high.1) / (values[7] - values[0]) as f64;
                (low.1 + per_token * values[0] as f64, per_token)
            });
            assert!(
                (bottom - per_token * value as f64 - y).abs() < 0.02,
                "{label} {k}"
            );
        }
    }

    // The reward: resolved, with the bonus of the code's compression rate.
    let output = run.swerve(&[
        "context",
        "reward",
        run.file(0),
        "--tokenizer",
        &dir("llama3_1"),
        "--beta",
        "0.2",
        "--gamma",
        "0.55",
        "--json",
    ]);
    let reward = &json_lines(&succeeded(&output))[0];
    let expected = 1.0 + 0.2 * rate.min(0.55);
    assert_eq!(reward["reward"].as_f64(), Some(expected));
    assert_eq!(reward["compression_rate"].as_f64(), Some(rate));
    let before = trajectory.clone();
    let text = succeeded(&run.swerve(&[
        "context",
        "reward",
        run.file(0),
        "--tokenizer",
        &dir("llama3_1"),
        "--rate",
        "paper",
        "--format-penalty",
        "-0.5",
        "--write",
    ]));
    assert!(text.contains("recorded"), "{text}");
    let after = run.trajectory(0);
    assert_eq!(
        (&after.header, &after.steps),
        (&before.header, &before.steps)
    );
    let outcome = after.outcome.unwrap();
    let recorded = &outcome.extra["compression_reward"];
    assert_eq!(
        recorded["reward"].as_f64(),
        Some(1.0 + 0.2 * paper.min(0.55))
    );
    assert_eq!(recorded["rate"], "paper");
    assert_eq!(recorded["format_penalty"], 0.0, "the run submitted");
    assert_eq!(outcome.reward, before.outcome.unwrap().reward);
}

/// A polyline of the plot: its series, its values and its points.
type Polyline = (String, Vec<u64>, Vec<(f64, f64)>);

/// Each polyline of an SVG document. Fails unless the document is well-formed XML with one
/// `svg` root.
fn polylines(svg: &str) -> Vec<Polyline> {
    let mut reader = quick_xml::Reader::from_str(svg);
    let (mut depth, mut roots, mut lines) = (0, 0, Vec::new());
    loop {
        let event = reader.read_event().unwrap();
        match &event {
            Event::Start(element) | Event::Empty(element) => {
                if depth == 0 {
                    roots += 1;
                    assert_eq!(element.name().0, "svg");
                }
                if element.name().0 == "polyline" {
                    let attribute = |name: &str| {
                        let found = element.try_get_attribute(name).unwrap().unwrap();
                        found
                            .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                            .unwrap()
                            .into_owned()
                    };
                    let values = attribute("data-tokens")
                        .split(',')
                        .map(|v| v.parse().unwrap())
                        .collect();
                    let points = attribute("points")
                        .split(' ')
                        .map(|point| {
                            let (x, y) = point.split_once(',').unwrap();
                            (x.parse().unwrap(), y.parse().unwrap())
                        })
                        .collect();
                    lines.push((attribute("data-series"), values, points));
                }
                depth += 1;
                if matches!(event, Event::Empty(_)) {
                    depth -= 1;
                }
            }
            Event::End(_) => depth -= 1,
            Event::Eof => break,
            _ => {}
        }
    }
    assert_eq!((roots, depth), (1, 0));
    lines
}

/// The compression rate of `file` as `swerve context reward` measures it afterwards.
fn offline_rate(run: &Run, file: &str, extra: &[&str]) -> f64 {
    let mut args = vec!["context", "reward", file, "--json"];
    args.extend(extra);
    let reward = &json_lines(&succeeded(&run.swerve(&args)))[0];
    reward["compression_rate"].as_f64().unwrap()
}

/// SWE-AGILE's compression-aware reward online (paper Eq. 4, §2.3): with
/// `reward.compression_weight` and the model's tokenizer, `swerve run --eval` measures each
/// resolved rollout's compression rate as it ends and adds β · min(rate, γ) to its reward;
/// the rate is the one `swerve context reward` measures afterwards, in both definitions.
#[test]
fn the_compression_bonus_is_computed_online_with_the_models_tokenizer() {
    let templates = tempfile::tempdir().unwrap();
    let keep = qwen3_keeping_reasoning(templates.path());
    let template = format!("reward.chat_template={}", keep.display());
    // The code's rate with run.tokenizer (Qwen3) and a template that keeps reasoning.
    let run = Run::agile(
        "1",
        &["--set", "reward.compression_weight=0.2", "--set", &template],
    );
    let outcome = run.trajectory(0).outcome.unwrap();
    let recorded = &outcome.extra["compression_reward"];
    assert_eq!(recorded["rate"], "code");
    assert_eq!(recorded["window"], 1);
    let rate = recorded["compression_rate"].as_f64().unwrap();
    assert!(rate > 0.0, "{recorded}");
    let expected = offline_rate(
        &run,
        run.file(0),
        &[
            "--tokenizer",
            &dir("qwen3"),
            "--chat-template",
            keep.to_str().unwrap(),
        ],
    );
    assert_eq!(rate, expected);
    let reward = &outcome.extra["reward"];
    // Eq. 4 with β = 0.2 and γ = 0.55: R = 1 · (1 + 0.2 · min(rate, 0.55)).
    let bonus = 0.2 * rate.min(0.55);
    assert_eq!(reward["compression_bonus"].as_f64(), Some(bonus));
    assert_eq!(reward["total"].as_f64(), Some(1.0 + bonus));
    let saved = std::fs::read_to_string(run.dir.join("config.toml")).unwrap();
    assert!(saved.contains("chat_template"), "{saved}");

    // The paper's Eq. 3 with another tokenizer given as reward.tokenizer.
    let run = Run::agile(
        "1",
        &[
            "--set",
            "reward.compression_weight=0.2",
            "--set",
            &format!("reward.tokenizer={}", dir("llama3_1")),
            "--set",
            "reward.compression_rate=\"paper\"",
        ],
    );
    let outcome = run.trajectory(0).outcome.unwrap();
    let recorded = &outcome.extra["compression_reward"];
    assert_eq!(recorded["rate"], "paper");
    let rate = recorded["compression_rate"].as_f64().unwrap();
    let expected = offline_rate(
        &run,
        run.file(0),
        &["--tokenizer", &dir("llama3_1"), "--rate", "paper"],
    );
    assert_eq!(rate, expected);
    assert_eq!(
        outcome.extra["reward"]["compression_bonus"].as_f64(),
        Some(0.2 * rate.min(0.55))
    );
}

/// The compression bonus counted with a GGUF file's own tokenizer and chat template (the
/// embedded model's, SmolLM2-135M-Instruct): `reward.tokenizer = FILE.gguf` online gives the
/// rate `swerve context reward --tokenizer FILE.gguf` measures afterwards, and not the rate
/// Qwen3's tokenizer gives, so the model's own tokenizer is the one counting.
#[cfg(feature = "embedded")]
#[test]
fn the_compression_bonus_counts_with_a_gguf_files_own_tokenizer() {
    if !crate::embedded::model_present() {
        return;
    }
    let gguf = swerve_embedded::default_model_path();
    let gguf = gguf.to_str().unwrap();
    let run = Run::agile(
        "1",
        &[
            "--set",
            "reward.compression_weight=0.2",
            "--set",
            &format!("reward.tokenizer={gguf}"),
        ],
    );
    let outcome = run.trajectory(0).outcome.unwrap();
    let recorded = &outcome.extra["compression_reward"];
    let rate = recorded["compression_rate"].as_f64().unwrap();
    assert!(rate > 0.0, "{recorded}");
    assert_eq!(
        rate,
        offline_rate(&run, run.file(0), &["--tokenizer", gguf])
    );
    let qwen = offline_rate(&run, run.file(0), &["--tokenizer", &dir("qwen3")]);
    assert_ne!(rate, qwen, "the GGUF file's tokenizer counts, not Qwen3's");
    // Eq. 4 (§2.3) with β = 0.2 and γ = 0.55.
    assert_eq!(
        outcome.extra["reward"]["compression_bonus"].as_f64(),
        Some(0.2 * rate.min(0.55))
    );
}
