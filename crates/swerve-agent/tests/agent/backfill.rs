//! Hindsight backfill with a scripted teacher: the teacher's requests (context under the
//! window, hint, action, feedback on unusable replies), the backfilled steps in SWE-AGILE's
//! structure with requests that rebuild their context, and every way a trajectory is
//! rejected or fails.

use serde_json::json;
use swerve_agent::agile::structure::{self, Structured};
use swerve_agent::agile::{ContextPolicy, SendReasoning, Window};
use swerve_agent::backfill::{Stop, Teacher};
use swerve_core::ToolCall;
use swerve_core::trajectory::{
    ExitReason, Header, Message, Outcome, Role, Step, TokenCapture, Trajectory, Usage,
    read_trajectory, write_trajectory,
};
use swerve_llm::{ModelError, ModelInput, ModelResponse, ScriptedModel};
use swerve_tools::formats::{ModelOutput, NativeFormat, Pick, ToolFormat, XmlFormat};

const FORMAT: XmlFormat = XmlFormat { pick: Pick::Last };

/// An R2E-Gym-like trajectory of three steps: shallow thoughts, XML calls, observations,
/// and what the original model call took.
fn source() -> Trajectory {
    let calls = [
        ToolCall::new("search").arg("search_term", "def add"),
        ToolCall::new("file_editor")
            .arg("command", "view")
            .arg("path", "/testbed/calc.py"),
        ToolCall::new("finish").arg("command", "submit"),
    ];
    let mut trajectory = Trajectory::new(Header {
        prompt: vec![Message::system("You fix bugs."), Message::user("Fix add.")],
        ..Header::new("r2e/calc-1", "calc-1")
    });
    for (index, call) in calls.into_iter().enumerate() {
        let call_text = FORMAT.render_call("", &call, None).content;
        let mut step = Step::new(index, format!("thought {index}\n\n{call_text}"));
        step.call_text = Some(call_text);
        step.tool_call = Some(call);
        step.observation = (index < 2).then(|| format!("observation {index}"));
        step.usage = Some(Usage {
            prompt_tokens: 10,
            completion_tokens: 5,
            ..Usage::default()
        });
        step.cost = Some(0.5);
        step.timings.model_seconds = Some(1.0);
        step.timings.env_seconds = Some(0.25);
        step.tokens = Some(TokenCapture {
            prompt_ids: vec![1],
            completion_ids: vec![2],
            logprobs: None,
        });
        trajectory.steps.push(step);
    }
    trajectory.outcome = Some(Outcome::new(ExitReason::Submitted, "diff --git a/x b/x\n"));
    trajectory
}

/// A usable teacher reply for step `k`.
fn good(k: usize) -> ModelResponse {
    let mut response = ModelResponse::text(format!(
        "<reasoning>\nreasoning {k}\n</reasoning>\n<reasoning_digest>\ndigest {k}\n</reasoning_digest>"
    ));
    response.usage = Usage {
        prompt_tokens: 100,
        completion_tokens: 20,
        ..Usage::default()
    };
    response.cost = 0.01;
    response
}

fn backfill(
    replies: Vec<Result<ModelResponse, ModelError>>,
    source: &Trajectory,
    window: Window,
) -> (swerve_agent::backfill::Backfilled, ScriptedModel) {
    let model = ScriptedModel::new(replies).with_name("teacher-model");
    let teacher = Teacher::new(&model, &FORMAT, 3).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let backfilled = runtime.block_on(teacher.backfill(source, window));
    (backfilled, model)
}

/// The user message of each teacher request.
fn asked(model: &ScriptedModel) -> Vec<Vec<Message>> {
    model
        .requests()
        .into_iter()
        .map(|request| match request.input {
            ModelInput::Chat { messages, .. } => messages,
            ModelInput::Prompt(_) => panic!("the teacher is asked in chat mode"),
        })
        .collect()
}

