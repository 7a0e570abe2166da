//! Property tests: no parser panics on any input, what they return is taken from the input,
//! and `render_call` → `parse` gives the call back.

use proptest::prelude::*;
use serde_json::{Map, Value};
use swerve_core::ToolCall;
use swerve_tools::formats::{
    HermesFormat, ModelOutput, NativeFormat, NativeToolCall, Pick, ToolFormat, XmlFormat,
};

fn text_formats() -> [Box<dyn ToolFormat>; 3] {
    [
        Box::new(XmlFormat::new(Pick::First)),
        Box::new(XmlFormat::new(Pick::Last)),
        Box::new(HermesFormat),
    ]
}

/// Parses `text` with every text format (and the native one); a successful parse must
/// quote the reply.
fn check_text(text: &str) {
    let normalized = text.replace("\r\n", "\n");
    for format in text_formats() {
        match format.parse(&ModelOutput::from_text(text)) {
            Ok(parsed) => {
                assert!(normalized.contains(&parsed.call_text), "{text:?}");
                assert!(normalized.contains(&parsed.thought), "{text:?}");
                assert!(!parsed.call.name.is_empty());
            }
            Err(err) => assert!(!err.to_string().is_empty()),
        }
        let message = format.render_result(text, None);
        assert!(message.content.contains(text));
    }
    assert!(NativeFormat.parse(&ModelOutput::from_text(text)).is_err());
}

/// Pieces of real call syntax, to reach deep into the parsers.
fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("<function=execute_bash>".to_owned()),
        Just("<function = search >".to_owned()),
        Just("<function=".to_owned()),
        Just("<function=>".to_owned()),
        Just("</function>".to_owned()),
        Just("</func".to_owned()),
        Just("<parameter=cmd>".to_owned()),
        Just("<parameter=a b>".to_owned()),
        Just("<parameter=".to_owned()),
        Just("</parameter>".to_owned()),
        Just("<tool_call>".to_owned()),
        Just("</tool_call>".to_owned()),
        Just("</tool_".to_owned()),
        Just(r#"{"name": "search", "arguments": {"search_term": "x"}}"#.to_owned()),
        Just(r#"{"name": "search", "arguments": "{\"a\": 1}"}"#.to_owned()),
        Just(r#"{"name": "#.to_owned()),
        Just("<think>".to_owned()),
        Just("</think>".to_owned()),
        Just("```json\n".to_owned()),
        Just("```".to_owned()),
        Just("\r\n".to_owned()),
        Just("\n".to_owned()),
        Just("é€😀".to_owned()),
        "[ -~]{0,6}",
        "\\PC{0,3}",
    ]
}

fn soup() -> impl Strategy<Value = String> {
    prop::collection::vec(fragment(), 0..24).prop_map(|parts| parts.concat())
}

/// Plain text without tags, fences or surrounding whitespace.
fn plain(max: usize) -> impl Strategy<Value = String> {
    proptest::string::string_regex(&format!("[a-zA-Z0-9 _.,:;'\"(){{}}=+*/>&\\n-]{{0,{max}}}"))
        .expect("valid regex")
        .prop_map(|text| text.trim().to_owned())
}

fn name() -> impl Strategy<Value = String> {
    "[a-z][a-z_]{0,11}"
}

fn json_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<String>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<bool>().prop_map(Value::from),
        Just(Value::Null),
        prop::collection::vec(any::<i32>(), 0..4).prop_map(Value::from),
    ]
}

