//! The trajectory page's data: every step with the messages it added to the conversation,
//! its answer parsed (reasoning, digest, tool call or format error), observation, subagent
//! calls, tokens and timings, the context size per step, and the outcome with its patch and
//! evaluation report.
//!
//! Context size per step has three series (`docs/view.md`):
//! - **sent**: the prompt tokens the provider reported for the step's request;
//! - **window**: the request as recorded (under the reasoning window, when the run used
//!   one), estimated in tokens from its characters;
//! - **full**: the same conversation with every earlier step's reasoning kept, estimated
//!   the same way.
//!
//! The estimate converts characters to tokens at the trajectory's own ratio (reported
//! prompt tokens over request characters, over the steps that have both), or 4 characters
//! a token when nothing was reported. Steps of imports that did not record their request
//! are sized from the prompt and the answers and observations before them.

use std::path::Path;

use serde::Serialize;
use serde_json::Value;
use swerve_core::trajectory::turn::REASONING_TAGS;
use swerve_core::trajectory::{
    Content, Message, MessagesSent, Outcome, Step, SubTrajectory, Timings, Trajectory, Usage,
};

use crate::catalog::{Catalog, Key};

/// Characters a token when the trajectory reports no token counts.
const CHARS_PER_TOKEN: f64 = 4.0;

/// What the trajectory page shows.
#[derive(Debug, Serialize)]
pub struct TrajectoryView {
    /// The key the page was asked for.
    pub key: String,
    /// The trajectory id.
    pub id: String,
    /// The task instance.
    pub instance_id: String,
    /// When the run started.
    pub created_at: Option<String>,
    /// The model, from the recorded configuration.
    pub model: Option<String>,
    /// The resolved run configuration, as recorded.
    pub config: Value,
    /// The messages every request starts from.
    pub prompt: Vec<Message>,
    /// Each step.
    pub steps: Vec<StepView>,
    /// How the run ended; `None` while it runs.
    pub outcome: Option<Outcome>,
    /// The evaluation's test log, when the run directory kept one.
    pub test_log: Option<String>,
    /// Anything else the header holds (an import's source).
    pub extra: serde_json::Map<String, Value>,
}

/// One step as the page shows it.
#[derive(Debug, Serialize)]
pub struct StepView {
    /// The step's index, from 0.
    pub index: usize,
    /// Messages of this request that the previous request did not have (the previous
    /// answer and observation, typically); `None` when the request was not recorded.
    pub new_messages: Option<Vec<Message>>,
    /// How many messages the request held.
    pub request_messages: Option<usize>,
    /// Earlier messages whose reasoning this request dropped (SWE-AGILE's window sliding,
    /// with the reasoning in its own field).
    pub dropped_reasoning: usize,
    /// Messages of the request it was built from that this one changed or left out (the
    /// window sliding over reasoning kept inline, or a condensed history); they are among
    /// `new_messages` again when changed.
    pub rewritten: usize,
    /// The answer as returned.
    pub response_text: String,
    /// The reasoning.
    pub reasoning: Option<String>,
    /// The reasoning digest.
    pub digest: Option<String>,
    /// The parsed tool call: name and arguments.
    pub tool_call: Option<Value>,
    /// The call as the model wrote it.
    pub call_text: Option<String>,
    /// Why the answer could not be parsed.
    pub format_error: Option<String>,
    /// What the model was shown next.
    pub observation: Option<String>,
    /// An error that hit the step.
    pub error: Option<String>,
    /// Token counts of the model call.
    pub usage: Option<Usage>,
    /// Model and environment time.
    pub timings: Timings,
    /// The model call's cost.
    pub cost: Option<f64>,
    /// The subagents the tool call ran.
    pub subagents: Vec<SubTrajectory>,
    /// Context size: reported and estimated.
    pub context: Context,
}

/// The context size of one step's request, in tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Context {
    /// Reported by the provider (prompt tokens).
    pub sent: Option<u64>,
    /// Estimated: the request as recorded.
    pub window: u64,
    /// Estimated: with every earlier step's reasoning kept.
    pub full: u64,
}

/// Per message of a request: its characters, and how many of them are reasoning.
#[derive(Debug, Clone, Copy)]
struct Size {
    chars: usize,
    reasoning: usize,
}

