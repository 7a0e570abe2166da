//! The agent loop with SWE-AGILE's reasoning structure and context policies, driven by a
//! scripted model over a real temporary repository: what each request carries of earlier
//! reasoning, every structure error under each policy, the defaults left as they were,
//! `recall_thought` answered from the conversation, and trajectories whose recorded
//! requests rebuild exactly what the model was sent.

use std::sync::Arc;

use swerve_agent::agile::structure::{content, inline};
use swerve_agent::agile::{
    ErrorPolicy, OnError, ReasoningConfig, SendReasoning, Window, WindowPolicy,
};
use swerve_agent::episode::{Agent, AgentConfig, EpisodeEnd};
use swerve_agent::prompt::{PromptTemplates, Prompts};
use swerve_core::trajectory::{
    ChatToolCall, ExitReason, Header, Message, MessagesSent, Outcome, Role, Trajectory,
    TrajectoryWriter, read_trajectory,
};
use swerve_llm::{ModelInput, ModelResponse, ScriptedModel};
use swerve_testing::HostShell;
use swerve_tools::formats::{ModelOutput, NativeFormat, Pick, ToolFormat, XmlFormat};
use swerve_tools::{ToolConfig, Toolbox, WorkspaceFs};

const ID: &str = "calc__0";

const SEARCH: &str = "<function=search>\n  <parameter=search_term>def add</parameter>\n</function>";
const VIEW: &str = "<function=file_editor>\n  <parameter=command>view</parameter>\n  <parameter=path>/testbed/calc.py</parameter>\n</function>";
const ECHO: &str = "<function=execute_bash>\n  <parameter=cmd>echo hi</parameter>\n</function>";
const FINISH: &str = "<function=finish>\n  <parameter=command>submit</parameter>\n</function>";

/// A structured reply for step `k`.
fn agile(k: usize, call: &str) -> ModelResponse {
    ModelResponse::text(format!(
        "<think>\nreasoning {k}\n</think>\n<reasoning_digest>\ndigest {k}\n</reasoning_digest>\n{call}"
    ))
}

/// What the conversation keeps of step `k`'s reply besides its reasoning.
fn kept(k: usize, call: &str) -> String {
    content(&format!("digest {k}"), call)
}

struct Run {
    end: EpisodeEnd,
    trajectory: Trajectory,
    /// The messages of each request, as the model received them.
    requests: Vec<Vec<Message>>,
    /// The names of the tools of each request's schemas (native function calling).
    tools: Vec<Vec<String>>,
}

/// Runs an episode of `replies` and checks that the trajectory rebuilds every request
/// exactly.
fn run(config: &AgentConfig, format: &dyn ToolFormat, replies: Vec<ModelResponse>) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    std::fs::write(repo.join("calc.py"), "def add(a, b):\n    return a - b\n").unwrap();
    let shell = Arc::new(HostShell::new(repo.clone()));
    let mut toolbox = Toolbox::new(WorkspaceFs::new(&repo), shell, ToolConfig::default());
    let prompts = Prompts::new(&PromptTemplates::default()).unwrap();
    let model = ScriptedModel::new(replies.into_iter().map(Ok));
    let agent = Agent {
        format,
        prompts: &prompts,
        config,
        renderer: None,
    };
    let opening = vec![Message::system("tools"), Message::user("fix add")];
    let header = Header {
        prompt: opening.clone(),
        ..Header::new(ID, "calc")
    };
    let path = dir.path().join("trajectory.jsonl");
    let mut writer = TrajectoryWriter::create(&path, &header).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .build()
        .unwrap();
    let end = runtime
        .block_on(agent.run(&model, opening, &mut toolbox, &mut writer, ID))
        .unwrap();
    writer.finish(&Outcome::new(end.exit_reason, "")).unwrap();
    let trajectory = read_trajectory(&path).unwrap().trajectory;
    let (requests, tools): (Vec<Vec<Message>>, Vec<Vec<String>>) = model
        .requests()
        .into_iter()
        .map(|request| match request.input {
            ModelInput::Chat { messages, tools } => {
                let names = tools
                    .iter()
                    .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
                    .collect();
                (messages, names)
            }
            ModelInput::Prompt(_) => panic!("a chat request was expected"),
        })
        .unzip();
    assert_eq!(requests.len(), trajectory.steps.len());
    for (index, messages) in requests.iter().enumerate() {
        assert_eq!(
            trajectory.messages_sent(index).as_ref(),
            Some(messages),
            "step {index}: the recorded request differs from the one sent"
        );
    }
    Run {
        end,
        trajectory,
        requests,
        tools,
    }
}

