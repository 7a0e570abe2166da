//! Reverse-reasoning chain-of-thought for SWT and SWR training data (paper §4.2.2, App.
//! B.1, Fig. G.4): a teacher sees a recorded sample's context *and* its real outcome and
//! writes a forward derivation that must not reveal the outcome; a leak check and an
//! LLM judge filter the derivations; the accepted ones become targets
//! `<think>CoT</think>` followed by the real answer.
//!
//! Everything here is pure: the prompts ([`teacher_messages`], [`judge_messages`]), reading
//! the replies ([`parse_teacher_reply`], [`parse_judge_reply`]), the leak check ([`leak`])
//! and the target ([`cot_target`]). Calling the models is `swerve data world --reasoning`.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use swerve_llm::{HttpModelConfig, Message};

use crate::context::paper::{swr_sections, swt_sections};
use crate::samples::WorldSample;

/// The `[world.cot]` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CotConfig {
    /// The teacher that writes the derivations (SWE-World: Qwen3-235B-A22B-Thinking).
    pub teacher: HttpModelConfig,
    /// The judge that filters them; none when its name is unset (the leak check still runs).
    pub judge: HttpModelConfig,
    /// Teacher replies tried per sample before it is rejected.
    pub max_attempts: u32,
    /// Samples distilled at once.
    pub concurrency: usize,
}

impl Default for CotConfig {
    fn default() -> Self {
        Self {
            teacher: HttpModelConfig::default(),
            judge: HttpModelConfig::default(),
            max_attempts: 3,
            concurrency: 4,
        }
    }
}

/// Fig. G.4's instructions (SWR).
const SWR_TEACHER_SYSTEM: &str = r#"You are an expert software engineering test runner simulator and a world-class SWE bug-fix evaluator.

In this task, the TRUE test execution outcome (a JSON containing the final 'test_report' and 'reward') is already provided in the input. You MUST copy that JSON exactly at the end of your answer.

However, your reasoning MUST be written as if you do NOT know the true outcome. You must only use the provided context (analysis, problem statement, command, code, patches, test lists, etc.) to do a forward simulation that *could have produced* the true outcome.

The input context you receive is organized into multiple sections. Each section has a specific meaning and purpose:

1. Initial Analysis of the Problem: a high-level technical analysis of the bug, including the observed error behavior, core bug, and intended fix. Use it to understand what is broken and what the fix aims to change.
2. Problem Description: the specific issue the agent is working on. Use it to understand the wrong behavior and the expected correct behavior.
3. Command to Simulate: the exact command that will be executed. Use it to determine the entry point, what tests or scripts run, and how execution proceeds.
4. Content of Code to be Executed: the files and code the command actually executes (empty when embedded in the command). Use it as the ground truth for runtime semantics.
5. Agent's Current Code Modifications (Patch): the diff the agent applied. Use it to understand exactly what logic changed.
6. Gold Standard Patch (For Your Reference): the correct solution. Compare it with the agent's patch to see whether they are functionally equivalent or where they differ.
7. FAIL_TO_PASS Tests: tests that fail before and must pass after a correct fix. If any fails, the reward must be 0.
8. PASS_TO_PASS Tests: regression tests that must keep passing. If any fails, the reward must be 0.
9. True Execution Result (JSON): the real outcome of running the command, with 'test_report' and 'reward'. You must copy it exactly at the end of your answer, but you must NOT use it to guide, justify, or leak into your reasoning.

### Your Task
A) Write a detailed forward-simulation reasoning trace that starts from the context and code semantics; compares the agent patch with the gold patch to judge whether they are functionally equivalent; predicts, as expectations, which FAIL_TO_PASS and PASS_TO_PASS tests should pass or fail and why; walks through the execution path like a code interpreter; and concludes with the test report and the reward (1 if all pass, otherwise 0).

B) CRITICAL CAUSALITY REQUIREMENT (NO LEAKING / NO BACKWARD EXPLANATION)
- Your reasoning MUST NOT mention that you have been given the true result.
- Your reasoning MUST NOT quote, paraphrase, or reference any concrete lines from the true 'test_report'.
- Do NOT write post-hoc explanations like "we see X in the output, therefore ...".
- If you mention outcomes, phrase them as expectations derived from the code, e.g. "This test is expected to pass because...", "It likely fails due to...".
- Do NOT copy any distinctive strings from the True Execution Result into your reasoning.

C) After you finish the reasoning, append the provided True Execution Result JSON EXACTLY as-is. Do not reformat it, do not add keys, do not add any commentary after the JSON.

### Output Format
You must output exactly:
<sim_reasoning>
...plain-text forward simulation reasoning...
</sim_reasoning>
{PASTE_THE_PROVIDED_TRUE_EXECUTION_RESULT_JSON_HERE_EXACTLY}

