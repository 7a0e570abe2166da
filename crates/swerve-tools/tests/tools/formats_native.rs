//! `NativeFormat`: real OpenHands tool calls, exact error texts, OpenAI messages and
//! round trips; plus `from_name` and `FormatErrorBudget`.

use serde_json::{Value, json};
use swerve_core::ToolCall;
use swerve_tools::formats::{
    FALLBACK_CALL_ID, FORMAT_NAMES, FormatError, FormatErrorBudget, ModelOutput, NativeFormat,
    NativeToolCall, ParsedResponse, ResultRole, ToolFormat, from_name,
};
use swerve_tools::{CONTINUE_MSG, ToolConfig, tool_specs};

const NATIVE: NativeFormat = NativeFormat;

fn native_call(id: Option<&str>, name: &str, arguments: &str) -> NativeToolCall {
    NativeToolCall {
        id: id.map(str::to_owned),
        name: name.to_owned(),
        arguments: arguments.to_owned(),
    }
}

fn parse(text: &str, calls: Vec<NativeToolCall>) -> Result<ParsedResponse, FormatError> {
    NATIVE.parse(&ModelOutput {
        text: text.to_owned(),
        tool_calls: calls,
    })
}

/// Real replies (content and `tool_calls`) of an OpenHands run.
#[test]
fn real_openhands_replies() {
    let turns: Vec<Value> = serde_json::from_str(include_str!(
        "../fixtures/formats/openhands_native_turns.json"
    ))
    .unwrap();
    assert_eq!(turns.len(), 4);
    for turn in &turns {
        let calls: Vec<NativeToolCall> = turn["tool_calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|call| serde_json::from_value(call.clone()).unwrap())
            .collect();
        let parsed = parse(turn["content"].as_str().unwrap(), calls.clone()).unwrap();
        assert_eq!(parsed.call.name, turn["name"].as_str().unwrap());
        assert_eq!(
            Value::Object(parsed.call.arguments.clone()),
            turn["arguments"]
        );
        assert_eq!(parsed.thought, turn["content"].as_str().unwrap().trim());
        assert_eq!(parsed.call_id, calls[0].id);
        assert_eq!(parsed.note, None);
        assert_eq!(
            serde_json::from_str::<Value>(&parsed.call_text).unwrap(),
            json!({"name": turn["name"], "arguments": turn["arguments"]})
        );
    }
}

#[test]
fn reads_openai_tool_call_entries() {
    let entry = json!({"index": 1, "id": "toolu_05", "type": "function",
        "function": {"name": "str_replace_editor", "arguments": "{\"command\": \"view\"}"}});
    let call = NativeToolCall::from_openai(&entry);
    assert_eq!(
        call,
        native_call(
            Some("toolu_05"),
            "str_replace_editor",
            "{\"command\": \"view\"}"
        )
    );
    assert_eq!(
        call.to_openai(),
        json!({"id": "toolu_05", "type": "function",
            "function": {"name": "str_replace_editor", "arguments": "{\"command\": \"view\"}"}})
    );
    // Arguments sent as an object, and missing fields.
    let call = NativeToolCall::from_openai(
        &json!({"function": {"name": "search", "arguments": {"search_term": "x"}}}),
    );
    assert_eq!(call, native_call(None, "search", "{\"search_term\":\"x\"}"));
    assert_eq!(
        NativeToolCall::from_openai(&json!({})),
        native_call(None, "", "")
    );
}

#[test]
fn tolerated_arguments() {
    let cases = [
        ("", json!({})),
        ("  ", json!({})),
        ("null", json!({})),
        ("{}", json!({})),
        (" {\"path\": \"/testbed\"}\n", json!({"path": "/testbed"})),
        (
            "\"{\\\"path\\\": \\\"/testbed\\\"}\"",
            json!({"path": "/testbed"}),
        ),
    ];
    for (arguments, expected) in cases {
        let parsed = parse("", vec![native_call(None, "file_editor", arguments)]).unwrap();
        assert_eq!(
            Value::Object(parsed.call.arguments),
            expected,
            "{arguments:?}"
        );
        assert_eq!(parsed.call_id.as_deref(), Some(FALLBACK_CALL_ID));
    }
}

#[test]
fn several_calls_run_the_first_and_say_so() {
    let parsed = parse(
        "Two things at once.",
        vec![
            native_call(Some("call_a"), "execute_bash", "{\"command\": \"ls\"}"),
            native_call(Some("call_b"), "search", "{\"search_term\": \"foo\"}"),
            native_call(Some("call_c"), "search", "not even json"),
        ],
    )
    .unwrap();
    assert_eq!(
        parsed.call,
        ToolCall::new("execute_bash").arg("command", "ls")
    );
    assert_eq!(parsed.call_id.as_deref(), Some("call_a"));
    assert_eq!(
        parsed.note.as_deref(),
        Some(
            "Note: your response contained 3 tool calls; only the first one (execute_bash) was run. Call one tool per response."
        )
    );
}

#[test]
fn exact_error_texts() {
    let cases = [
        (vec![], CONTINUE_MSG.to_owned()),
        (
            vec![native_call(Some("c"), " ", "{}")],
            "Your tool call has no function name. Call exactly one tool, by its name.".to_owned(),
        ),
        (
            vec![native_call(Some("c"), "execute_bash", "{\"command\": \"ls\"")],
            "The arguments of your execute_bash tool call must be a JSON object of parameter names and values, but they are not valid JSON (EOF while parsing an object at line 1 column 16).".to_owned(),
        ),
        (
            vec![native_call(Some("c"), "execute_bash", "[\"ls\"]")],
            "The arguments of your execute_bash tool call must be a JSON object of parameter names and values, but they are a JSON array.".to_owned(),
        ),
        (
            vec![native_call(Some("c"), "execute_bash", "\"ls -la\"")],
            "The arguments of your execute_bash tool call must be a JSON object of parameter names and values, but they are a JSON string that does not hold a JSON object.".to_owned(),
        ),
    ];
    for (calls, expected) in cases {
        let error = parse("Some text <function=search></function>", calls).unwrap_err();
        assert_eq!(error.to_string(), expected);
        assert_eq!(NATIVE.render_error(&error).role, ResultRole::User);
    }
}

#[test]
fn openai_messages_and_round_trip() {
    let tools = tool_specs(&ToolConfig::default());
    let rendered = NATIVE.render(&tools);
    assert_eq!(rendered.system_text, None);
    assert_eq!(rendered.tools.as_deref(), Some(tools.as_slice()));

    let call = ToolCall::new("file_editor")
        .arg("command", "view")
        .arg("path", "/testbed/a.py")
        .arg("view_range", json!([1, 20]));
    let message = NATIVE.render_call(" Viewing. ", &call, Some("call_9"));
    assert_eq!(
        message.to_openai(),
        json!({"role": "assistant", "content": "Viewing.", "tool_calls": [{
            "id": "call_9", "type": "function",
            "function": {"name": "file_editor",
                "arguments": "{\"command\":\"view\",\"path\":\"/testbed/a.py\",\"view_range\":[1,20]}"}}]})
    );
    let parsed = NATIVE
        .parse(&ModelOutput {
            text: message.content.clone(),
            tool_calls: message.tool_calls.clone(),
        })
        .unwrap();
    assert_eq!(parsed.call, call);
    assert_eq!(parsed.thought, "Viewing.");
    assert_eq!(parsed.call_id.as_deref(), Some("call_9"));

    let without_thought = NATIVE.render_call("", &call, None);
    assert_eq!(without_thought.to_openai()["content"], Value::Null);
    assert_eq!(
        without_thought.tool_calls[0].id.as_deref(),
        Some(FALLBACK_CALL_ID)
    );

    let result = NATIVE.render_result("Execution output of [file_editor]:\nok", Some("call_9"));
    assert_eq!(
        result.to_openai(),
        json!({"role": "tool", "content": "Execution output of [file_editor]:\nok", "tool_call_id": "call_9"})
    );
    let result = NATIVE.render_result("no call to answer", None);
    assert_eq!(
        result.to_openai(),
        json!({"role": "user", "content": "no call to answer"})
    );
}

#[test]
fn formats_by_name() {
    for name in FORMAT_NAMES {
        assert_eq!(from_name(name).unwrap().name(), name);
    }
    assert!(from_name("json").is_none());
    let xml = from_name("xml").unwrap();
    let error = xml.parse(&ModelOutput::from_text("hello")).unwrap_err();
    assert_eq!(error.to_string(), CONTINUE_MSG);
}

#[test]
fn error_budget_counts_consecutive_errors() {
    let mut budget = FormatErrorBudget::default();
    assert_eq!(budget.cap(), 3);
    assert!(!budget.record_error());
    assert!(!budget.record_error());
    budget.record_success();
    assert_eq!(budget.consecutive(), 0);
    assert!(!budget.record_error());
    assert!(!budget.record_error());
    assert!(budget.record_error());
    assert!(budget.is_exhausted());
    assert_eq!(budget.consecutive(), 3);

    let mut once = FormatErrorBudget::new(1);
    assert!(once.record_error());
    let mut unlimited = FormatErrorBudget::new(0);
    for _ in 0..100 {
        assert!(!unlimited.record_error());
    }
}
