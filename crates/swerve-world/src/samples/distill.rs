//! Distilling reverse-reasoning CoT for recorded samples (SWE-World §4.2.2, Fig. G.4): a
//! teacher writes the derivation of a sample's answer ([`distill`]), a leak check and an
//! optional judge filter it; [`key`] names a sample stably so that a rerun resumes.
//! [`distill_into`] does it for many samples at once, appending accepted and rejected rows
//! to files a rerun resumes from ([`pending`]).

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use swerve_llm::{Model, ModelRequest};

use super::WorldSample;
use crate::cot::{
    self, answer, context_text, cot_messages, judge_messages, parse_judge_reply,
    parse_teacher_reply, teacher_messages,
};

/// A sample's stable key (FNV-1a of its JSON), for resuming.
pub fn key(sample: &WorldSample) -> String {
    let text = serde_json::to_string(sample).unwrap_or_default();
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{hash:016x}")
}

/// How one sample ended.
pub enum Distilled {
    /// A derivation passed the leak check and the judge (if any).
    Accepted {
        /// The teacher's derivation.
        reasoning: String,
        /// The attempt that succeeded (from 1).
        attempts: u32,
        /// The judge's reasons for accepting it; `None` without a judge.
        judge_reasons: Option<String>,
    },
    /// Every attempt failed.
    Rejected {
        /// Why each attempt failed, one line per attempt.
        reasons: Vec<String>,
        /// The last well-formed derivation, if any.
        last_reasoning: Option<String>,
    },
}

/// The teacher's derivation for `sample`, tried up to `max_attempts` times until one is
/// well formed, passes the leak check and (with a judge) is accepted.
pub async fn distill(
    teacher: &dyn Model,
    judge: Option<&dyn Model>,
    sample: &WorldSample,
    max_attempts: u32,
) -> Distilled {
    let answer = answer(sample);
    let context = context_text(sample);
    let mut reasons = Vec::new();
    let mut last_reasoning = None;
    for attempt in 1..=max_attempts {
        let request = ModelRequest::chat(teacher_messages(sample));
        let reply = match teacher.complete(&request).await {
            Ok(reply) => reply,
            Err(error) => {
                reasons.push(format!(
                    "attempt {attempt}: the teacher call failed: {error}"
                ));
                continue;
            }
        };
        let reasoning = match parse_teacher_reply(&reply.content, &answer) {
            Ok(reasoning) => reasoning,
            Err(error) => {
                reasons.push(format!(
                    "attempt {attempt}: unusable teacher reply: {error}"
                ));
                continue;
            }
        };
        last_reasoning = Some(reasoning.clone());
        if let Some(leak) = cot::leak(&reasoning, &answer, &context) {
            reasons.push(format!("attempt {attempt}: leak check: {leak}"));
            continue;
        }
        let Some(judge) = judge else {
            return Distilled::Accepted {
                reasoning,
                attempts: attempt,
                judge_reasons: None,
            };
        };
        let request = ModelRequest::chat(judge_messages(sample, &reasoning));
        let verdict = match judge.complete(&request).await {
            Ok(reply) => parse_judge_reply(&reply.content).map_err(|error| error.to_string()),
            Err(error) => Err(format!("the judge call failed: {error}")),
        };
        match verdict {
            Ok(verdict) if verdict.accepted => {
                return Distilled::Accepted {
                    reasoning,
                    attempts: attempt,
                    judge_reasons: Some(verdict.reasons),
                };
            }
            Ok(verdict) => reasons.push(format!(
                "attempt {attempt}: rejected by the judge: {}",
                verdict.reasons
            )),
            Err(error) => reasons.push(format!("attempt {attempt}: {error}")),
        }
    }
    Distilled::Rejected {
        reasons,
        last_reasoning,
    }
}

/// Where [`distill_into`] writes, and how it works.
pub struct DistillFiles<'a> {
    /// Accepted rows (appended; resumed from).
    pub accepted: &'a Path,
    /// Rejected rows with their reasons (appended; resumed from).
    pub rejected: &'a Path,
    /// Samples distilled at once.
    pub concurrency: usize,
    /// Attempts per sample.
    pub max_attempts: u32,
    /// The teacher's model name, recorded in each accepted row.
    pub teacher_name: &'a str,
    /// The judge's model name, when there is a judge.
    pub judge_name: Option<&'a str>,
}

impl DistillFiles<'_> {
    /// An error when the settings cannot work (no attempt or no concurrency).
    pub fn check(&self) -> Result<()> {
        if self.max_attempts == 0 || self.concurrency == 0 {
            bail!("world.cot.max_attempts and world.cot.concurrency must be at least 1");
        }
        Ok(())
    }
}

/// What [`distill_into`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DistillCounts {
    /// Samples distilled now and accepted.
    pub accepted: usize,
    /// Samples distilled now and rejected.
    pub rejected: usize,
}