Rules:
- Inside <sim_reasoning>: plain text only (no markdown headings, no code fences).
- After </sim_reasoning>: immediately paste the JSON exactly.
- Do not output anything else."#;

/// Fig. G.4's instructions adapted to SWT (a command's stdout, stderr and exit code).
const SWT_TEACHER_SYSTEM: &str = r#"You are an expert Python code execution simulator and a world-class software engineer.

In this task, the TRUE execution result of a command (a JSON containing 'stdout', 'stderr' and 'exit_code') is already provided in the input. You MUST copy that JSON exactly at the end of your answer.

However, your reasoning MUST be written as if you do NOT know the true result. You must only use the provided context (analysis, problem statement, command, code, patches) to do a forward simulation that *could have produced* the true result.

The input context is organized into sections: 1. Initial Analysis of the Problem (the bug and its intended fix); 2. Problem Description (the issue); 3. Command to Simulate (the exact command); 4. Content of Code to be Executed (the code the command runs; empty when embedded in the command); 5. Agent's Current Code Modifications (Patch); 6. Gold Standard Patch (For Your Reference), to compare with the agent's patch; 7. True Execution Result (JSON), which you must copy at the end but must NOT use to guide, justify, or leak into your reasoning.

### Your Task
A) Write a detailed forward-simulation reasoning trace that starts from the command and the code semantics, follows the execution path like a code interpreter (which modules load, which functions run with which values, which branches are taken, what is printed, what is raised), takes the agent's patch into account (compare it with the gold patch where that matters), and concludes with what the command is expected to print on stdout and stderr and its exit code.

B) CRITICAL CAUSALITY REQUIREMENT (NO LEAKING / NO BACKWARD EXPLANATION)
- Your reasoning MUST NOT mention that you have been given the true result.
- Your reasoning MUST NOT quote or paraphrase concrete lines of the true stdout or stderr.
- Do NOT write post-hoc explanations like "we see X in the output, therefore ...".
- Phrase outcomes as expectations derived from the code, e.g. "this is expected to raise ... because ...".
- Do NOT copy any distinctive strings from the True Execution Result into your reasoning.

C) After you finish the reasoning, append the provided True Execution Result JSON EXACTLY as-is. Do not reformat it, do not add keys, do not add any commentary after the JSON.

### Output Format
You must output exactly:
<sim_reasoning>
...plain-text forward simulation reasoning...
</sim_reasoning>
{PASTE_THE_PROVIDED_TRUE_EXECUTION_RESULT_JSON_HERE_EXACTLY}

Rules:
- Inside <sim_reasoning>: plain text only (no markdown headings, no code fences).
- After </sim_reasoning>: immediately paste the JSON exactly.
- Do not output anything else."#;

/// The judge's instructions (App. B.1: LLM-as-a-judge filtering invalid reasoning and
/// reasoning that leaks the true result).
const JUDGE_SYSTEM: &str = r#"You review chain-of-thought written to train a model that simulates code execution. The reasoning was written by a model that was shown the TRUE result and told to write a forward derivation from the context alone, without revealing the result.

Reject the reasoning when any of these holds:
1. Leak: it quotes or closely paraphrases distinctive content of the true result (output lines, error messages, test report wording) that the context does not contain, mentions that the result was given, or reasons backward from the output ("we see X in the output, therefore ...").
2. Invalid: it contradicts the code or the patches, skips the execution logic that decides the outcome, or does not arrive at the true result.
3. Unusable: it is empty, truncated, incoherent, or mostly a copy of the context.

Otherwise accept it. Answer with one JSON object and nothing else:
{"verdict": "accept" or "reject", "reasons": "one or two sentences naming what you checked and, for a rejection, what is wrong"}"#;

/// The JSON answer of a sample (the target without reasoning).
pub fn answer(sample: &WorldSample) -> Value {
    match sample {
        WorldSample::Swt(sample) => serde_json::json!({
            "stdout": sample.real.stdout,
            "stderr": sample.real.stderr,
            "exit_code": sample.real.exit_code,
        }),
        WorldSample::Swr(sample) => serde_json::json!({
            "test_report": sample.real.test_report,
            "reward": sample.real.reward,
        }),
    }
}

/// The sample's context as the paper's numbered sections (SWT: 1–6; SWR: 1–8).
fn sections(sample: &WorldSample) -> (String, usize) {
    match sample {
        WorldSample::Swt(sample) => (swt_sections(&sample.context), 7),
        WorldSample::Swr(sample) => (swr_sections(&sample.context), 9),
    }
}