impl Size {
    /// Reasoning is the `reasoning_content` and a reasoning block the content starts with
    /// (how SWE-AGILE keeps the last turns' reasoning inline).
    fn of(message: &Message) -> Size {
        let text = message
            .content
            .as_ref()
            .map(Content::text)
            .unwrap_or_default();
        let inline = REASONING_TAGS.iter().find_map(|(open, close)| {
            let body = text.trim_start().strip_prefix(open)?;
            body.find(close)
        });
        let separate = message.reasoning_content.as_ref().map_or(0, String::len);
        let reasoning = separate + inline.unwrap_or(0);
        let content = text.len();
        let calls: usize = message
            .tool_calls
            .iter()
            .map(|call| call.function.name.len() + call.function.arguments.len())
            .sum();
        Size {
            chars: content + separate + calls,
            reasoning,
        }
    }

    fn without_reasoning(self) -> Size {
        Size {
            chars: self.chars - self.reasoning,
            reasoning: 0,
        }
    }
}

/// The page data of the trajectory `key` names, or why there is none.
pub fn load(catalog: &Catalog, key: &Key) -> Result<TrajectoryView, String> {
    let trajectory = catalog.trajectory(key)?;
    let test_log = match key {
        Key::Run { run, .. } => catalog
            .runs
            .get(*run)
            .and_then(|dir| test_log(dir, &trajectory.header.id, &trajectory.header.instance_id)),
        Key::File { .. } => None,
    };
    Ok(view(key.to_string(), trajectory, test_log))
}

/// The test log a graded rollout left in its run directory:
/// `eval-logs/<rollout id>/<instance id>/test_output.txt`. The ids come from the file, so
/// each must be a plain name (no separator, not `..`) for the path to stay inside `run`.
fn test_log(run: &Path, id: &str, instance_id: &str) -> Option<String> {
    let plain = |name: &str| !name.is_empty() && name != ".." && name != "." && !name.contains('/');
    if !plain(id) || !plain(instance_id) {
        return None;
    }
    let path = run
        .join("eval-logs")
        .join(id)
        .join(instance_id)
        .join("test_output.txt");
    std::fs::read(path)
        .ok()
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
}

/// The page data of `trajectory`, named `key`, with the test log found for it.
pub fn view(key: String, trajectory: Trajectory, test_log: Option<String>) -> TrajectoryView {
    let header = trajectory.header;
    let prompt_sizes: Vec<Size> = header.prompt.iter().map(Size::of).collect();
    let requests = requests(&header.prompt, &prompt_sizes, &trajectory.steps);
    let chars = context_chars(&prompt_sizes, &trajectory.steps, &requests);
    let ratio = tokens_per_char(&trajectory.steps, &chars);
    let estimate = |chars: usize| (chars as f64 * ratio).round() as u64;
    let steps = trajectory
        .steps
        .into_iter()
        .zip(requests)
        .zip(chars)
        .map(|((step, request), (window, full))| {
            let context = Context {
                sent: step
                    .usage
                    .map(|usage| usage.prompt_tokens)
                    .filter(|&t| t > 0),
                window: estimate(window),
                full: estimate(full),
            };
            step_view(step, request, context)
        })
        .collect();
    TrajectoryView {
        key,
        model: header
            .config
            .pointer("/model/name")
            .and_then(Value::as_str)
            .map(str::to_owned),
        id: header.id,
        instance_id: header.instance_id,
        created_at: header.created_at,
        config: header.config,
        prompt: header.prompt,
        steps,
        outcome: trajectory.outcome,
        test_log,
        extra: header.extra,
    }
}

/// What a step's request looked like: the messages it added and the size of each message.
struct Request {
    new_messages: Vec<Message>,
    dropped_reasoning: usize,
    rewritten: usize,
    sizes: Vec<Size>,
}

/// Each step's request, rebuilt in order from the recorded deltas; `None` where a step did
/// not record its request or a reference cannot be followed.
fn requests(prompt: &[Message], prompt_sizes: &[Size], steps: &[Step]) -> Vec<Option<Request>> {
    let mut done: Vec<Option<Request>> = Vec::with_capacity(steps.len());
    // The previous request in full, to diff a full request against.
    let mut previous: Vec<Message> = prompt.to_vec();
    for step in steps {
        let request = match &step.messages_sent {
            None => None,
            Some(MessagesSent::Full(messages)) => {
                let common = previous
                    .iter()
                    .zip(messages)
                    .take_while(|(a, b)| a == b)
                    .count();
                let request = Request {
                    new_messages: messages[common..].to_vec(),
                    dropped_reasoning: 0,
                    rewritten: previous.len() - common,
                    sizes: messages.iter().map(Size::of).collect(),
                };
                previous = messages.clone();
                Some(request)
            }
            Some(MessagesSent::Delta(delta)) => {
                let base_sizes = match delta.base {
                    None => Some(prompt_sizes),
                    Some(base) if base < done.len() => {
                        done[base].as_ref().map(|r| r.sizes.as_slice())
                    }
                    Some(_) => None,
                };
                base_sizes.filter(|s| delta.keep <= s.len()).map(|base| {
                    let mut sizes = base[..delta.keep].to_vec();
                    for &at in &delta.drop_reasoning {
                        if let Some(size) = sizes.get_mut(at) {
                            *size = size.without_reasoning();
                        }
                    }
                    sizes.extend(delta.append.iter().map(Size::of));
                    previous.truncate(delta.keep);
                    previous.extend(delta.append.iter().cloned());
                    Request {
                        new_messages: delta.append.clone(),
                        dropped_reasoning: delta.drop_reasoning.len(),
                        rewritten: base.len() - delta.keep,
                        sizes,
                    }
                })
            }
        };
        done.push(request);
    }
    done
}

