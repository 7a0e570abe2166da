//! `XmlFormat`: real R2E-Gym replies, noisy replies, exact error texts, rendering and
//! round trips.

use serde_json::{Map, Value, json};
use swerve_core::ToolCall;
use swerve_tools::formats::{
    FormatError, ModelOutput, ParsedResponse, Pick, ResultRole, ToolFormat, XmlFormat,
};
use swerve_tools::{CONTINUE_MSG, ToolConfig, tool_specs};

const FIRST: XmlFormat = XmlFormat { pick: Pick::First };
const LAST: XmlFormat = XmlFormat { pick: Pick::Last };

fn parse(format: &XmlFormat, text: &str) -> Result<ParsedResponse, FormatError> {
    format.parse(&ModelOutput::from_text(text))
}

fn call(name: &str, args: &[(&str, &str)]) -> ToolCall {
    args.iter()
        .fold(ToolCall::new(name), |call, &(key, value)| {
            call.arg(key, value)
        })
}

fn error_text(format: &XmlFormat, text: &str) -> String {
    parse(format, text).expect_err(text).to_string()
}

/// Real assistant turns (thought, then the action) from an R2E-Gym trajectory; the
/// expected calls were read with R2E-Gym's own regexes.
#[test]
fn real_r2e_gym_turns() {
    let turns: Vec<Value> =
        serde_json::from_str(include_str!("../fixtures/formats/r2e_gym_turns.json")).unwrap();
    assert_eq!(turns.len(), 5);
    for turn in &turns {
        let text = turn["text"].as_str().unwrap();
        let expected = ToolCall {
            name: turn["name"].as_str().unwrap().to_owned(),
            arguments: turn["arguments"].as_object().unwrap().clone(),
        };
        let thought = turn["thought"].as_str().unwrap();
        let action = text.rsplit_once("\n\n<function=").unwrap().1;
        let action = format!("<function={action}");
        let variants = [
            text.to_owned(),
            text.replace('\n', "\r\n"),
            format!("{thought}\n\n```xml\n{action}\n```\nI will wait for the output."),
            text.strip_suffix("</function>").unwrap().to_owned(),
            text.strip_suffix("tion>").unwrap().to_owned(),
        ];
        for (index, variant) in variants.iter().enumerate() {
            for format in [FIRST, LAST] {
                let parsed = parse(&format, variant)
                    .unwrap_or_else(|err| panic!("{} variant {index}: {err}", turn["source"]));
                assert_eq!(parsed.call, expected, "{} variant {index}", turn["source"]);
                assert_eq!(
                    parsed.thought, thought,
                    "{} variant {index}",
                    turn["source"]
                );
                assert_eq!(parsed.call_id, None);
                assert_eq!(parsed.note, None);
                if index < 3 {
                    assert_eq!(parsed.call_text, action);
                }
            }
        }
    }
}

#[test]
fn noisy_replies() {
    let bash_ls = call("execute_bash", &[("cmd", "ls -la")]);
    let cases: &[(&str, &str, &ToolCall, &str)] = &[
        (
            "prose around the call",
            "Let me list the files.\n<function=execute_bash>\n  <parameter=cmd>ls -la</parameter>\n</function>\nThe output will show the files.",
            &bash_ls,
            "Let me list the files.",
        ),
        (
            "spaces around = and the name",
            "<function = execute_bash >\n<parameter = cmd >\nls -la\n</parameter>\n</function>",
            &bash_ls,
            "",
        ),
        (
            "closing tag cut by a stop sequence",
            "Listing.\n<function=execute_bash>\n<parameter=cmd>ls -la</parameter>\n",
            &bash_ls,
            "Listing.",
        ),
        (
            "closing tag partly written",
            "<function=execute_bash><parameter=cmd>ls -la</parameter></funct",
            &bash_ls,
            "",
        ),
        (
            "cut closing tag in a closed fence",
            "```xml\n<function=execute_bash>\n<parameter=cmd>ls -la</parameter>\n```",
            &bash_ls,
            "",
        ),
        (
            "calls drafted in reasoning are not calls",
            "<think>\nMaybe <function=search><parameter=search_term>foo</parameter></function>, or just list.\n</think>\nListing instead.\n<function=execute_bash><parameter=cmd>ls -la</parameter></function>",
            &bash_ls,
            "<think>\nMaybe <function=search><parameter=search_term>foo</parameter></function>, or just list.\n</think>\nListing instead.",
        ),
        (
            "reasoning opened by the generation prompt",
            "Maybe search first.\n</think>\n\n<function=execute_bash><parameter=cmd>ls -la</parameter></function>",
            &bash_ls,
            "Maybe search first.\n</think>",
        ),
        (
            "SWE-AGILE layout",
            "<think>\nI should list the files.\n</think>\n<reasoning_digest>\nList the repository.\n</reasoning_digest>\n<function=execute_bash>\n<parameter=cmd>ls -la</parameter>\n</function>",
            &bash_ls,
            "<think>\nI should list the files.\n</think>\n<reasoning_digest>\nList the repository.\n</reasoning_digest>",
        ),
    ];
    for &(what, text, expected, thought) in cases {
        for format in [FIRST, LAST] {
            let parsed = parse(&format, text).unwrap_or_else(|err| panic!("{what}: {err}"));
            assert_eq!(&parsed.call, expected, "{what}");
            assert_eq!(parsed.thought, thought, "{what}");
        }
    }
}