/// The teacher's messages for `sample` (Fig. G.4): the context, then the true result.
pub fn teacher_messages(sample: &WorldSample) -> Vec<Message> {
    let system = match sample {
        WorldSample::Swt(_) => SWT_TEACHER_SYSTEM,
        WorldSample::Swr(_) => SWR_TEACHER_SYSTEM,
    };
    let (context, number) = sections(sample);
    let user = format!(
        "{context}\n### {number}. True Execution Result (JSON) [DO NOT USE THIS IN REASONING; ONLY COPY AT THE END]\n{}\n\n\
         ### YOUR TASK\nWrite the response in the STRICT output format required by the system prompt.\n\
         Remember:\n* Reasoning must be a forward simulation based only on context.\n\
         * Do NOT reference/quote the true result in reasoning.\n\
         * Append the true JSON exactly after </sim_reasoning>.\n",
        answer(sample)
    );
    vec![Message::system(system), Message::user(user)]
}

/// Why a teacher or judge reply cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CotError(pub String);

/// The reasoning of a teacher reply: the text inside `<sim_reasoning>…</sim_reasoning>`,
/// after which the reply must hold exactly the true result's JSON (a code fence around it
/// is tolerated). A reasoning block before (`<think>…</think>`) is ignored.
pub fn parse_teacher_reply(text: &str, answer: &Value) -> Result<String, CotError> {
    const OPEN: &str = "<sim_reasoning>";
    const CLOSE: &str = "</sim_reasoning>";
    let text = match text.rfind("</think>") {
        Some(end) if text[end..].contains(OPEN) => &text[end + "</think>".len()..],
        _ => text,
    };
    let start = text
        .find(OPEN)
        .ok_or_else(|| CotError(format!("no {OPEN} block")))?;
    let end = text[start..]
        .find(CLOSE)
        .map(|at| start + at)
        .ok_or_else(|| CotError(format!("{OPEN} is not closed by {CLOSE}")))?;
    let reasoning = text[start + OPEN.len()..end].trim();
    if reasoning.is_empty() {
        return Err(CotError("the reasoning is empty".into()));
    }
    let rest = text[end + CLOSE.len()..].trim();
    let rest = rest
        .strip_prefix("```json")
        .or_else(|| rest.strip_prefix("```"))
        .map_or(rest, |inner| inner.trim().trim_end_matches("```").trim());
    let copied: Value = serde_json::from_str(rest).map_err(|error| {
        CotError(format!(
            "the text after {CLOSE} is not the true result's JSON ({error})"
        ))
    })?;
    if &copied != answer {
        return Err(CotError(format!(
            "the JSON after {CLOSE} is not the true result (it must be copied exactly)"
        )));
    }
    Ok(reasoning.to_owned())
}

/// Phrases that say the result was known.
const TELLS: [&str; 5] = [
    "true execution result",
    "true result",
    "provided result",
    "given result",
    "true outcome",
];

/// The shortest line of the true result that counts as distinctive.
const DISTINCTIVE_CHARS: usize = 12;

/// Why `reasoning` leaks `answer`, if it does: it mentions knowing the result, or quotes a
/// distinctive line of its text fields (a line of `stdout`, `stderr` or `test_report` of at
/// least 12 non-blank characters that the context itself does not contain).
pub fn leak(reasoning: &str, answer: &Value, context: &str) -> Option<String> {
    let lower = reasoning.to_lowercase();
    if let Some(tell) = TELLS.iter().find(|tell| lower.contains(*tell)) {
        return Some(format!("the reasoning mentions the {tell:?}"));
    }
    let texts = answer
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(_, value)| value.as_str());
    for text in texts {
        for line in text.lines() {
            let line = line.trim();
            let distinctive =
                line.chars().filter(|c| !c.is_whitespace()).count() >= DISTINCTIVE_CHARS;
            if distinctive && !context.contains(line) && reasoning.contains(line) {
                return Some(format!("the reasoning quotes the true result: {line:?}"));
            }
        }
    }
    None
}

/// The user prompt the leak check compares against (what the teacher could quote fairly).
pub fn context_text(sample: &WorldSample) -> String {
    sections(sample).0
}

/// The judge's messages: the context, the true result and the reasoning to check.
pub fn judge_messages(sample: &WorldSample, reasoning: &str) -> Vec<Message> {
    let (context, _) = sections(sample);
    let user = format!(
        "{context}\n### True result (JSON)\n{}\n\n### Reasoning to check\n{reasoning}\n\n\
         Accept or reject the reasoning. Answer with the JSON object only.\n",
        answer(sample)
    );
    vec![Message::system(JUDGE_SYSTEM), Message::user(user)]
}

/// The judge's verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// Whether the judge accepted the reasoning (`verdict` was `accept`).
    pub accepted: bool,
    /// The judge's reasons, as it wrote them.
    pub reasons: String,
}

