//! `HermesFormat`: Qwen-style replies, noise, exact error texts, rendering and round
//! trips.

use serde_json::{Value, json};
use swerve_core::ToolCall;
use swerve_tools::formats::{
    FormatError, HermesFormat, ModelOutput, NativeToolCall, ParsedResponse, ResultRole, ToolFormat,
};

const HERMES: HermesFormat = HermesFormat;

fn parse(text: &str) -> Result<ParsedResponse, FormatError> {
    HERMES.parse(&ModelOutput::from_text(text))
}

fn error_text(text: &str) -> String {
    parse(text).expect_err(text).to_string()
}

fn view_call() -> ToolCall {
    ToolCall::new("file_editor")
        .arg("command", "view")
        .arg("path", "/testbed/src/utils.py")
        .arg("view_range", json!([10, 40]))
}

const VIEW_JSON: &str = r#"{"name": "file_editor", "arguments": {"command": "view", "path": "/testbed/src/utils.py", "view_range": [10, 40]}}"#;

#[test]
fn qwen_style_replies() {
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "prose, then the call as Qwen writes it",
            format!("I need to look at the helper first.\n<tool_call>\n{VIEW_JSON}\n</tool_call>"),
            "I need to look at the helper first.",
        ),
        (
            "reasoning, then the call",
            format!("<think>\nThe bug is in utils.\nA draft: <tool_call>{{\"name\": \"search\"}}</tool_call>\n</think>\n\n<tool_call>\n{VIEW_JSON}\n</tool_call>"),
            "<think>\nThe bug is in utils.\nA draft: <tool_call>{\"name\": \"search\"}</tool_call>\n</think>",
        ),
        (
            "CRLF line ends",
            format!("Looking.\r\n<tool_call>\r\n{VIEW_JSON}\r\n</tool_call>\r\n"),
            "Looking.",
        ),
        (
            "a code fence inside the block",
            format!("<tool_call>\n```json\n{VIEW_JSON}\n```\n</tool_call>"),
            "",
        ),
        (
            "a code fence around the block",
            format!("Looking.\n```xml\n<tool_call>\n{VIEW_JSON}\n</tool_call>\n```"),
            "Looking.",
        ),
        (
            "closing tag cut by a stop sequence",
            format!("<tool_call>\n{VIEW_JSON}\n"),
            "",
        ),
        (
            "closing tag partly written",
            format!("<tool_call>\n{VIEW_JSON}\n</tool_"),
            "",
        ),
        (
            "arguments encoded as a string",
            r#"<tool_call>{"name": "file_editor", "arguments": "{\"command\": \"view\", \"path\": \"/testbed/src/utils.py\", \"view_range\": [10, 40]}"}</tool_call>"#.to_owned(),
            "",
        ),
        (
            "arguments spelled parameters",
            r#"<tool_call>{"name": "file_editor", "parameters": {"command": "view", "path": "/testbed/src/utils.py", "view_range": [10, 40]}}</tool_call>"#.to_owned(),
            "",
        ),
        (
            "the same call twice",
            format!("<tool_call>\n{VIEW_JSON}\n</tool_call>\n<tool_call>{VIEW_JSON}</tool_call>"),
            "",
        ),
    ];
    for (what, text, thought) in cases {
        let parsed = parse(&text).unwrap_or_else(|err| panic!("{what}: {err}"));
        assert_eq!(parsed.call, view_call(), "{what}");
        assert_eq!(parsed.thought, thought, "{what}");
        assert_eq!(parsed.call_id, None);
        assert!(parsed.call_text.starts_with("<tool_call>"), "{what}");
    }
    let parsed = parse(&format!(
        "Go.\n<tool_call>\n{VIEW_JSON}\n</tool_call>\nDone."
    ))
    .unwrap();
    assert_eq!(
        parsed.call_text,
        format!("<tool_call>\n{VIEW_JSON}\n</tool_call>")
    );
    // No arguments at all is a call without arguments; native tool calls are not read.
    let output = ModelOutput {
        text: r#"<tool_call>{"name": "finish"}</tool_call>"#.to_owned(),
        tool_calls: vec![NativeToolCall {
            id: None,
            name: "search".to_owned(),
            arguments: "{}".to_owned(),
        }],
    };
    assert_eq!(HERMES.parse(&output).unwrap().call, ToolCall::new("finish"));
}