fn structured(window: WindowPolicy, send: SendReasoning) -> AgentConfig {
    AgentConfig {
        reasoning: ReasoningConfig {
            required: true,
            window,
            send,
            ..ReasoningConfig::default()
        },
        ..AgentConfig::default()
    }
}

/// The assistant messages of a request.
fn turns(messages: &[Message]) -> Vec<&Message> {
    messages
        .iter()
        .filter(|message| message.role == Role::Assistant)
        .collect()
}

#[test]
fn each_window_sends_the_reasoning_of_exactly_its_turns() {
    let calls = [SEARCH, VIEW, ECHO, VIEW, FINISH];
    let windows = [
        WindowPolicy::Interleaved,
        WindowPolicy::CurrentStep,
        WindowPolicy::Last(1),
        WindowPolicy::Last(2),
        WindowPolicy::Random { min: 1, max: 3 },
    ];
    for window in windows {
        for send in [SendReasoning::Inline, SendReasoning::Field] {
            let config = structured(window, send);
            let replies = calls.iter().enumerate().map(|(k, call)| agile(k, call));
            let run = run(&config, &XmlFormat::new(Pick::Last), replies.collect());
            assert_eq!(run.end.exit_reason, ExitReason::Submitted);
            let kept_turns = match config.reasoning.policy(ID).window {
                Window::All => usize::MAX,
                Window::Last(n) => n,
            };
            for (k, request) in run.requests.iter().enumerate() {
                let sent = turns(request);
                assert_eq!(sent.len(), k);
                for (j, message) in sent.iter().enumerate() {
                    let keeps = k - j <= kept_turns;
                    let (text, field) = match (keeps, send) {
                        (true, SendReasoning::Inline) => {
                            (inline(&format!("reasoning {j}"), &kept(j, calls[j])), None)
                        }
                        (true, SendReasoning::Field) => {
                            (kept(j, calls[j]), Some(format!("reasoning {j}")))
                        }
                        (false, _) => (kept(j, calls[j]), None),
                    };
                    let what = format!("{window:?} {send:?}: request {k}, turn {j}");
                    assert_eq!(message.text(), text, "{what}");
                    assert_eq!(message.reasoning_content, field, "{what}");
                }
            }
            for (k, step) in run.trajectory.steps.iter().enumerate() {
                assert_eq!(step.reasoning, Some(format!("reasoning {k}")));
                assert_eq!(step.digest, Some(format!("digest {k}")));
            }
            // The conversation rebuilt from the file holds every turn (the last, which no
            // request holds, included) with its digest and call as content.
            let conversation = conversation_giving_back_requests(&config, &run);
            let held: Vec<String> = turns(&conversation).iter().map(|t| t.text()).collect();
            let written: Vec<String> = (0..calls.len()).map(|k| kept(k, calls[k])).collect();
            assert_eq!(held, written, "{window:?} {send:?}");
            if window == WindowPolicy::Last(1) && send == SendReasoning::Field {
                // Dropping a field is recorded as such, not by resending the message.
                let dropped = run.trajectory.steps.iter().any(|step| {
                    matches!(&step.messages_sent,
                        Some(MessagesSent::Delta(delta)) if !delta.drop_reasoning.is_empty())
                });
                assert!(dropped);
            }
        }
    }
}