#[test]
fn backfills_every_step_in_the_agile_structure() {
    let source = source();
    let replies = vec![
        Ok(good(0)),
        // Step 1: a reply without a digest is answered, then a usable one comes.
        Ok(ModelResponse::text("<reasoning>only reasoning</reasoning>")),
        Ok(good(1)),
        Ok(good(2)),
    ];
    let (backfilled, model) = backfill(replies, &source, Window::Last(1));
    let trajectory = backfilled.result.unwrap();
    assert_eq!(backfilled.spent.calls, 4);
    assert_eq!(backfilled.spent.usage.prompt_tokens, 300);
    assert!((backfilled.spent.cost - 0.03).abs() < 1e-9);

    // The header keeps the source's and records the window and the teacher's spend.
    let header = &trajectory.header;
    assert_eq!((header.id.as_str(), header.prompt.len()), ("r2e/calc-1", 2));
    assert_eq!(header.extra["reasoning_window"], 1);
    assert_eq!(header.extra["backfill"]["teacher"], "teacher-model");
    assert_eq!(header.extra["backfill"]["teacher_calls"], 4);
    assert_eq!(trajectory.outcome, source.outcome);

    assert_steps_rebuild_their_context(&trajectory, &source);
    assert_eq!(trajectory.steps[1].extra["backfill"]["teacher_calls"], 2);

    assert_teacher_saw_the_window(&model, &source);

    // It is a valid trajectory file.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.jsonl");
    write_trajectory(&path, &trajectory).unwrap();
    assert_eq!(read_trajectory(&path).unwrap().trajectory, trajectory);
}

/// Each backfilled step: in the agent's structure, reading back to its pieces and call, with
/// what described the original model call gone, and a recorded request that is the step's
/// context under a window of one.
fn assert_steps_rebuild_their_context(trajectory: &Trajectory, source: &Trajectory) {
    let mut conversation = trajectory.header.prompt.clone();
    for (k, step) in trajectory.steps.iter().enumerate() {
        let original = &source.steps[k];
        let action = original.call_text.clone().unwrap();
        // The reply is in the agent's structure and reads back to its pieces and call.
        let parsed = structure::parse(&step.response_text, None, |segment| {
            FORMAT.parse(&ModelOutput::from_text(segment)).is_ok()
        })
        .unwrap();
        let expected = Structured {
            reasoning: format!("reasoning {k}"),
            digest: format!("digest {k}"),
            action: action.clone(),
        };
        assert_eq!(parsed, expected);
        assert_eq!(step.reasoning.as_deref(), Some(expected.reasoning.as_str()));
        assert_eq!(step.digest.as_deref(), Some(expected.digest.as_str()));
        assert_eq!(step.call_text.as_deref(), Some(action.as_str()));
        let call = FORMAT
            .parse(&ModelOutput::from_text(parsed.action))
            .unwrap();
        assert_eq!(Some(&call.call), step.tool_call.as_ref());
        // What described the original model call is gone; the rest stays.
        assert_eq!((step.usage, step.cost, &step.tokens), (None, None, &None));
        assert_eq!(step.timings.model_seconds, None);
        assert_eq!(step.timings.env_seconds, Some(0.25));
        assert_eq!(step.observation, original.observation);
        assert_eq!(step.extra["backfill"]["hint"], format!("thought {k}"));
        // The recorded request is the step's context under the window.
        let window = ContextPolicy {
            window: Window::Last(1),
            send: SendReasoning::Field,
        };
        assert_eq!(
            trajectory.messages_sent(k),
            Some(window.apply(&conversation)),
            "step {k}"
        );
        let mut assistant = Message::assistant(structure::content(&expected.digest, &action));
        assistant.reasoning_content = Some(expected.reasoning.clone());
        conversation.push(assistant);
        if let Some(observation) = &step.observation {
            conversation.push(Message::user(observation.clone()));
        }
    }
}

/// The teacher saw the window (step 2's context keeps step 1's reasoning inline but only step
/// 0's digest), and the unusable reply was answered with what was wrong.
fn assert_teacher_saw_the_window(model: &ScriptedModel, source: &Trajectory) {
    let requests = asked(model);
    let step_two = requests[3][1].text();
    assert!(
        step_two.contains("<think>\nreasoning 1\n</think>"),
        "{step_two}"
    );
    assert!(!step_two.contains("reasoning 0"), "{step_two}");
    assert!(step_two.contains("digest 0"), "{step_two}");
    assert!(step_two.contains("# The agent's note for step 2\n\nthought 2"));
    assert!(step_two.contains(&format!(
        "# The action of step 2\n\n{}",
        source.steps[2].call_text.as_deref().unwrap()
    )));
    // The unusable reply was answered with what was wrong.
    let retry = &requests[2];
    assert_eq!(retry.len(), 4);
    assert_eq!(retry[2].role, Role::Assistant);
    assert!(
        retry[3]
            .text()
            .starts_with("Your reply has no <reasoning_digest> tag. Reply with exactly one")
    );
}

