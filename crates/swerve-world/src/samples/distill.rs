//! Distilling reverse-reasoning CoT for recorded samples (SWE-World §4.2.2, Fig. G.4): a
//! teacher writes the derivation of a sample's answer ([`distill`]), a leak check and an
//! optional judge filter it; [`key`] names a sample stably so that a rerun resumes.

use swerve_llm::{Model, ModelRequest};

use super::WorldSample;
use crate::cot::{
    self, answer, context_text, judge_messages, parse_judge_reply, parse_teacher_reply,
    teacher_messages,
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