#[test]
fn random_windows_are_drawn_per_trajectory_from_the_seed() {
    let config = structured(
        WindowPolicy::Random { min: 0, max: 3 },
        SendReasoning::Inline,
    );
    let drawn = |seed| {
        let reasoning = ReasoningConfig {
            seed,
            ..config.reasoning.clone()
        };
        reasoning.policy(ID).window
    };
    let windows: Vec<Window> = (0..32).map(drawn).collect();
    for n in 0..=3 {
        assert!(windows.contains(&Window::Last(n)), "{windows:?}");
    }
    assert_eq!(drawn(5), drawn(5));
}

#[test]
fn native_calls_tool_messages_and_error_turns_count_as_turns() {
    let native = |k: usize, digest: bool, call: Option<(&str, &str)>| {
        let mut response = ModelResponse::text(if digest {
            content(&format!("digest {k}"), "")
        } else {
            String::new()
        });
        response.reasoning_content = Some(format!("reasoning {k}"));
        if let Some((name, arguments)) = call {
            response.tool_calls = vec![ChatToolCall::new(format!("call_{k}"), name, arguments)];
        }
        response
    };
    let replies = vec![
        native(0, true, Some(("search", r#"{"search_term": "def add"}"#))),
        // No digest and no call: told in a user message.
        native(1, false, None),
        // No digest with a call: told in the tool message answering it.
        native(2, false, Some(("search", r#"{"search_term": "x"}"#))),
        native(
            3,
            true,
            Some((
                "file_editor",
                r#"{"command": "view", "path": "/testbed/calc.py"}"#,
            )),
        ),
        native(4, true, Some(("finish", r#"{"command": "submit"}"#))),
    ];
    for send in [SendReasoning::Inline, SendReasoning::Field] {
        let config = structured(WindowPolicy::Last(1), send);
        let run = run(&config, &NativeFormat, replies.clone());
        assert_eq!(run.end.exit_reason, ExitReason::Submitted);
        let last = &run.requests[4];
        let roles: Vec<Role> = last.iter().map(|message| message.role).collect();
        use Role::*;
        assert_eq!(
            roles,
            [
                System, User, Assistant, Tool, Assistant, User, Assistant, Tool, Assistant, Tool
            ]
        );
        assert!(
            last[7]
                .text()
                .starts_with("Your reply has no <reasoning_digest>")
        );
        assert_eq!(last[6].tool_calls.len(), 1);
        assert_eq!(last[7].tool_call_id.as_deref(), Some("call_2"));
        // Only the last turn keeps its reasoning; every digest stays.
        for (j, message) in turns(last).iter().enumerate() {
            let text = message.text();
            let has_reasoning =
                text.contains(&format!("reasoning {j}")) || message.reasoning_content.is_some();
            assert_eq!(has_reasoning, j == 3, "{send:?} turn {j}: {message:?}");
            assert_eq!(text.contains(&format!("digest {j}")), j != 1 && j != 2);
        }
        // The error turn keeps its reasoning while it is the last turn.
        let third = turns(&run.requests[2]);
        let kept = third[1].text().contains("reasoning 1") || third[1].reasoning_content.is_some();
        assert!(kept, "{send:?}: {:?}", third[1]);
        assert_eq!(
            run.trajectory.steps[1].reasoning.as_deref(),
            Some("reasoning 1")
        );
        assert_eq!(run.trajectory.steps[1].digest, None);
        // The conversation rebuilt from the file ends with the last call, native.
        let conversation = conversation_giving_back_requests(&config, &run);
        let finish = ChatToolCall::new("call_4", "finish", r#"{"command":"submit"}"#);
        let last = conversation.last().unwrap();
        assert_eq!(
            (last.text(), &last.tool_calls),
            (content("digest 4", ""), &vec![finish])
        );
    }
}

/// Replies breaking the structure, each with its error's key and the start of its text.
fn broken_replies() -> Vec<(String, &'static str, &'static str)> {
    vec![
        (
            format!("<reasoning_digest>d</reasoning_digest>\n{SEARCH}"),
            "missing_reasoning",
            "Your reply has no reasoning.",
        ),
        (
            "<think>still thinking".to_owned(),
            "missing_reasoning",
            "Your <think> block is never closed",
        ),
        (
            format!("<think>r</think>\n{SEARCH}"),
            "missing_digest",
            "Your reply has no <reasoning_digest> block",
        ),
        (
            format!("<think>r</think><reasoning_digest>d\n{SEARCH}"),
            "missing_digest",
            "Your <reasoning_digest> block has no closing",
        ),
        (
            format!("<think>r</think><reasoning_digest></reasoning_digest>\n{SEARCH}"),
            "missing_digest",
            "Your <reasoning_digest> block is empty.",
        ),
        (
            format!("<think>r</think>\n{SEARCH}\n<reasoning_digest>d</reasoning_digest>"),
            "digest_after_action",
            "Your tool call comes before your <reasoning_digest> block.",
        ),
        (
            format!(
                "<think>r</think><reasoning_digest>a</reasoning_digest>\n<reasoning_digest>b</reasoning_digest>\n{SEARCH}"
            ),
            "multiple_digests",
            "Your reply has 2 <reasoning_digest> blocks",
        ),
    ]
}

/// Sets the policy of the kind `key`.
fn set(on_error: &mut OnError, key: &str, policy: ErrorPolicy) {
    match key {
        "missing_reasoning" => on_error.missing_reasoning = policy,
        "missing_digest" => on_error.missing_digest = policy,
        "digest_after_action" => on_error.digest_after_action = policy,
        "multiple_digests" => on_error.multiple_digests = policy,
        _ => unreachable!("{key}"),
    }
}

#[test]
fn structure_errors_are_told_when_the_policy_says_tell() {
    for (reply, key, text) in broken_replies() {
        let mut config = structured(WindowPolicy::Last(1), SendReasoning::Inline);
        // Every other kind terminates: only this one's policy may apply.
        let mut on_error = OnError::default();
        for other in [
            "missing_reasoning",
            "missing_digest",
            "digest_after_action",
            "multiple_digests",
        ] {
            set(&mut on_error, other, ErrorPolicy::Terminate);
        }
        set(&mut on_error, key, ErrorPolicy::Tell);
        config.reasoning.on_error = on_error;
        let replies = vec![ModelResponse::text(reply.clone()), agile(1, FINISH)];
        let run = run(&config, &XmlFormat::new(Pick::Last), replies);
        assert_eq!(run.end.exit_reason, ExitReason::Submitted, "{key}: {reply}");
        let step = &run.trajectory.steps[0];
        let error = step.format_error.as_deref().unwrap();
        assert!(error.starts_with(text), "{key}: {error}");
        assert_eq!(step.observation.as_deref(), Some(error));
        assert_eq!(run.requests[1].last().unwrap().text(), error);
        assert_eq!(run.requests[1].last().unwrap().role, Role::User);
    }
}

#[test]
fn structure_errors_end_the_episode_when_the_policy_says_terminate() {
    for (reply, key, text) in broken_replies() {
        let mut config = structured(WindowPolicy::Last(1), SendReasoning::Inline);
        set(&mut config.reasoning.on_error, key, ErrorPolicy::Terminate);
        let run = run(
            &config,
            &XmlFormat::new(Pick::Last),
            vec![ModelResponse::text(reply.clone())],
        );
        assert_eq!(
            run.end.exit_reason,
            ExitReason::FormatErrors,
            "{key}: {reply}"
        );
        let detail = run.end.detail.as_deref().unwrap();
        assert!(
            detail.starts_with(&format!(
                "{key} (agent.reasoning.on_error.{key} = \"terminate\"): {text}"
            )),
            "{detail}"
        );
        let step = &run.trajectory.steps[0];
        assert!(step.format_error.as_deref().unwrap().starts_with(text));
        assert_eq!(step.observation, None, "the model is not told");
        assert_eq!(run.requests.len(), 1);
    }
}

#[test]
fn told_structure_errors_count_toward_the_format_error_budget() {
    let mut config = structured(WindowPolicy::Last(1), SendReasoning::Inline);
    config.max_format_errors = 2;
    let broken = broken_replies();
    // A structure error, a good step, then two errors in a row: a structure error and a
    // reply whose structure is right but has no call.
    let replies = vec![
        ModelResponse::text(broken[2].0.clone()),
        agile(1, SEARCH),
        ModelResponse::text(broken[5].0.clone()),
        ModelResponse::text("<think>r</think><reasoning_digest>d</reasoning_digest>I am done."),
    ];
    let run = run(&config, &XmlFormat::new(Pick::Last), replies);
    assert_eq!(run.end.exit_reason, ExitReason::FormatErrors);
    assert_eq!(
        run.end.detail.as_deref(),
        Some("2 replies in a row without a valid tool call")
    );
    let last = &run.trajectory.steps[3];
    assert_eq!(
        last.format_error.as_deref(),
        Some(swerve_tools::CONTINUE_MSG)
    );
    assert_eq!(last.digest.as_deref(), Some("d"));
    assert_eq!(last.reasoning.as_deref(), Some("r"));
}

#[test]
fn the_defaults_send_the_conversation_as_before() {
    let config = AgentConfig::default();
    assert!(config.reasoning.is_default());
    let text = format!("<think>inline</think>\nLet me look.\n{SEARCH}");
    let mut first = ModelResponse::text(text.clone());
    first.reasoning_content = Some("channel".into());
    let run = run(
        &config,
        &XmlFormat::new(Pick::First),
        vec![first, ModelResponse::text(FINISH)],
    );
    assert_eq!(run.end.exit_reason, ExitReason::Submitted);
    let format = XmlFormat::new(Pick::First);
    let parsed = format.parse(&ModelOutput::from_text(text)).unwrap();
    let expected = Message {
        reasoning_content: Some("channel".into()),
        ..Message::assistant(
            format
                .render_call(&parsed.thought, &parsed.call, None)
                .content,
        )
    };
    assert_eq!(run.requests[1][2], expected);
    assert!(
        expected
            .text()
            .starts_with("<think>inline</think>\nLet me look.")
    );
    let step = &run.trajectory.steps[0];
    assert_eq!(
        (step.reasoning.as_deref(), step.digest.as_deref()),
        (Some("channel"), None)
    );
    // Append-only: each request extends the one before.
    assert!(matches!(&run.trajectory.steps[1].messages_sent,
        Some(MessagesSent::Delta(delta)) if delta.keep == 2 && delta.drop_reasoning.is_empty()));
    // The default section is not written, so saved configurations read as before.
    let json = serde_json::to_value(&config).unwrap();
    assert!(json.get("reasoning").is_none());
}

/// `recall_thought` with these step ids, as an XML call.
fn recall_call(ids: &str) -> String {
    format!("<function=recall_thought>\n  <parameter=step_ids>{ids}</parameter>\n</function>")
}

fn recalling(window: WindowPolicy) -> AgentConfig {
    let mut config = structured(window, SendReasoning::Inline);
    config.reasoning.recall_thought = true;
    config
}

#[test]
fn recall_thought_brings_back_reasoning_that_left_the_window() {
    let config = recalling(WindowPolicy::Last(1));
    let replies = vec![
        agile(0, SEARCH),
        agile(1, VIEW),
        agile(2, &recall_call("[0, 2]")),
        agile(3, &recall_call("[7]")),
        agile(4, &recall_call("oops")),
        agile(5, FINISH),
    ];
    let run = run(&config, &XmlFormat::new(Pick::Last), replies);
    assert_eq!(run.end.exit_reason, ExitReason::Submitted);
    let observation = |k: usize| run.trajectory.steps[k].observation.clone().unwrap();
    // The current step counts, as upstream appends it before running the action.
    assert_eq!(
        observation(2),
        "=== RECALLED THOUGHT BEGIN ===\nSTEP [0, 2]: reasoning 0\nSTEP [0, 2]: reasoning 2\n\nSteps Remaining: 47"
    );
    assert_eq!(
        observation(3),
        "Error: Step_id 7 exceed current past steps length 4!\nSteps Remaining: 46"
    );
    assert!(observation(4).starts_with("Error: step_ids must be a JSON list"));
    // The model sees the recall as it sees any observation.
    assert_eq!(run.requests[3].last().unwrap().text(), observation(2));
    let call = run.trajectory.steps[2].tool_call.as_ref().unwrap();
    assert_eq!(call.name, "recall_thought");
}

#[test]
fn recall_thought_is_offered_only_when_it_is_on() {
    let dir = tempfile::tempdir().unwrap();
    let shell = Arc::new(HostShell::new(dir.path()));
    let toolbox = Toolbox::new(WorkspaceFs::new(dir.path()), shell, ToolConfig::default());
    let prompts = Prompts::new(&PromptTemplates::default()).unwrap();
    let task = swerve_core::Task::new("calc", "o/calc", "0", "fix add");
    let system_prompt = |config: &AgentConfig| {
        let agent = Agent {
            format: &XmlFormat::new(Pick::Last),
            prompts: &prompts,
            config,
            renderer: None,
        };
        agent.opening(&task, &toolbox, "/testbed").unwrap()[0].text()
    };
    let on = system_prompt(&recalling(WindowPolicy::Last(1)));
    assert!(
        on.contains("---- BEGIN FUNCTION #5: recall_thought ----"),
        "{on}"
    );
    assert!(on.contains("(1) step_ids (array, required)"), "{on}");
    let off = system_prompt(&structured(WindowPolicy::Last(1), SendReasoning::Inline));
    assert!(!off.contains("recall_thought"), "{off}");

    // Native function calling: the schema comes with every request, only when on.
    let native = |config: &AgentConfig| {
        let finish = ChatToolCall::new("call_0", "finish", r#"{"command": "submit"}"#);
        let mut reply = ModelResponse::text(content("d", ""));
        reply.reasoning_content = Some("r".into());
        reply.tool_calls = vec![finish];
        run(config, &NativeFormat, vec![reply]).tools.remove(0)
    };
    assert_eq!(
        native(&recalling(WindowPolicy::Last(1)))
            .last()
            .map(String::as_str),
        Some("recall_thought")
    );
    assert!(
        !native(&structured(WindowPolicy::Last(1), SendReasoning::Inline))
            .contains(&"recall_thought".to_owned())
    );

    // Off, a call to it is an unknown tool, answered by the toolbox.
    let config = structured(WindowPolicy::Last(1), SendReasoning::Inline);
    let replies = vec![agile(0, &recall_call("[0]")), agile(1, FINISH)];
    let run = run(&config, &XmlFormat::new(Pick::Last), replies);
    let observation = run.trajectory.steps[0].observation.as_deref().unwrap();
    assert!(observation.starts_with("Invalid Action"), "{observation}");
}

/// The conversation rebuilt from the run's trajectory, checked: every turn holds its
/// step's reasoning, and the run's own policy gives back each request from it.
fn conversation_giving_back_requests(config: &AgentConfig, run: &Run) -> Vec<Message> {
    let conversation = run.trajectory.conversation().unwrap();
    let policy = config.reasoning.policy(ID);
    let what = format!("{:?}", config.reasoning);
    for (k, request) in run.requests.iter().enumerate() {
        let context = policy.before_turn(&conversation, k);
        assert_eq!(context.as_ref(), Some(request), "{what}: request {k}");
    }
    let reasoning: Vec<Option<String>> = turns(&conversation)
        .iter()
        .map(|turn| turn.reasoning_content.clone())
        .collect();
    let recorded: Vec<Option<String>> = run
        .trajectory
        .steps
        .iter()
        .map(|step| step.reasoning.clone())
        .collect();
    assert_eq!(reasoning, recorded, "{what}");
    conversation
}
