//! Running the viewer baselines over PR-Edit instances: per instance the changed lines of
//! the original ([`super::truth`]), then each method's returned lines for the instruction,
//! scored ([`super::scores`]), several instances at once; and the summary per method,
//! overall and split by file length.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;
use std::time::Instant;

use futures_util::StreamExt;
use futures_util::stream;
use serde::{Deserialize, Serialize};
use swerve_llm::{HttpEmbedder, Model, Usage};

use super::bm25::Bm25;
use super::chunks::{ScoredChunk, lines_of, runs};
use super::embedding::retrieve;
use super::scores::{Scores, Stats};
use super::truth::changed_lines;
use crate::bench::EditInstance;
use crate::subagent::{SourceFile, ViewStatus, view};
use crate::text::split_lines;

/// Files of at most this many lines are "short" in the summary's split (SWE-Edit discusses
/// files over 300 lines apart).
pub const LONG_FILE_LINES: usize = 300;

/// A way of picking the lines of a file that answer a query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Okapi BM25 over fixed chunks.
    Bm25,
    /// Cosine similarity of embeddings over fixed chunks.
    Embedding,
    /// The LLM viewer subagent.
    Llm,
}

impl Method {
    /// The method's name (`bm25`, `embedding`, `llm`).
    pub fn name(&self) -> &'static str {
        match self {
            Self::Bm25 => "bm25",
            Self::Embedding => "embedding",
            Self::Llm => "llm",
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Method {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, String> {
        match name.trim() {
            "bm25" => Ok(Self::Bm25),
            "embedding" => Ok(Self::Embedding),
            "llm" => Ok(Self::Llm),
            other => Err(format!(
                "unknown viewer method `{other}`: expected bm25, embedding or llm"
            )),
        }
    }
}

/// A method ready to run, with what it needs.
#[derive(Clone, Copy)]
pub enum Viewer<'a> {
    /// BM25 with these parameters.
    Bm25(Bm25),
    /// Embeddings from this endpoint.
    Embedding(&'a HttpEmbedder),
    /// This viewer model, called as `llm_editor view` calls it.
    Llm(&'a dyn Model),
}

impl Viewer<'_> {
    /// Which method this is.
    pub fn method(&self) -> Method {
        match self {
            Self::Bm25(_) => Method::Bm25,
            Self::Embedding(_) => Method::Embedding,
            Self::Llm(_) => Method::Llm,
        }
    }

    /// The model behind it, if any.
    pub fn model(&self) -> Option<&str> {
        match self {
            Self::Bm25(_) => None,
            Self::Embedding(embedder) => Some(embedder.name()),
            Self::Llm(model) => Some(model.name()),
        }
    }
}

/// How the retrievers cut files and how many instances run at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompareOptions {
    /// Lines per chunk (30); 0 is taken as 1.
    pub chunk_lines: usize,
    /// Chunks returned (3).
    pub top: usize,
    /// Instances in flight at once (at least 1).
    pub concurrency: usize,
}

impl Default for CompareOptions {
    fn default() -> Self {
        Self {
            chunk_lines: 30,
            top: 3,
            concurrency: 8,
        }
    }
}

/// One instance's result for one method (a line of `viewers.jsonl`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ViewerRecord {
    /// The instance.
    pub instance_id: String,
    /// Its file's path.
    pub path: String,
    /// The method.
    pub method: Method,
    /// `retrieved` or `error` for the retrievers; the viewer's status (`shown`,
    /// `nothing_relevant`, `parse_error`, `model_error`) for `llm`.
    pub status: String,
    /// The method failed (a failed call, an unparseable reply) and returned nothing.
    pub failed: bool,
    /// What went wrong, when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The lines the change touches, as `[start, end]` runs.
    pub relevant: Vec<[usize; 2]>,
    /// The lines returned, as `[start, end]` runs.
    pub returned: Vec<[usize; 2]>,
    /// Recall, precision, F1, context reduction and the line counts behind them.
    #[serde(flatten)]
    pub scores: Scores,
    /// The retrievers' chosen chunks with their scores, best first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chunks: Vec<ScoredChunk>,
    /// The model called, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The model call's token counts, if a model was called.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// The model call's cost, if a model was called.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// Seconds the method took.
    pub seconds: f64,
}