/// `OUT.rejected.jsonl` beside `OUT` (its `.jsonl` replaced): where rejected rows go by
/// default.
pub fn rejected_file(out: &Path) -> PathBuf {
    let name = out
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_suffix(".jsonl").unwrap_or(&name);
    out.with_file_name(format!("{stem}.rejected.jsonl"))
}

/// The samples of `samples` not yet in `files` (by [`key`]), with their keys, and how many
/// were. A last line cut off by a crash is removed from each file so that appending goes on
/// cleanly.
pub fn pending(
    samples: Vec<WorldSample>,
    files: &DistillFiles,
) -> Result<(Vec<(String, WorldSample)>, usize)> {
    let mut done = HashSet::new();
    done_keys(files.accepted, &mut done)?;
    done_keys(files.rejected, &mut done)?;
    let pending = samples
        .into_iter()
        .map(|sample| (key(&sample), sample))
        .filter(|(key, _)| !done.contains(key))
        .collect();
    Ok((pending, done.len()))
}

/// Distills each of `pending` (from [`pending`]), `files.concurrency` at once, appending each
/// accepted row (its `messages` the SFT conversation with the derivation) or rejected row
/// (with the reasons) as it is done, so that a rerun resumes.
pub fn distill_into(
    teacher: Arc<dyn Model>,
    judge: Option<Arc<dyn Model>>,
    pending: Vec<(String, WorldSample)>,
    files: &DistillFiles,
) -> Result<DistillCounts> {
    files.check()?;
    let open = |path: &Path| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("cannot open {}", path.display()))
    };
    let mut accepted_file = open(files.accepted)?;
    let mut rejected_file = open(files.rejected)?;
    let runtime = tokio::runtime::Runtime::new()?;
    let permits = Arc::new(tokio::sync::Semaphore::new(files.concurrency));
    let max_attempts = files.max_attempts;
    let handles: Vec<_> = pending
        .into_iter()
        .map(|(key, sample)| {
            let (teacher, judge, permits) = (teacher.clone(), judge.clone(), permits.clone());
            runtime.spawn(async move {
                let _permit = permits.acquire_owned().await;
                let distilled =
                    distill(teacher.as_ref(), judge.as_deref(), &sample, max_attempts).await;
                (key, sample, distilled)
            })
        })
        .collect();
    let mut counts = DistillCounts {
        accepted: 0,
        rejected: 0,
    };
    for handle in handles {
        let (key, sample, distilled) = runtime.block_on(handle)?;
        let (kind, rollout) = match &sample {
            WorldSample::Swt(sample) => ("swt", sample.rollout.as_str()),
            WorldSample::Swr(sample) => ("swr", sample.rollout.as_str()),
        };
        let (file, path, row) = match distilled {
            Distilled::Accepted {
                reasoning,
                attempts,
                judge_reasons,
            } => {
                counts.accepted += 1;
                let row = json!({
                    "messages": cot_messages(&sample, &reasoning),
                    "kind": kind,
                    "instance_id": sample.instance_id(),
                    "rollout": rollout,
                    "key": key,
                    "cot": {
                        "teacher": files.teacher_name,
                        "judge": files.judge_name,
                        "attempts": attempts,
                        "judge_reasons": judge_reasons,
                    },
                });
                (&mut accepted_file, files.accepted, row)
            }
            Distilled::Rejected {
                reasons,
                last_reasoning,
            } => {
                counts.rejected += 1;
                let row = json!({
                    "kind": kind,
                    "instance_id": sample.instance_id(),
                    "rollout": rollout,
                    "key": key,
                    "reasons": reasons,
                    "last_reasoning": last_reasoning,
                });
                (&mut rejected_file, files.rejected, row)
            }
        };
        writeln!(file, "{row}")
            .and_then(|()| file.flush())
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(counts)
}

/// The keys already in `path` (accepted or rejected rows of an earlier run). A last line
/// cut off by a crash is removed so that appending goes on cleanly.
fn done_keys(path: &Path, keys: &mut HashSet<String>) -> Result<()> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Ok(());
    };
    let complete = match text.rfind('\n') {
        Some(end) => &text[..=end],
        None => "",
    };
    if complete.len() < text.len() {
        std::fs::write(path, complete)
            .with_context(|| format!("cannot repair {}", path.display()))?;
    }
    for (number, line) in complete.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let row: Value = serde_json::from_str(line).with_context(|| {
            format!(
                "{}:{}: not a row of `swerve data world --reasoning`",
                path.display(),
                number + 1
            )
        })?;
        match row["key"].as_str() {
            Some(key) => {
                keys.insert(key.to_owned());
            }
            None => bail!(
                "{}:{}: the row has no \"key\"; --reasoning resumes only into files it wrote \
                 (give another --out)",
                path.display(),
                number + 1
            ),
        }
    }
    Ok(())
}