/// Per step, the characters of its request as recorded and with every earlier step's
/// reasoning kept.
fn context_chars(
    prompt_sizes: &[Size],
    steps: &[Step],
    requests: &[Option<Request>],
) -> Vec<(usize, usize)> {
    let prompt_chars: usize = prompt_sizes.iter().map(|size| size.chars).sum();
    let mut conversation = prompt_chars;
    let mut reasoning_so_far = 0;
    let mut sizes = Vec::with_capacity(steps.len());
    for (step, request) in steps.iter().zip(requests) {
        let (window, reasoning_kept) = match request {
            Some(request) => (
                request.sizes.iter().map(|size| size.chars).sum(),
                request.sizes.iter().map(|size| size.reasoning).sum(),
            ),
            // The conversation so far holds every reasoning: nothing was dropped.
            None => (conversation, reasoning_so_far),
        };
        let full = window.max(window - reasoning_kept.min(window) + reasoning_so_far);
        sizes.push((window, full));
        let reasoning = step.reasoning.as_ref().map_or(0, String::len);
        reasoning_so_far += reasoning;
        conversation += step.response_text.len()
            + step.observation.as_ref().map_or(0, String::len)
            + if request.is_none() { reasoning } else { 0 };
    }
    sizes
}

/// Tokens a character: reported prompt tokens over request characters, summed over the
/// steps that have both.
fn tokens_per_char(steps: &[Step], chars: &[(usize, usize)]) -> f64 {
    let (tokens, characters) = steps
        .iter()
        .zip(chars)
        .filter_map(|(step, &(window, _))| {
            let tokens = step.usage?.prompt_tokens;
            (tokens > 0 && window > 0).then_some((tokens as f64, window as f64))
        })
        .fold((0.0, 0.0), |(t, c), (tokens, chars)| {
            (t + tokens, c + chars)
        });
    if characters > 0.0 {
        tokens / characters
    } else {
        1.0 / CHARS_PER_TOKEN
    }
}