#[test]
fn exact_error_texts() {
    let layout =
        "<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>";
    let cases: Vec<(String, String)> = vec![
        (
            "I will now view the file.".to_owned(),
            format!("Your response contains no tool call. Call exactly one tool in each response, written as:\n{layout}"),
        ),
        (
            // JSON without the tags is not guessed to be a call.
            VIEW_JSON.to_owned(),
            format!("Your response contains no tool call. Call exactly one tool in each response, written as:\n{layout}"),
        ),
        (
            r#"<tool_call>{"name": "search", "arguments": {"search_term": "foo",}}</tool_call>"#.to_owned(),
            format!("The content of your <tool_call> block is not a valid JSON object: trailing comma at line 1 column 55. Write exactly one JSON object per block:\n{layout}"),
        ),
        (
            "<tool_call>\n</tool_call>".to_owned(),
            format!("The content of your <tool_call> block is not a valid JSON object: the block is empty. Write exactly one JSON object per block:\n{layout}"),
        ),
        (
            r#"<tool_call>[{"name": "search"}]</tool_call>"#.to_owned(),
            format!("The content of your <tool_call> block is not a valid JSON object: it is a JSON array. Write exactly one JSON object per block:\n{layout}"),
        ),
        (
            "<tool_call>\n{\"name\": \"search\", \"arguments\": {}}\n{\"name\": \"finish\", \"arguments\": {}}\n</tool_call>".to_owned(),
            format!("The content of your <tool_call> block is not a valid JSON object: trailing characters at line 2 column 1. Write exactly one JSON object per block:\n{layout}"),
        ),
        (
            r#"<tool_call>{"function": "search", "arguments": {}}</tool_call>"#.to_owned(),
            format!("The JSON object in your <tool_call> block has no \"name\" string. Write the call as:\n{layout}"),
        ),
        (
            r#"<tool_call>{"name": "search", "arguments": ["foo"]}</tool_call>"#.to_owned(),
            "The \"arguments\" of your search call must be a JSON object of parameter names and values, but they are a JSON array.".to_owned(),
        ),
        (
            r#"<tool_call>{"name": "search", "arguments": "foo"}</tool_call>"#.to_owned(),
            "The \"arguments\" of your search call must be a JSON object of parameter names and values, but they are a JSON string that does not hold a JSON object.".to_owned(),
        ),
        (
            r#"<tool_call>{"name": "search", "arguments": {}, "parameters": {}}</tool_call>"#.to_owned(),
            "The \"arguments\" of your search call must be a JSON object of parameter names and values, but both \"arguments\" and \"parameters\" are given.".to_owned(),
        ),
        (
            r#"<tool_call>{"name": "search", "arguments": {"search_term": "a"}}</tool_call><tool_call>{"name": "finish", "arguments": {}}</tool_call>"#.to_owned(),
            "Your response contains 2 different tool calls (search, finish), but only one call per response is allowed. Reply again with exactly one <tool_call>…</tool_call> block.".to_owned(),
        ),
        (
            r#"<tool_call>{"name": "search", "arguments": {"search_term": "a"}}</tool_call><tool_call>oops</tool_call>"#.to_owned(),
            "Your response contains 2 different tool calls (search, unnamed), but only one call per response is allowed. Reply again with exactly one <tool_call>…</tool_call> block.".to_owned(),
        ),
        (
            "<tool_call>\n{\"name\": \"search\", \"arguments\": {\"search_term\": \"a\"}}\n<tool_call>\n{\"name\": \"search\", \"arguments\": {\"search_term\": \"a\"}}\n</tool_call>".to_owned(),
            "Your <tool_call> block is not closed: a new <tool_call> starts before its </tool_call>. Reply again with exactly one complete <tool_call>…</tool_call> block.".to_owned(),
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(error_text(&text), expected, "{text:?}");
    }
}

#[test]
fn renders_qwen_tool_prompt() {
    let tools = vec![json!({
        "type": "function",
        "function": {
            "name": "search",
            "description": "Search for a term.",
            "parameters": {"type": "object", "properties": {"search_term": {"type": "string"}}, "required": ["search_term"]},
        },
    })];
    let rendered = HERMES.render(&tools);
    assert_eq!(rendered.tools, None);
    assert_eq!(
        rendered.system_text.unwrap(),
        "# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"search\", \"description\": \"Search for a term.\", \"parameters\": {\"type\": \"object\", \"properties\": {\"search_term\": {\"type\": \"string\"}}, \"required\": [\"search_term\"]}}}\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>"
    );
}

#[test]
fn render_call_round_trips() {
    let message = HERMES.render_call("Let me view it.", &view_call(), Some("ignored"));
    assert!(message.tool_calls.is_empty());
    assert_eq!(
        message.content,
        format!("Let me view it.\n<tool_call>\n{VIEW_JSON}\n</tool_call>")
    );
    let parsed = parse(&message.content).unwrap();
    assert_eq!(parsed.call, view_call());
    assert_eq!(parsed.thought, "Let me view it.");

    let odd = ToolCall::new("execute_bash")
        .arg("command", "printf '</tool_call>\\n' \"é\"")
        .arg("timeout", 30)
        .arg("flags", json!({"a": [true, null, 1.5]}));
    let message = HERMES.render_call("", &odd, None);
    assert!(message.content.starts_with("<tool_call>\n{\"name\""));
    // `</tool_call>` inside a value ends the block early: the format cannot hold it.
    assert!(parse(&message.content).is_err());
    let fine = ToolCall::new("execute_bash")
        .arg("command", "echo \"é\" <in >out")
        .arg("timeout", 30)
        .arg("flags", json!({"a": [true, null, 1.5]}));
    let parsed = parse(&HERMES.render_call("", &fine, None).content).unwrap();
    assert_eq!(parsed.call, fine);
}

#[test]
fn results_are_tool_responses() {
    let result = HERMES.render_result("Execution output of [search]:\nfoo", None);
    assert_eq!(result.role, ResultRole::User);
    assert_eq!(
        result.content,
        "<tool_response>\nExecution output of [search]:\nfoo\n</tool_response>"
    );
    assert_eq!(result.tool_call_id, None);
    let error = parse("nothing").unwrap_err();
    let message: Value = HERMES.render_error(&error).to_openai();
    assert_eq!(message["role"], "user");
    assert_eq!(message["content"], error.to_string());
    assert_eq!(HERMES.name(), "hermes");
}