#[test]
fn a_window_of_all_or_none_shows_that_much_reasoning() {
    let mut source = source();
    // A window the source's run recorded is replaced.
    source
        .header
        .extra
        .insert("reasoning_window".into(), json!(3));
    for (window, shows_step_0) in [(Window::All, true), (Window::Last(0), false)] {
        let replies = (0..3).map(|k| Ok(good(k))).collect();
        let (backfilled, model) = backfill(replies, &source, window);
        let trajectory = backfilled.result.unwrap();
        let expected = match window {
            Window::Last(n) => Some(json!(n)),
            Window::All => None,
        };
        assert_eq!(
            trajectory.header.extra.get("reasoning_window").cloned(),
            expected
        );
        let step_two = asked(&model)[2][1].text();
        assert_eq!(step_two.contains("reasoning 0"), shows_step_0, "{window:?}");
    }
}

#[test]
fn unusable_replies_reject_the_trajectory_after_the_last_attempt() {
    let mut cut = ModelResponse::text("<reasoning>long");
    cut.finish_reason = Some("length".into());
    let replies = vec![
        Ok(good(0)),
        Ok(ModelResponse::text("no tags at all")),
        Ok(ModelResponse::text(
            "<reasoning>r</reasoning><reasoning_digest>d</reasoning_digest><reasoning_digest>e</reasoning_digest>",
        )),
        Ok(cut),
    ];
    let (backfilled, model) = backfill(replies, &source(), Window::Last(2));
    assert_eq!(
        backfilled.result.unwrap_err(),
        Stop::Rejected(
            "step 1: 3 teacher replies in a row were not usable; the last: Your reply has no \
             </reasoning> tag. (the reply was cut off at max_tokens)"
                .into()
        )
    );
    assert_eq!(backfilled.spent.calls, 4);
    assert_eq!(model.remaining(), 0);
}

#[test]
fn a_step_without_a_call_is_rejected_before_the_teacher_is_asked() {
    let mut source = source();
    source.steps[1].tool_call = None;
    source.steps[1].format_error = Some("no <function=…> call".into());
    let (backfilled, model) = backfill(vec![], &source, Window::Last(1));
    assert_eq!(
        backfilled.result.unwrap_err(),
        Stop::Rejected("step 1 has no tool call (no <function=…> call)".into())
    );
    assert!(model.requests().is_empty());
    let empty = Trajectory::new(Header::new("empty", ""));
    let (backfilled, _) = backfill(vec![], &empty, Window::Last(1));
    assert_eq!(
        backfilled.result.unwrap_err(),
        Stop::Rejected("the trajectory has no steps".into())
    );
}

#[test]
fn teacher_errors_fail_or_reject() {
    let server = ModelError::Server {
        status: 503,
        body: "down".into(),
    };
    let (backfilled, _) = backfill(vec![Ok(good(0)), Err(server)], &source(), Window::Last(1));
    let Err(Stop::Failed(reason)) = backfilled.result else {
        panic!("a failure was expected");
    };
    assert!(
        reason.starts_with("step 1: the teacher could not be called"),
        "{reason}"
    );
    assert_eq!(backfilled.spent.calls, 1);

    let too_long = ModelError::ContextLength {
        detail: "maximum context length is 8192".into(),
    };
    let (backfilled, _) = backfill(vec![Err(too_long)], &source(), Window::Last(1));
    let Err(Stop::Rejected(reason)) = backfilled.result else {
        panic!("a rejection was expected");
    };
    assert!(
        reason.starts_with("step 0: the step's context does not fit"),
        "{reason}"
    );
}

#[test]
fn the_call_must_be_written_in_the_text() {
    let model = ScriptedModel::new([]);
    let error = Teacher::new(&model, &NativeFormat, 3).err().unwrap();
    assert!(error.contains("use xml, xml_last or hermes"), "{error}");
    assert!(Teacher::new(&model, &FORMAT, 0).is_err());
}