/// `content` (a thought and a call block) as models garble it: CRLF line ends, the call
/// in a code fence with prose after it, the closing tag cut or cut short.
fn noisy_variants(thought: &str, content: &str, closing: &str) -> Vec<String> {
    let call = content.strip_prefix(thought).unwrap();
    let cut = content.strip_suffix(closing).unwrap();
    vec![
        content.to_owned(),
        content.replace('\n', "\r\n"),
        format!(
            "{thought}\n```xml\n{}\n```\nWaiting for the result.",
            call.trim()
        ),
        format!("{content}\nWaiting for the result."),
        cut.to_owned(),
        format!("{cut}{}", &closing[..3]),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn arbitrary_text_never_panics(text in any::<String>()) {
        check_text(&text);
    }

    #[test]
    fn call_syntax_soup_never_panics(text in soup()) {
        check_text(&text);
    }

    #[test]
    fn arbitrary_native_calls_never_panic(
        calls in prop::collection::vec(
            (any::<Option<String>>(), any::<String>(), any::<String>()),
            0..4,
        ),
        json_like in "[\\[\\]{}\":, a-z0-9\\\\]{0,40}",
        text in any::<String>(),
    ) {
        let mut tool_calls: Vec<NativeToolCall> = calls
            .into_iter()
            .map(|(id, name, arguments)| NativeToolCall { id, name, arguments })
            .collect();
        tool_calls.push(NativeToolCall { id: None, name: "search".into(), arguments: json_like });
        for skip in 0..tool_calls.len() {
            let output = ModelOutput { text: text.clone(), tool_calls: tool_calls[skip..].to_vec() };
            match NativeFormat.parse(&output) {
                Ok(parsed) => {
                    prop_assert_eq!(&parsed.call.name, &tool_calls[skip].name);
                    prop_assert!(parsed.call_id.is_some());
                    prop_assert_eq!(parsed.note.is_some(), tool_calls.len() - skip > 1);
                }
                Err(err) => prop_assert!(!err.to_string().is_empty()),
            }
        }
    }

    #[test]
    fn xml_round_trip(
        thought in plain(60),
        name in name(),
        arguments in prop::collection::vec((name(), plain(40)), 0..5),
    ) {
        let call = arguments
            .into_iter()
            .fold(ToolCall::new(name), |call, (key, value)| call.arg(key, value));
        for pick in [Pick::First, Pick::Last] {
            let format = XmlFormat::new(pick);
            let content = format.render_call(&thought, &call, None).content;
            for noisy in noisy_variants(&thought, &content, "</function>") {
                let parsed = format.parse(&ModelOutput::from_text(noisy.clone())).unwrap();
                prop_assert_eq!(&parsed.call, &call, "{:?}", noisy);
                prop_assert_eq!(&parsed.thought, &thought, "{:?}", noisy);
            }
        }
    }

    #[test]
    fn hermes_round_trip(
        thought in plain(60),
        name in name(),
        arguments in prop::collection::vec((any::<String>(), json_value()), 0..5),
    ) {
        let arguments: Map<String, Value> = arguments.into_iter().collect();
        let call = ToolCall { name, arguments };
        let message = HermesFormat.render_call(&thought, &call, None);
        // Values holding the block tags or reasoning tags cannot be written in this format.
        prop_assume!(message.content.matches("tool_call>").count() == 2 && !message.content.contains("think>"));
        for noisy in noisy_variants(&thought, &message.content, "</tool_call>") {
            let parsed = HermesFormat.parse(&ModelOutput::from_text(noisy.clone())).unwrap();
            prop_assert_eq!(&parsed.call, &call, "{:?}", noisy);
            prop_assert_eq!(&parsed.thought, &thought, "{:?}", noisy);
        }
    }

    #[test]
    fn native_round_trip(
        thought in any::<String>(),
        name in "\\PC*[a-z]\\PC*",
        id in any::<Option<String>>(),
        arguments in prop::collection::vec((any::<String>(), json_value()), 0..5),
    ) {
        let call = ToolCall { name, arguments: arguments.into_iter().collect() };
        let message = NativeFormat.render_call(&thought, &call, id.as_deref());
        let output = ModelOutput { text: message.content, tool_calls: message.tool_calls };
        let parsed = NativeFormat.parse(&output).unwrap();
        prop_assert_eq!(&parsed.call, &call);
        prop_assert_eq!(parsed.thought, thought.trim());
        prop_assert_eq!(parsed.call_id, Some(id.unwrap_or_else(|| "call_0".to_owned())));
    }
}

/// Long degenerate replies (a model stuck repeating a tag) are read in linear time; this
/// took half a minute when each unclosed block searched the rest of the text again.
#[test]
fn degenerate_repetition_is_fast() {
    let units = [
        "<function=a>",
        "<tool_call>",
        "<function=a><parameter=x>",
        "</think>",
        "<parameter=x>y</parameter>",
    ];
    for unit in units {
        let text = unit.repeat(200_000 / unit.len());
        check_text(&text);
        check_text(&format!(
            "<function=a>{text}</function><tool_call>{text}</tool_call>"
        ));
    }
    let error = XmlFormat::new(Pick::First)
        .parse(&ModelOutput::from_text(
            "<function=a></function><function=b></function>".repeat(1000),
        ))
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "Your response contains 2000 different function calls (a, b, a, b, a, …), but only one call per response is allowed. Reply again with exactly one <function=NAME>…</function> block."
    );
}