fn step_view(step: Step, request: Option<Request>, context: Context) -> StepView {
    let (new_messages, request_messages, dropped_reasoning, rewritten) = match request {
        Some(request) => (
            Some(request.new_messages),
            Some(request.sizes.len()),
            request.dropped_reasoning,
            request.rewritten,
        ),
        None => (None, None, 0, 0),
    };
    StepView {
        index: step.index,
        new_messages,
        request_messages,
        dropped_reasoning,
        rewritten,
        response_text: step.response_text,
        reasoning: step.reasoning,
        digest: step.digest,
        tool_call: step
            .tool_call
            .map(|call| serde_json::json!({"name": call.name, "arguments": call.arguments})),
        call_text: step.call_text,
        format_error: step.format_error,
        observation: step.observation,
        error: step.error,
        usage: step.usage,
        timings: step.timings,
        cost: step.cost,
        subagents: step.subagents,
        context,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use swerve_core::trajectory::{Header, MessagesDelta, Role};

    fn message(role: Role, text: &str) -> Message {
        Message::new(role, text)
    }

    /// Three steps under a window of one: step 2's request drops step 0's reasoning.
    fn windowed() -> Trajectory {
        let mut header = Header::new("t", "i");
        header.prompt = vec![message(Role::System, "s".repeat(100).as_str())];
        let mut trajectory = Trajectory::new(header);
        let answer = |reasoning: &str| {
            let mut m = message(Role::Assistant, "call");
            m.reasoning_content = Some(reasoning.to_owned());
            m
        };
        for index in 0..3 {
            let mut step = Step::new(index, "call");
            step.reasoning = Some("r".repeat(40));
            step.observation = Some("o".repeat(10));
            step.messages_sent = Some(MessagesSent::Delta(MessagesDelta {
                base: index.checked_sub(1),
                keep: if index == 0 { 1 } else { 1 + 2 * (index - 1) },
                drop_reasoning: if index == 2 { vec![1] } else { vec![] },
                append: if index == 0 {
                    vec![]
                } else {
                    vec![
                        answer(&"r".repeat(40)),
                        message(Role::User, &"o".repeat(10)),
                    ]
                },
            }));
            step.usage = Some(Usage {
                prompt_tokens: 10 * (index as u64 + 1),
                ..Usage::default()
            });
            trajectory.steps.push(step);
        }
        trajectory
    }

    #[test]
    fn the_window_and_all_reasoning_part_once_reasoning_is_dropped() {
        let view = view("k".into(), windowed(), None);
        let chars: Vec<(usize, usize)> = {
            let t = windowed();
            let sizes: Vec<Size> = t.header.prompt.iter().map(Size::of).collect();
            let requests = requests(&t.header.prompt, &sizes, &t.steps);
            context_chars(&sizes, &t.steps, &requests)
        };
        // prompt 100; + answer (4 + 40) + observation 10; step 2 drops step 0's 40.
        assert_eq!(chars, vec![(100, 100), (154, 154), (168, 208)]);
        assert_eq!(view.steps[2].dropped_reasoning, 1);
        assert_eq!(view.steps[1].new_messages.as_ref().unwrap().len(), 2);
        assert_eq!(view.steps[2].request_messages, Some(5));
        let context: Vec<Context> = view.steps.iter().map(|s| s.context).collect();
        assert!(context[2].full > context[2].window);
        assert_eq!(context[0].sent, Some(10));
    }

    proptest::proptest! {
        /// Recorded requests that do not add up (a base after the step, `keep` past the
        /// base, reasoning dropped from a message that is not there) leave the step without
        /// a request, never a panic, and every step still gets its context sizes.
        #[test]
        fn any_chain_of_deltas_is_viewed(
            deltas in proptest::collection::vec(
                (proptest::option::of(0usize..6), 0usize..8, proptest::collection::vec(0usize..8, 0..3), 0usize..3),
                0..6,
            )
        ) {
            let mut trajectory = Trajectory::new(Header::new("t", "i"));
            trajectory.header.prompt = vec![message(Role::System, "system")];
            for (index, (base, keep, drop_reasoning, append)) in deltas.iter().enumerate() {
                let mut step = Step::new(index, "answer");
                step.messages_sent = Some(MessagesSent::Delta(MessagesDelta {
                    base: *base,
                    keep: *keep,
                    drop_reasoning: drop_reasoning.clone(),
                    append: (0..*append).map(|_| message(Role::User, "observation")).collect(),
                }));
                trajectory.steps.push(step);
            }
            let view = view("k".into(), trajectory, None);
            proptest::prop_assert_eq!(view.steps.len(), deltas.len());
            for step in &view.steps {
                proptest::prop_assert!(step.context.full >= step.context.window);
            }
        }
    }

    #[test]
    fn test_logs_are_read_only_from_plain_names_inside_the_run() {
        let run = tempfile::tempdir().unwrap();
        let logs = run.path().join("eval-logs/a__0/a");
        std::fs::create_dir_all(&logs).unwrap();
        std::fs::write(logs.join("test_output.txt"), "PASSED").unwrap();
        assert_eq!(test_log(run.path(), "a__0", "a").as_deref(), Some("PASSED"));
        assert_eq!(test_log(run.path(), "..", "a"), None);
        assert_eq!(test_log(run.path(), "a__0/a", "."), None);
    }

    #[test]
    fn reasoning_kept_inline_counts_as_reasoning() {
        let inline = message(Role::Assistant, "<think>\nabc\n</think>\n\ncall");
        let size = Size::of(&inline);
        assert_eq!((size.chars, size.reasoning), (26, 5));
        let plain = Size::of(&message(Role::Assistant, "no <think> here"));
        assert_eq!(plain.reasoning, 0);
    }

    #[test]
    fn steps_without_requests_are_sized_from_the_conversation() {
        let mut trajectory = windowed();
        for step in &mut trajectory.steps {
            step.messages_sent = None;
            step.usage = None;
        }
        let view = view("k".into(), trajectory, None);
        let window: Vec<u64> = view.steps.iter().map(|s| s.context.window).collect();
        // 4 characters a token: 100, then + (4 + 10 + 40) a step.
        assert_eq!(window, vec![25, 39, 52]);
        assert!(view.steps.iter().all(|s| s.new_messages.is_none()));
    }
}
