//! Tool-call parsing: R2E-Gym XML and JSON, serialization, and property tests.

use proptest::prelude::*;
use serde_json::{Value, json};
use swerve_core::ToolCall;
use swerve_tools::{ParseError, first_call_block, parse_tool_call, parse_xml, to_xml};

#[test]
fn r2e_gym_example() {
    let text = "I will look at the file.\n<function=file_editor>\n  <parameter=command>view</parameter>\n  <parameter=path>./sympy/tensor/array/dense_ndim_array.py</parameter>\n  <parameter=concise>True</parameter>\n</function>";
    let call = parse_tool_call(text).unwrap();
    assert_eq!(
        call,
        ToolCall::new("file_editor")
            .arg("command", "view")
            .arg("path", "./sympy/tensor/array/dense_ndim_array.py")
            .arg("concise", "True")
    );
    assert_eq!(
        to_xml(&call),
        "<function=file_editor>\n  <parameter=command>view</parameter>\n  <parameter=path>./sympy/tensor/array/dense_ndim_array.py</parameter>\n  <parameter=concise>True</parameter>\n</function>"
    );
}

#[test]
fn xml_details_match_action_from_string() {
    // Values and keys are stripped; multi-line values keep inner newlines.
    let call = parse_xml(
        "<function = execute_bash >\n<parameter= cmd >\n  ls -la\n  pwd\n</parameter></function>",
    );
    assert_eq!(
        call,
        ToolCall::new("execute_bash").arg("cmd", "ls -la\n  pwd")
    );
    // A repeated key keeps its first position and last value.
    let call = parse_xml(
        "<function=f><parameter=a>1</parameter><parameter=b>2</parameter><parameter=a>3</parameter></function>",
    );
    assert_eq!(call.arguments.keys().collect::<Vec<_>>(), ["a", "b"]);
    assert_eq!(call.arguments["a"], "3");
    // No function tag: empty name, which parse_tool_call reports.
    assert_eq!(parse_xml("just thinking").name, "");
    assert_eq!(
        parse_tool_call("just thinking"),
        Err(ParseError::NoToolCall)
    );
    assert_eq!(
        parse_tool_call("<function=></function>"),
        Err(ParseError::MissingName)
    );
    // The first complete block wins; a bare call without a closing tag is still read.
    let two = "<function=a>\n</function> then <function=b>\n</function>";
    assert_eq!(first_call_block(two), Some("<function=a>\n</function>"));
    assert_eq!(parse_tool_call(two).unwrap().name, "a");
    assert_eq!(
        parse_tool_call("<function=search><parameter=search_term>x</parameter>").unwrap(),
        ToolCall::new("search").arg("search_term", "x")
    );
}

#[test]
fn json_calls_in_several_shapes() {
    let expected = ToolCall::new("search")
        .arg("search_term", "foo")
        .arg("path", "/testbed");
    for text in [
        r#"{"name": "search", "arguments": {"search_term": "foo", "path": "/testbed"}}"#,
        r#"{"name": "search", "arguments": "{\"search_term\": \"foo\", \"path\": \"/testbed\"}"}"#,
        r#"{"type": "function", "function": {"name": "search", "arguments": "{\"search_term\": \"foo\", \"path\": \"/testbed\"}"}}"#,
        r#"  {"function": "search", "parameters": {"search_term": "foo", "path": "/testbed"}}  "#,
    ] {
        assert_eq!(parse_tool_call(text).unwrap(), expected, "{text}");
    }
    let call =
        parse_tool_call(r#"{"name": "file_editor", "arguments": {"view_range": [1, 5]}}"#).unwrap();
    assert_eq!(call.arguments["view_range"], json!([1, 5]));
    assert_eq!(
        to_xml(&call),
        "<function=file_editor>\n  <parameter=view_range>[1,5]</parameter>\n</function>"
    );
    assert_eq!(
        parse_tool_call(r#"{"name": "finish"}"#).unwrap(),
        ToolCall::new("finish")
    );
    assert!(matches!(
        parse_tool_call("{not json"),
        Err(ParseError::Json(_))
    ));
    assert_eq!(
        parse_tool_call(r#"{"arguments": {}}"#),
        Err(ParseError::MissingName)
    );
    assert_eq!(
        parse_tool_call(r#"{"name": "x", "arguments": 3}"#),
        Err(ParseError::BadArguments)
    );
    assert_eq!(
        parse_tool_call(r#"{"name": "x", "arguments": "[1]"}"#),
        Err(ParseError::BadArguments)
    );
}

fn py_stripped(text: String) -> String {
    text.trim_matches(|c: char| c.is_whitespace() || ('\x1c'..='\x1f').contains(&c))
        .to_owned()
}

/// Strings rich in the parser's own syntax.
fn xmlish() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("<function=".to_owned()),
            Just("<parameter=".to_owned()),
            Just("</parameter>".to_owned()),
            Just("</function>".to_owned()),
            Just("{\"name\":".to_owned()),
            "[a-z =<>\n\"{}:,\\[\\]]{0,4}",
            any::<String>(),
        ],
        0..12,
    )
    .prop_map(|parts| parts.concat())
}

fn name() -> impl Strategy<Value = String> {
    any::<String>()
        .prop_map(py_stripped)
        .prop_filter("no tags", |name| {
            !name.is_empty() && !name.contains(['<', '>'])
        })
}

fn value() -> impl Strategy<Value = String> {
    any::<String>()
        .prop_map(py_stripped)
        .prop_filter("no closing tags", |value| {
            !value.contains("</parameter>") && !value.contains("</function>")
        })
}

proptest! {
    #[test]
    fn parsers_never_panic(text in prop_oneof![any::<String>(), xmlish()]) {
        let _ = parse_tool_call(&text);
        let _ = parse_xml(&text);
        let _ = first_call_block(&text);
    }

    #[test]
    fn xml_round_trips(
        function in name(),
        arguments in prop::collection::vec((name(), value()), 0..5),
    ) {
        let mut call = ToolCall::new(function);
        for (key, value) in arguments {
            call.arguments.insert(key, Value::String(value));
        }
        let xml = to_xml(&call);
        prop_assert_eq!(&parse_xml(&xml), &call);
        prop_assert_eq!(&parse_tool_call(&xml).unwrap(), &call);
    }

    #[test]
    fn json_round_trips(function in name(), arguments in prop::collection::vec((name(), value()), 0..5)) {
        let map: serde_json::Map<String, Value> =
            arguments.into_iter().map(|(key, value)| (key, Value::String(value))).collect();
        let call = ToolCall { name: function, arguments: map };
        let text = serde_json::to_string(&call).unwrap();
        prop_assert_eq!(parse_tool_call(&text).unwrap(), call);
    }
}

#[test]
fn content_parameters_keep_their_indentation() {
    let text = "<function=file_editor>\n<parameter=command>  insert </parameter>\n<parameter=new_str>\n    sign = 1\n    rest = 2\n</parameter>\n<parameter=old_str>    x = 1</parameter>\n</function>";
    let call = swerve_tools::parse_xml(text);
    assert_eq!(call.arguments["command"], "insert");
    assert_eq!(call.arguments["new_str"], "    sign = 1\n    rest = 2");
    assert_eq!(call.arguments["old_str"], "    x = 1");
}