/// One method's figures (in `viewers-summary.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MethodSummary {
    /// The model behind the method, if any.
    pub model: Option<String>,
    /// Instances where the method failed (counted in the figures as returning nothing).
    pub failures: usize,
    /// Over every evaluated instance.
    pub all: Stats,
    /// Over files of at most [`LONG_FILE_LINES`] lines.
    pub short_files: Stats,
    /// Over longer files.
    pub long_files: Stats,
    /// Token counts of its model calls.
    pub usage: Usage,
    /// Cost of its model calls.
    pub cost: f64,
    /// Seconds spent in the method, summed over instances.
    pub seconds: f64,
}

/// The comparison's figures (`viewers-summary.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ViewersSummary {
    /// Instances read.
    pub instances: usize,
    /// Instances scored (those whose change touches a line of the original).
    pub evaluated: usize,
    /// Instances skipped because the change touches no line of the original.
    pub skipped_no_changes: usize,
    /// Their ids.
    pub skipped_ids: Vec<String>,
    /// Lines per chunk of the retrievers.
    pub chunk_lines: usize,
    /// Chunks the retrievers return.
    pub top: usize,
    /// BM25's parameters, when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bm25: Option<Bm25>,
    /// Each method's figures.
    pub methods: BTreeMap<Method, MethodSummary>,
    /// Wall-clock seconds of the whole comparison.
    pub wall_seconds: f64,
}

