//! Running PR-Edit: every instance's instruction goes to the editor model (several at
//! once), its blocks are applied in memory, and the result is compared with the target:
//! format success, match failures, exact and normalized match (SWE-Edit's normalization
//! and the string-preserving one), whole-file rewrites, fallbacks, and optionally the
//! judge's verdict. Results come in the instances' order.

use std::time::Instant;

use futures_util::StreamExt;
use futures_util::stream;
use serde::{Deserialize, Serialize};
use swerve_llm::{Model, Usage};

use super::instance::EditInstance;
use super::judge::{Judgement, judge};
use super::normalize;
use crate::blocks::{MatchOptions, Mode};
use crate::format::EditFormat;
use crate::subagent::{EditStatus, SourceFile, edit};

/// How to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunOptions {
    /// Instances in flight at once (at least 1).
    pub concurrency: usize,
    /// The matching aids applied to the editor's blocks.
    pub matching: MatchOptions,
    /// The editor's format policy.
    pub format: EditFormat,
}

/// One instance's result (a line of `results.jsonl`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstanceResult {
    /// The instance.
    pub instance_id: String,
    /// Its file's path.
    pub path: String,
    /// How the edit ended.
    pub status: EditStatus,
    /// The reply was well-formed (blocks, a rewrite alone).
    pub format_ok: bool,
    /// Every block applied.
    pub applied: bool,
    /// Find-and-replace or whole-file rewrite, when well-formed.
    pub mode: Option<Mode>,
    /// Blocks in the reply, when well-formed.
    pub blocks: usize,
    /// Blocks applied by the whitespace-tolerant fallback.
    pub fallbacks: usize,
    /// The result equals the target byte for byte.
    pub exact_match: bool,
    /// The result equals the target after SWE-Edit's normalization.
    pub normalized_match: bool,
    /// The result equals the target after the string-preserving normalization.
    pub normalized_match_strings: bool,
    /// The judge's verdict, when a judge was given.
    pub judge: Option<Judgement>,
    /// The editor call's token counts.
    pub usage: Usage,
    /// The editor call's cost.
    pub cost: f64,
    /// Seconds the editor call took.
    pub seconds: f64,
    /// What the agent would have been shown.
    pub message: String,
    /// The editor's reply as returned (empty when the call failed).
    pub reply: String,
}

/// Evaluates one instance.
pub async fn evaluate(
    instance: &EditInstance,
    editor: &dyn Model,
    judge_model: Option<&dyn Model>,
    matching: &MatchOptions,
    format: EditFormat,
) -> InstanceResult {
    let path = if instance.path.is_empty() {
        "file"
    } else {
        &instance.path
    };
    let file = SourceFile {
        path,
        text: &instance.original,
    };
    let outcome = edit(editor, file, &instance.instruction, matching, format).await;
    let applied = matches!(outcome.status, EditStatus::Applied | EditStatus::Unchanged);
    let result = outcome.new_text.as_deref().filter(|_| applied);
    let matches = |normalize: &dyn Fn(&str) -> String| {
        result.is_some_and(|result| normalize(result) == normalize(&instance.target))
    };
    let judgement = match judge_model {
        Some(model) => Some(judge(model, instance, result).await),
        None => None,
    };
    let call = outcome.subagent.calls.first();
    InstanceResult {
        instance_id: instance.instance_id.clone(),
        path: instance.path.clone(),
        status: outcome.status,
        format_ok: !matches!(
            outcome.status,
            EditStatus::FormatError | EditStatus::ModelError
        ),
        applied,
        mode: outcome.mode,
        blocks: outcome.blocks,
        fallbacks: outcome.fallbacks,
        exact_match: result == Some(instance.target.as_str()),
        normalized_match: matches(&normalize::swe_edit),
        normalized_match_strings: matches(&|code| {
            normalize::preserving_strings(code, &instance.path)
        }),
        judge: judgement,
        usage: outcome.subagent.usage(),
        cost: outcome.subagent.cost(),
        seconds: call.and_then(|call| call.model_seconds).unwrap_or(0.0),
        message: outcome.output,
        reply: call
            .map(|call| call.response_text.clone())
            .unwrap_or_default(),
    }
}

/// Evaluates every instance, `options.concurrency` at once, handing each result to
/// `record` in the instances' order as soon as it and those before it are done; stops at
/// the first error `record` returns.
pub async fn run<E>(
    instances: &[EditInstance],
    editor: &dyn Model,
    judge_model: Option<&dyn Model>,
    options: &RunOptions,
    mut record: impl FnMut(&InstanceResult) -> Result<(), E>,
) -> Result<Vec<InstanceResult>, E> {
    let mut results = stream::iter(instances)
        .map(|instance| {
            evaluate(
                instance,
                editor,
                judge_model,
                &options.matching,
                options.format,
            )
        })
        .buffered(options.concurrency.max(1));
    let mut all = Vec::with_capacity(instances.len());
    while let Some(result) = results.next().await {
        record(&result)?;
        all.push(result);
    }
    Ok(all)
}