/// The verdict of a judge reply: the last JSON object in it (after any `</think>`) with
/// `verdict` `accept` or `reject` and `reasons`.
pub fn parse_judge_reply(text: &str) -> Result<Verdict, CotError> {
    let text = text
        .rfind("</think>")
        .map_or(text, |end| &text[end + "</think>".len()..]);
    let start = text
        .find('{')
        .ok_or_else(|| CotError("the judge's reply has no JSON object".into()))?;
    let end = text
        .rfind('}')
        .ok_or_else(|| CotError("the judge's reply has no JSON object".into()))?;
    let value: Value = serde_json::from_str(&text[start..=end])
        .map_err(|error| CotError(format!("the judge's JSON is invalid ({error})")))?;
    let accepted = match value["verdict"].as_str().map(str::to_lowercase).as_deref() {
        Some("accept") => true,
        Some("reject") => false,
        _ => {
            return Err(CotError(
                "the judge's \"verdict\" is not \"accept\" or \"reject\"".into(),
            ));
        }
    };
    let reasons = value["reasons"]
        .as_str()
        .unwrap_or_default()
        .trim()
        .to_owned();
    Ok(Verdict { accepted, reasons })
}

/// The target of an accepted sample: `<think>` reasoning `</think>` then the answer JSON,
/// as the paper trains SWT and SWR.
pub fn cot_target(reasoning: &str, answer: &Value) -> String {
    format!("<think>\n{}\n</think>\n{answer}", reasoning.trim())
}

/// The sample's messages with the CoT target as the assistant turn.
pub fn cot_messages(sample: &WorldSample, reasoning: &str) -> Vec<Message> {
    let mut messages = sample.messages().to_vec();
    messages.pop();
    messages.push(Message::assistant(cot_target(reasoning, &answer(sample))));
    messages
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn teacher_replies_must_copy_the_true_result() {
        let answer = json!({"stdout": "ok", "stderr": "", "exit_code": 0});
        let good = "<sim_reasoning>\nThe script prints ok.\n</sim_reasoning>\n{\"stdout\": \"ok\", \"stderr\": \"\", \"exit_code\": 0}";
        assert_eq!(
            parse_teacher_reply(good, &answer).unwrap(),
            "The script prints ok."
        );
        let fenced = "<think>x</think><sim_reasoning>r</sim_reasoning>\n```json\n{\"exit_code\": 0, \"stdout\": \"ok\", \"stderr\": \"\"}\n```";
        assert_eq!(parse_teacher_reply(fenced, &answer).unwrap(), "r");
        for (bad, message) in [
            ("no tags {}", "no <sim_reasoning> block"),
            ("<sim_reasoning>r", "is not closed"),
            (
                "<sim_reasoning> </sim_reasoning>{}",
                "the reasoning is empty",
            ),
            (
                "<sim_reasoning>r</sim_reasoning>{\"stdout\": \"no\", \"stderr\": \"\", \"exit_code\": 0}",
                "not the true result",
            ),
            (
                "<sim_reasoning>r</sim_reasoning>not json",
                "is not the true result's JSON",
            ),
        ] {
            let error = parse_teacher_reply(bad, &answer).unwrap_err().0;
            assert!(error.contains(message), "{bad}: {error}");
        }
    }

    #[test]
    fn leaks_are_quotes_of_distinctive_lines_or_tells() {
        let answer = json!({"stdout": "PLANTED-ANSWER-41c9e7\nok", "stderr": "", "exit_code": 0});
        let context = "### 3. Command to Simulate\npython t.py";
        assert!(leak("It prints PLANTED-ANSWER-41c9e7 first.", &answer, context).is_some());
        assert!(leak("As the true result shows, it passes.", &answer, context).is_some());
        // Short lines ("ok") and lines the context itself holds are fair to mention.
        assert_eq!(leak("It is expected to print ok.", &answer, context), None);
        let shown = "print('PLANTED-ANSWER-41c9e7')";
        assert_eq!(
            leak("It prints PLANTED-ANSWER-41c9e7.", &answer, shown),
            None
        );
    }

    #[test]
    fn judge_verdicts_and_targets() {
        let verdict = parse_judge_reply(
            "<think>hm</think>{\"verdict\": \"reject\", \"reasons\": \"quotes the log\"}",
        )
        .unwrap();
        assert_eq!(
            verdict,
            Verdict {
                accepted: false,
                reasons: "quotes the log".into()
            }
        );
        assert!(parse_judge_reply("{\"verdict\": \"maybe\"}").is_err());
        assert!(parse_judge_reply("yes").is_err());
        let answer = json!({"test_report": "all pass", "reward": 1});
        assert_eq!(
            cot_target(" r ", &answer),
            "<think>\nr\n</think>\n{\"test_report\":\"all pass\",\"reward\":1}"
        );
    }
}