#[test]
fn values_keep_their_text() {
    let text = "<function=file_editor>\n<parameter=command>create</parameter>\n<parameter=path>/testbed/a.py</parameter>\n<parameter=file_text>\nif a < b and c > d:\n    print('<parameter=x>', \"</think>\")\n</parameter>\n</function>";
    let parsed = parse(&FIRST, text).unwrap();
    assert_eq!(
        parsed.call,
        call(
            "file_editor",
            &[
                ("command", "create"),
                ("path", "/testbed/a.py"),
                (
                    "file_text",
                    "if a < b and c > d:\n    print('<parameter=x>', \"</think>\")"
                ),
            ]
        )
    );
    assert_eq!(parsed.call_text, text);
    // Same value twice is one value; empty calls are calls.
    let parsed = parse(
        &FIRST,
        "<function=search><parameter=search_term>x</parameter><parameter=search_term> x </parameter></function>",
    )
    .unwrap();
    assert_eq!(parsed.call, call("search", &[("search_term", "x")]));
    assert_eq!(
        parse(&FIRST, "<function=finish>\n</function>")
            .unwrap()
            .call,
        call("finish", &[])
    );
}

#[test]
fn identical_repeats_count_once_and_pick_decides() {
    let block = "<function=execute_bash>\n<parameter=cmd>pytest</parameter>\n</function>";
    let text = format!("Run the tests.\n{block}\nAgain:\n{block}");
    let first = parse(&FIRST, &text).unwrap();
    let last = parse(&LAST, &text).unwrap();
    assert_eq!(first.call, last.call);
    assert_eq!(first.call_text, block);
    assert_eq!(last.call_text, block);
    assert_eq!(first.thought, "Run the tests.");
    assert_eq!(last.thought, format!("Run the tests.\n{block}\nAgain:"));
}

#[test]
fn exact_error_texts() {
    let cases: &[(&str, &str)] = &[
        (
            "I think the bug is in utils.py. What should I do next?",
            CONTINUE_MSG,
        ),
        ("", CONTINUE_MSG),
        ("<function>execute_bash</function>", CONTINUE_MSG),
        (
            "<function=execute_bash><parameter=cmd>ls</parameter></function>\n<function=search><parameter=search_term>foo</parameter></function>",
            "Your response contains 2 different function calls (execute_bash, search), but only one call per response is allowed. Reply again with exactly one <function=NAME>…</function> block.",
        ),
        (
            "<function=execute_bash><parameter=cmd>ls</parameter></function>\n<function=execute_bash><parameter=cmd>pwd</parameter>",
            "Your response contains 2 different function calls (execute_bash, execute_bash), but only one call per response is allowed. Reply again with exactly one <function=NAME>…</function> block.",
        ),
        (
            "<function=execute_bash><parameter=cmd>ls</parameter>\n<function=execute_bash><parameter=cmd>ls</parameter></function>",
            "Your <function=execute_bash> block is not closed: a new <function=…> tag starts before its </function>. Reply again with exactly one complete <function=NAME>…</function> block.",
        ),
        (
            "I'll run <function=execute_bash> now:\n<function=execute_bash><parameter=cmd>ls</parameter></function>",
            "Your <function=execute_bash> block is not closed: a new <function=…> tag starts before its </function>. Reply again with exactly one complete <function=NAME>…</function> block.",
        ),
        (
            "<function=execute_bash>\n<parameter=cmd>ls -la\n</function>",
            "In your <function=execute_bash> call, <parameter=cmd> has no closing </parameter> tag. Write every argument as <parameter=KEY>VALUE</parameter> inside the <function=…>…</function> block.",
        ),
        (
            "<function=execute_bash>\nls -la\n</function>",
            "Your <function=execute_bash> call contains text outside <parameter=…> tags: \"ls -la\". Inside <function=…>…</function>, write only <parameter=KEY>VALUE</parameter> tags.",
        ),
        (
            "<function=execute_bash>{\"cmd\": \"ls\"}</function>",
            "Your <function=execute_bash> call contains text outside <parameter=…> tags: \"{\"cmd\": \"ls\"}\". Inside <function=…>…</function>, write only <parameter=KEY>VALUE</parameter> tags.",
        ),
        (
            "<function=file_editor><parameter=path>/a</parameter><parameter=path>/b</parameter></function>",
            "Your <function=file_editor> call gives <parameter=path> more than once, with different values. Give each parameter once.",
        ),
        (
            "<function=>\n<parameter=cmd>ls</parameter>\n</function>",
            "Your <function=…> tag has no tool name. Write <function=NAME>, where NAME is the tool to call.",
        ),
        (
            "<function=execute_bash\n<parameter=cmd>ls</parameter>\n</function>",
            "Your tag \"<function=execute_bash\n<parameter=cmd>\" is malformed: write <function=NAME> and <parameter=KEY>, where NAME and KEY use only letters, digits, '_', '-' and '.', and close each tag with '>'.",
        ),
        (
            "<function=execute_bash><parameter=the command>ls</parameter></function>",
            "Your tag \"<parameter=the command>\" is malformed: write <function=NAME> and <parameter=KEY>, where NAME and KEY use only letters, digits, '_', '-' and '.', and close each tag with '>'.",
        ),
    ];
    for &(text, expected) in cases {
        for format in [FIRST, LAST] {
            assert_eq!(error_text(&format, text), expected, "{text:?}");
        }
    }
    // Long stray text is shortened.
    let long = format!("<function=execute_bash>{}</function>", "x".repeat(200));
    assert!(error_text(&FIRST, &long).contains(&format!("\"{}…\"", "x".repeat(80))));
}