/// Runs every viewer on every instance, `options.concurrency` instances at once: the
/// records (in the instances' order, then the viewers' order) and the summary.
pub async fn compare(
    instances: &[EditInstance],
    viewers: &[Viewer<'_>],
    options: &CompareOptions,
) -> (Vec<ViewerRecord>, ViewersSummary) {
    let started = Instant::now();
    let per_instance: Vec<Option<Vec<ViewerRecord>>> = stream::iter(instances)
        .map(|instance| evaluate(instance, viewers, options))
        .buffered(options.concurrency.max(1))
        .collect()
        .await;
    let skipped_ids: Vec<String> = instances
        .iter()
        .zip(&per_instance)
        .filter(|(_, records)| records.is_none())
        .map(|(instance, _)| instance.instance_id.clone())
        .collect();
    let records: Vec<ViewerRecord> = per_instance.into_iter().flatten().flatten().collect();
    let methods = viewers
        .iter()
        .map(|viewer| {
            let of_method: Vec<&ViewerRecord> = records
                .iter()
                .filter(|record| record.method == viewer.method())
                .collect();
            (viewer.method(), summarize(viewer.model(), &of_method))
        })
        .collect();
    let summary = ViewersSummary {
        instances: instances.len(),
        evaluated: instances.len() - skipped_ids.len(),
        skipped_no_changes: skipped_ids.len(),
        skipped_ids,
        chunk_lines: options.chunk_lines,
        top: options.top,
        bm25: viewers.iter().find_map(|viewer| match viewer {
            Viewer::Bm25(bm25) => Some(*bm25),
            _ => None,
        }),
        methods,
        wall_seconds: started.elapsed().as_secs_f64(),
    };
    (records, summary)
}

fn summarize(model: Option<&str>, records: &[&ViewerRecord]) -> MethodSummary {
    let scores = |short: Option<bool>| {
        Stats::of(
            records
                .iter()
                .filter(move |record| {
                    short.is_none_or(|short| (record.scores.lines <= LONG_FILE_LINES) == short)
                })
                .map(|record| &record.scores),
        )
    };
    let mut usage = Usage::default();
    for record in records {
        usage += record.usage.unwrap_or_default();
    }
    MethodSummary {
        model: model.map(str::to_owned),
        failures: records.iter().filter(|record| record.failed).count(),
        all: scores(None),
        short_files: scores(Some(true)),
        long_files: scores(Some(false)),
        usage,
        cost: records.iter().filter_map(|record| record.cost).sum(),
        seconds: records.iter().map(|record| record.seconds).sum(),
    }
}

/// Every viewer's record for one instance; `None` when its change touches no line.
async fn evaluate(
    instance: &EditInstance,
    viewers: &[Viewer<'_>],
    options: &CompareOptions,
) -> Option<Vec<ViewerRecord>> {
    let relevant = changed_lines(&instance.original, &instance.target);
    if relevant.is_empty() {
        return None;
    }
    let mut records = Vec::with_capacity(viewers.len());
    for viewer in viewers {
        records.push(run_viewer(instance, viewer, &relevant, options).await);
    }
    Some(records)
}

/// What one method returned for an instance, before scoring.
struct Returned {
    lines: BTreeSet<usize>,
    status: String,
    error: Option<String>,
    chunks: Vec<ScoredChunk>,
    usage: Option<Usage>,
    cost: Option<f64>,
    seconds: Option<f64>,
}

impl Returned {
    fn retrieved(chunks: Vec<ScoredChunk>) -> Self {
        Self {
            lines: lines_of(&chunks),
            status: "retrieved".into(),
            error: None,
            chunks,
            usage: None,
            cost: None,
            seconds: None,
        }
    }
}

async fn run_viewer(
    instance: &EditInstance,
    viewer: &Viewer<'_>,
    relevant: &BTreeSet<usize>,
    options: &CompareOptions,
) -> ViewerRecord {
    let started = Instant::now();
    let lines = split_lines(&instance.original);
    let query = &instance.instruction;
    let returned = match viewer {
        Viewer::Bm25(bm25) => {
            Returned::retrieved(bm25.retrieve(&lines, query, options.chunk_lines, options.top))
        }
        Viewer::Embedding(embedder) => {
            match retrieve(embedder, &lines, query, options.chunk_lines, options.top).await {
                Ok(retrieved) => Returned {
                    usage: Some(retrieved.embeddings.usage),
                    cost: Some(retrieved.embeddings.cost),
                    seconds: Some(retrieved.embeddings.latency.as_secs_f64()),
                    ..Returned::retrieved(retrieved.chunks)
                },
                Err(error) => Returned {
                    status: "error".into(),
                    error: Some(error),
                    ..Returned::retrieved(Vec::new())
                },
            }
        }
        Viewer::Llm(model) => {
            let path = match instance.path.is_empty() {
                true => "file",
                false => &instance.path,
            };
            let file = SourceFile {
                path,
                text: &instance.original,
            };
            let outcome = view(*model, file, query).await;
            let failed = matches!(
                outcome.status,
                ViewStatus::ParseError | ViewStatus::ModelError
            );
            let call = outcome.subagent.calls.first();
            Returned {
                lines: outcome
                    .ranges
                    .iter()
                    .flat_map(|range| range.start..=range.end)
                    .collect(),
                status: outcome.status.name().into(),
                error: failed.then(|| outcome.output.clone()),
                chunks: Vec::new(),
                usage: Some(outcome.subagent.usage()),
                cost: Some(outcome.subagent.cost()),
                seconds: call.and_then(|call| call.model_seconds),
            }
        }
    };
    ViewerRecord {
        instance_id: instance.instance_id.clone(),
        path: instance.path.clone(),
        method: viewer.method(),
        failed: returned.error.is_some(),
        status: returned.status,
        error: returned.error,
        relevant: runs(relevant),
        returned: runs(&returned.lines),
        scores: Scores::of(relevant, &returned.lines, lines.len()),
        chunks: returned.chunks,
        model: viewer.model().map(str::to_owned),
        usage: returned.usage,
        cost: returned.cost,
        seconds: returned
            .seconds
            .unwrap_or_else(|| started.elapsed().as_secs_f64()),
    }
}
