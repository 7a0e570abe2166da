//! A call given as is ([`Agent::take_call`], a gym's structured action) runs exactly as
//! given under every tool-call format: the tool receives every argument's text unchanged
//! (trailing newlines, surrounding whitespace, CRLF, the formats' own tags) and the step
//! records that call, while the conversation keeps the call as the format writes it. Reading
//! that written text back is not the same: R2E-Gym's XML strips every value, which is why a
//! given call must not round-trip through the format (a patch written with `file_editor`
//! lost its last newline and `git apply` called it corrupt).

use std::sync::{Arc, Mutex};

use proptest::prelude::*;
use serde_json::{Map, Value};
use swerve_agent::episode::{Agent, AgentConfig};
use swerve_agent::prompt::{PromptTemplates, Prompts};
use swerve_core::ToolCall;
use swerve_core::trajectory::{Message, Role};
use swerve_llm::ModelResponse;
use swerve_testing::HostShell;
use swerve_tools::formats::{FORMAT_NAMES, ToolFormat, from_name};
use swerve_tools::{CallInterceptor, ToolConfig, ToolResult, Toolbox, WorkspaceFs};

/// Answers every call, remembering the calls it was given.
struct Recorder(Arc<Mutex<Vec<ToolCall>>>);

impl CallInterceptor for Recorder {
    fn intercept(
        &mut self,
        call: &ToolCall,
        _fs: &WorkspaceFs,
        _config: &ToolConfig,
    ) -> Option<ToolResult> {
        self.0.lock().unwrap().push(call.clone());
        Some(ToolResult {
            output: "ok".into(),
            error_code: "0".into(),
            done: false,
            is_error: false,
            observation: "ok".into(),
            submission: None,
        })
    }
}

/// How a step was taken: as a given call, or as the reply that writes it.
#[derive(Clone, Copy)]
enum Taken {
    Call,
    Reply,
}

/// What one step of `format` did with `call`: the call the tool received, the call the
/// step recorded, and the assistant message the conversation kept.
fn take(
    format: &dyn ToolFormat,
    call: &ToolCall,
    taken: Taken,
) -> (Option<ToolCall>, Option<ToolCall>, Message) {
    let dir = tempfile::tempdir().unwrap();
    let received = Arc::new(Mutex::new(Vec::new()));
    let shell = Arc::new(HostShell::new(dir.path()));
    let mut toolbox = Toolbox::new(WorkspaceFs::new(dir.path()), shell, ToolConfig::default())
        .with_interceptor(Box::new(Recorder(received.clone())));
    let prompts = Prompts::new(&PromptTemplates::default()).unwrap();
    let config = AgentConfig::default();
    let agent = Agent {
        format,
        prompts: &prompts,
        config: &config,
        renderer: None,
    };
    let opening = vec![Message::system("tools"), Message::user("task")];
    let mut episode = agent.begin(opening, &toolbox, "given__0");
    let prompt = agent.prompt(&mut episode).unwrap();
    let stepped = match taken {
        Taken::Call => agent.take_call(&mut episode, prompt, call.clone(), &mut toolbox),
        Taken::Reply => {
            let written = format.render_call("", call, None);
            let mut response = ModelResponse::text(written.content);
            response.tool_calls = written
                .tool_calls
                .iter()
                .map(|native| {
                    swerve_core::trajectory::ChatToolCall::new(
                        native.id.as_deref().unwrap_or("call_0"),
                        &native.name,
                        &native.arguments,
                    )
                })
                .collect();
            agent.take_reply(&mut episode, prompt, &response, &mut toolbox)
        }
    }
    .unwrap();
    let step = stepped.step.unwrap();
    let kept = episode
        .conversation()
        .iter()
        .rfind(|message| message.role == Role::Assistant)
        .unwrap()
        .clone();
    let received = received.lock().unwrap().pop();
    (received, step.tool_call, kept)
}

/// Argument text of every kind the formats treat specially.
fn text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("\n".to_owned()),
        Just("\r\n".to_owned()),
        Just("  ".to_owned()),
        Just("\t".to_owned()),
        Just("</parameter>".to_owned()),
        Just("</function>".to_owned()),
        Just("<tool_call>".to_owned()),
        Just("```".to_owned()),
        Just("\"\\".to_owned()),
        Just("é€😀".to_owned()),
        "[ -~]{0,8}",
        "\\PC{0,4}",
    ];
    prop::collection::vec(piece, 0..12).prop_map(|pieces| pieces.concat())
}

/// Arguments: mostly text, some other JSON values.
fn arguments() -> impl Strategy<Value = Map<String, Value>> {
    let value = prop_oneof![
        4 => text().prop_map(Value::String),
        1 => any::<i64>().prop_map(Value::from),
        1 => any::<bool>().prop_map(Value::from),
    ];
    prop::collection::btree_map("[a-z][a-z_]{0,10}", value, 0..4)
        .prop_map(|arguments| arguments.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn a_given_call_runs_exactly_as_given_in_every_format(
        name in "[a-z][a-z_]{0,12}",
        arguments in arguments(),
    ) {
        let call = ToolCall { name, arguments };
        for format_name in FORMAT_NAMES {
            let format = from_name(format_name).unwrap();
            let (received, recorded, kept) = take(format.as_ref(), &call, Taken::Call);
            prop_assert_eq!(received.as_ref(), Some(&call), "{}", format_name);
            prop_assert_eq!(recorded.as_ref(), Some(&call), "{}", format_name);
            let written = format.render_call("", &call, None);
            prop_assert_eq!(kept.text(), written.content.clone(), "{}", format_name);
            let kept_calls: Vec<(&str, &str)> = kept
                .tool_calls
                .iter()
                .map(|chat| (chat.function.name.as_str(), chat.function.arguments.as_str()))
                .collect();
            let written_calls: Vec<(&str, &str)> = written
                .tool_calls
                .iter()
                .map(|native| (native.name.as_str(), native.arguments.as_str()))
                .collect();
            prop_assert_eq!(kept_calls, written_calls, "{}", format_name);
        }
    }
}

/// Why the call is not read back: the XML format's reading of its own written call strips
/// a file's last newline, so the same call taken as a reply differs from the given one.
#[test]
fn reading_the_written_call_back_would_change_a_file_text() {
    let call = ToolCall::new("file_editor")
        .arg("command", "create")
        .arg("path", "/testbed/gold.diff")
        .arg("file_text", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n");
    let xml = from_name("xml").unwrap();
    let (_, as_reply, _) = take(xml.as_ref(), &call, Taken::Reply);
    let as_reply = as_reply.unwrap();
    assert_eq!(
        as_reply.arguments["file_text"],
        "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b"
    );
    let (received, as_given, _) = take(xml.as_ref(), &call, Taken::Call);
    assert_eq!(as_given, Some(call.clone()));
    assert_eq!(received, Some(call));
}