#[test]
fn renders_r2e_gym_style_docs() {
    let tools = vec![json!({
        "type": "function",
        "function": {
            "name": "finish",
            "description": "\nDescription: Finish the task.\n",
            "parameters": {
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "The command.", "enum": ["submit"]},
                    "result": {"description": "The result."},
                },
                "required": ["command"],
            },
        },
    })];
    let rendered = FIRST.render(&tools);
    assert_eq!(rendered.tools, None);
    let text = rendered.system_text.unwrap();
    let expected_head = "You have access to the following functions:\n\n---- BEGIN FUNCTION #1: finish ----\nDescription: Finish the task.\nParameters:\n  (1) command (string, required): The command.\nAllowed values: [`submit`]\n  (2) result (string, optional): The result.\n---- END FUNCTION #1 ----\n\nIf you choose to call a function ONLY reply in the following format with NO suffix:\n\n<function=example_function_name>\n";
    assert!(text.starts_with(expected_head), "{text}");
    assert!(text.ends_with("in above format) to solve the task.\n</IMPORTANT>"));

    let text = LAST
        .render(&tool_specs(&ToolConfig::default()))
        .system_text
        .unwrap();
    for name in ["file_editor", "search", "execute_bash", "finish"] {
        assert!(text.contains(&format!(": {name} ----\n")), "{name}");
    }
    assert!(text.contains("---- BEGIN FUNCTION #3: execute_bash ----\nDescription: Execute a bash command in the terminal.\n"));
    assert!(text.contains("  (1) command (string, required): The command to run. Allowed options are: `view`, `create`, `str_replace`, `insert`, `undo_edit`.\nAllowed values: [`view`, `create`, `str_replace`, `insert`, `undo_edit`]\n"));
    assert!(text.contains("  (6) insert_line (integer, optional): "));
}

#[test]
fn render_call_round_trips() {
    let calls = [
        call(
            "file_editor",
            &[
                ("command", "str_replace"),
                ("path", "/testbed/a.py"),
                ("old_str", "x = 1\n    y = 2"),
                ("new_str", "x = 1\n    y = 3"),
            ],
        ),
        call("finish", &[]),
    ];
    for format in [FIRST, LAST] {
        for expected in &calls {
            let message = format.render_call("Fix the constant.", expected, None);
            assert!(message.tool_calls.is_empty());
            assert!(
                message
                    .content
                    .starts_with("Fix the constant.\n\n<function=")
            );
            let parsed = parse(&format, &message.content).unwrap();
            assert_eq!(&parsed.call, expected);
            assert_eq!(parsed.thought, "Fix the constant.");
            assert_eq!(parsed.call_text, swerve_tools::to_xml(expected));
        }
    }
    // Non-string values come back as their JSON text, as R2E-Gym passes them.
    let typed = ToolCall::new("file_editor").arg("view_range", json!([1, 5]));
    let message = FIRST.render_call("", &typed, None);
    assert_eq!(
        message.content,
        "<function=file_editor>\n  <parameter=view_range>[1,5]</parameter>\n</function>"
    );
    let mut arguments = Map::new();
    arguments.insert("view_range".into(), json!("[1,5]"));
    assert_eq!(
        parse(&FIRST, &message.content).unwrap().call.arguments,
        arguments
    );
}

#[test]
fn results_and_errors_are_user_messages() {
    let result = FIRST.render_result("Execution output of [search]:\nfoo", None);
    assert_eq!(result.role, ResultRole::User);
    assert_eq!(
        result.to_openai(),
        json!({"role": "user", "content": "Execution output of [search]:\nfoo"})
    );
    let error = parse(&FIRST, "no call").unwrap_err();
    let message = FIRST.render_error(&error);
    assert_eq!(message.role, ResultRole::User);
    assert_eq!(message.content, CONTINUE_MSG);
    assert_eq!(FIRST.name(), "xml");
    assert_eq!(LAST.name(), "xml_last");
}
