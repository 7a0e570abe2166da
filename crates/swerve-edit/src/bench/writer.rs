//! Instructions written by a model for mined instances: it sees the file, the commit's diff
//! and its message, and writes what a developer would ask an editor to do.

use swerve_llm::Model;

use super::instance::EditInstance;
use crate::subagent::ask;
use crate::text::after_think;

const WRITER_SYSTEM: &str = "\
You write editing instructions. You receive a source file, a diff that changes it and the \
commit message of the change. Write the instruction a developer would give a colleague so \
that the colleague, looking only at the original file, makes this change: say what to \
change and where, naming the functions, classes or methods involved, and give exact new \
code (names, values, messages) where the change needs it. Do not mention the diff or the \
commit. Answer with the instruction only.";

/// A model-written instruction for `instance`, or why there is none (the model failed or
/// answered nothing).
pub async fn write_instruction(
    model: &dyn Model,
    instance: &EditInstance,
) -> Result<String, String> {
    let message = format!(
        "The file:\n```\n{}\n```\n\nDiff:\n```diff\n{}```\n\nCommit message:\n{}\n\nWrite the instruction.",
        instance.original.trim_end_matches('\n'),
        instance.diff_to(&instance.target),
        instance.instruction,
    );
    let (reply, _) = ask(model, "writer", WRITER_SYSTEM, message).await;
    let reply = reply?;
    let instruction = after_think(&reply).trim();
    match instruction.is_empty() {
        true => Err("the writer answered with an empty instruction".to_owned()),
        false => Ok(instruction.to_owned()),
    }
}

/// Replaces the instruction of every instance with a model-written one, `concurrency` at
/// once. The commit message stays in `metadata.commit_message`; `metadata.instruction_source`
/// says `writer`, or stays as it was when the writer failed, with the reason in
/// `metadata.writer_error`.
pub async fn write_instructions(
    model: &dyn Model,
    instances: &mut [EditInstance],
    concurrency: usize,
) {
    use futures_util::StreamExt;
    let written: Vec<Result<String, String>> = futures_util::stream::iter(instances.iter())
        .map(|instance| write_instruction(model, instance))
        .buffered(concurrency.max(1))
        .collect()
        .await;
    for (instance, written) in instances.iter_mut().zip(written) {
        match written {
            Ok(instruction) => {
                let message = std::mem::replace(&mut instance.instruction, instruction);
                instance
                    .metadata
                    .insert("commit_message".into(), message.into());
                instance
                    .metadata
                    .insert("instruction_source".into(), "writer".into());
            }
            Err(error) => {
                instance
                    .metadata
                    .insert("writer_error".into(), error.into());
            }
        }
    }
}