/// A count out of a total, and their ratio (0 when the total is 0).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rate {
    /// How many.
    pub count: usize,
    /// Out of how many.
    pub of: usize,
    /// `count / of`.
    pub rate: f64,
}

impl Rate {
    fn of<'a, T: 'a>(items: impl IntoIterator<Item = &'a T>, test: impl Fn(&T) -> bool) -> Self {
        let (mut count, mut of) = (0, 0);
        for item in items {
            of += 1;
            count += usize::from(test(item));
        }
        let rate = if of == 0 {
            0.0
        } else {
            count as f64 / of as f64
        };
        Self { count, of, rate }
    }
}

/// The benchmark's figures (`summary.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Instances run.
    pub instances: usize,
    /// Well-formed replies, of all instances.
    pub format_success: Rate,
    /// Well-formed replies whose blocks did not match, of all instances.
    pub match_failures: Rate,
    /// Failed editor calls, of all instances.
    pub model_errors: Rate,
    /// Edits that applied, of all instances.
    pub applied: Rate,
    /// Results equal to the target byte for byte, of all instances.
    pub exact_match: Rate,
    /// SWE-Edit's normalized match, of all instances.
    pub normalized_match: Rate,
    /// The string-preserving normalized match, of all instances.
    pub normalized_match_strings: Rate,
    /// Whole-file rewrites, of well-formed replies.
    pub whole_file_rewrite: Rate,
    /// Instances where the whitespace-tolerant fallback applied a block, of all instances.
    pub fallback_used: Rate,
    /// Equivalent verdicts, of the instances with a verdict (`None` without a judge).
    pub judge_equivalent: Option<Rate>,
    /// Instances the judge gave no verdict on.
    pub judge_errors: usize,
    /// The editor's token counts.
    pub editor_usage: Usage,
    /// The editor's cost.
    pub editor_cost: f64,
    /// The judge's token counts.
    pub judge_usage: Usage,
    /// The judge's cost.
    pub judge_cost: f64,
    /// Wall-clock seconds of the run.
    pub wall_seconds: f64,
    /// Instances per wall-clock second.
    pub instances_per_second: f64,
}

impl Summary {
    /// The figures of `results`, run in `wall_seconds`.
    pub fn of(results: &[InstanceResult], wall_seconds: f64) -> Self {
        let judged: Vec<&Judgement> = results.iter().filter_map(|r| r.judge.as_ref()).collect();
        let verdicts: Vec<bool> = judged.iter().filter_map(|j| j.equivalent).collect();
        let (mut editor_usage, mut judge_usage) = (Usage::default(), Usage::default());
        for result in results {
            editor_usage += result.usage;
        }
        for judgement in &judged {
            judge_usage += judgement.usage;
        }
        let well_formed: Vec<&InstanceResult> = results.iter().filter(|r| r.format_ok).collect();
        Self {
            instances: results.len(),
            format_success: Rate::of(results, |r| r.format_ok),
            match_failures: Rate::of(results, |r| r.status == EditStatus::MatchFailure),
            model_errors: Rate::of(results, |r| r.status == EditStatus::ModelError),
            applied: Rate::of(results, |r| r.applied),
            exact_match: Rate::of(results, |r| r.exact_match),
            normalized_match: Rate::of(results, |r| r.normalized_match),
            normalized_match_strings: Rate::of(results, |r| r.normalized_match_strings),
            whole_file_rewrite: Rate::of(well_formed, |r| r.mode == Some(Mode::Rewrite)),
            fallback_used: Rate::of(results, |r| r.fallbacks > 0),
            judge_equivalent: (!judged.is_empty()).then(|| Rate::of(&verdicts, |v| *v)),
            judge_errors: judged.len() - verdicts.len(),
            editor_usage,
            editor_cost: results.iter().map(|r| r.cost).sum(),
            judge_usage,
            judge_cost: judged.iter().map(|j| j.cost).sum(),
            wall_seconds,
            instances_per_second: match wall_seconds > 0.0 {
                true => results.len() as f64 / wall_seconds,
                false => 0.0,
            },
        }
    }
}

/// Runs every instance and summarizes (see [`run`]); the summary's wall time covers the run.
pub async fn run_and_summarize<E>(
    instances: &[EditInstance],
    editor: &dyn Model,
    judge_model: Option<&dyn Model>,
    options: &RunOptions,
    record: impl FnMut(&InstanceResult) -> Result<(), E>,
) -> Result<(Vec<InstanceResult>, Summary), E> {
    let started = Instant::now();
    let results = run(instances, editor, judge_model, options, record).await?;
    let summary = Summary::of(&results, started.elapsed().as_secs_f64());
    Ok((results, summary))
}
