//! What the teacher is asked for one step: swerve's own instructions, then what the agent
//! saw before the step (its context under the reasoning window, as a transcript), the
//! agent's original note as a hint, and the action it took. And what it is told when a
//! reply is not usable.

use swerve_core::trajectory::{Message, Role};

use super::reply::{REASONING_CLOSE, REASONING_OPEN, ReplyError};
use crate::agile::structure::{DIGEST_CLOSE, DIGEST_OPEN};

/// The teacher's instructions.
const SYSTEM: &str = "\
You write the inner reasoning of a software engineering agent, after the fact.

The agent worked on a task in a code repository, one tool call per step. Its reasoning was \
not recorded: only its actions, their results and sometimes a short note. For one step you \
get what the agent could see at that moment, its note for the step, and the action it took. \
Write the reasoning that leads from what the agent knew to exactly that action, and a digest \
of that reasoning.

The agent keeps its detailed reasoning only for its most recent steps. Older steps keep \
just their digest, their action and the action's result, so the digest is all that later \
steps will know of this reasoning.

The reasoning:
- is the agent thinking before it acts, in the first person. Never say that the action was \
given to you, and never use what only later steps reveal;
- works from what the agent can see: the task, earlier actions and their results, the \
digests, and the reasoning still shown;
- picks up where the latest reasoning left off instead of going over everything again;
- fits the step: a few sentences for a routine step (running a command already planned, \
opening a file), careful step-by-step analysis when the step makes sense of an error, \
locates a bug or designs a change;
- keeps the intent of the agent's note, when there is one, and ends in the decision to take \
the action.

The digest says, in a few sentences, what later steps need from this reasoning: what was \
found (files, functions, causes, what has been checked), what was decided, and the plan.";

/// The layout every reply must have, quoted by the instructions and the retry message.
fn layout() -> String {
    format!(
        "Reply with exactly one {REASONING_OPEN}…{REASONING_CLOSE} block followed by exactly one \
         {DIGEST_OPEN}…{DIGEST_CLOSE} block, and nothing else: do not repeat the action, and \
         use no <think> tags and no tool calls in either block."
    )
}

/// The messages asking for the reasoning and digest of step `step`: `context` is what the
/// agent was sent before it (kept reasoning inline), `hint` its original note, `action` the
/// call it made, as the agent's tool-call format writes it.
pub fn request(context: &[Message], step: usize, hint: &str, action: &str) -> Vec<Message> {
    let hint = match hint.trim() {
        "" => "(The agent wrote no note for this step.)",
        hint => hint,
    };
    let user = format!(
        "# What the agent sees before step {step}\n\n{}\n\n# The agent's note for step {step}\n\n\
         {hint}\n\n# The action of step {step}\n\n{action}\n\n# Your reply\n\n\
         Write the reasoning and the digest of step {step}. {}\n\n\
         {REASONING_OPEN}\nthe reasoning\n{REASONING_CLOSE}\n{DIGEST_OPEN}\nthe digest\n{DIGEST_CLOSE}",
        transcript(context),
        layout()
    );
    vec![Message::system(SYSTEM), Message::user(user)]
}

/// What the teacher is told after a reply that is not usable.
pub fn retry(error: &ReplyError) -> String {
    format!("{error} {}", layout())
}

/// The messages as text, each under a label naming its role (assistant turns also their
/// step), separated by blank lines.
fn transcript(context: &[Message]) -> String {
    let mut step = 0;
    let entries: Vec<String> = context
        .iter()
        .map(|message| {
            let label = match message.role {
                Role::System | Role::Developer => "[instructions]".to_owned(),
                Role::User => "[user]".to_owned(),
                Role::Tool => "[tool result]".to_owned(),
                Role::Assistant => {
                    step += 1;
                    format!("[agent, step {}]", step - 1)
                }
            };
            format!("{label}\n{}", message.text().trim_end())
        })
        .collect();
    entries.join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_holds_the_transcript_hint_and_action() {
        let context = [
            Message::system("You are an agent."),
            Message::user("Fix add."),
            Message::assistant(
                "<think>\nlook\n</think>\n\n<reasoning_digest>\nd0\n</reasoning_digest>\nCALL 0",
            ),
            Message::user("output 0"),
        ];
        let messages = request(&context, 1, "  ", "CALL 1");
        assert_eq!(messages.len(), 2);
        assert!(messages[0].text().contains("digest is all that later"));
        let user = messages[1].text();
        for expected in [
            "# What the agent sees before step 1\n\n[instructions]\nYou are an agent.\n\n[user]\nFix add.\n\n[agent, step 0]\n<think>\nlook\n</think>",
            "CALL 0\n\n[user]\noutput 0\n\n# The agent's note",
            "(The agent wrote no note for this step.)",
            "# The action of step 1\n\nCALL 1\n",
        ] {
            assert!(user.contains(expected), "{expected:?} not in:\n{user}");
        }
        let error = ReplyError::Empty {
            block: REASONING_OPEN,
        };
        assert!(retry(&error).starts_with("Your <reasoning> block is empty. Reply with exactly"));
    }
}
