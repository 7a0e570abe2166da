//! `Toolbox` dispatch, `finish`, unknown tools, observations and schemas.

use crate::common;

use common::Workspace;
use serde_json::json;
use swerve_core::ToolCall;
use swerve_tools::{CONTINUE_MSG, ToolConfig, render_observation, tool_specs};

#[test]
fn toolbox_can_move_between_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<swerve_tools::Toolbox>();
    assert_send_sync::<swerve_tools::ToolResult>();
}

#[test]
fn finish_and_submit_end_the_episode() {
    let mut ws = Workspace::new();
    let result = ws.call("finish", &[("command", "submit"), ("result", "done it")]);
    assert_eq!(result.output, "<<<Finished>>>\n");
    assert_eq!(result.observation, "<<< Finished >>>");
    assert_eq!(result.error_code, "0");
    assert!(result.done && !result.is_error);
    assert_eq!(result.submission.as_deref(), Some("done it"));
    let result = ws.call("submit", &[]);
    assert!(result.done);
    assert_eq!(result.submission, None);
    assert_eq!(result.observation, "<<< Finished >>>");
}

#[test]
fn unknown_and_missing_tools() {
    let mut ws = Workspace::new();
    let result = ws.call("str_replace_editor", &[("command", "view")]);
    let expected = "Invalid Action: input action must be one of allowed actions \n Allowed actions: ['file_editor', 'search', 'execute_bash', 'finish'] \n Input action: str_replace_editor\n";
    assert_eq!(result.output, expected);
    assert_eq!(result.observation, expected);
    assert_eq!(result.error_code, "-1");
    assert!(result.is_error && !result.done);

    let result = ws.call("", &[]);
    assert_eq!(result.observation, CONTINUE_MSG);
    assert_eq!(
        CONTINUE_MSG,
        "\nYou forgot to use a function call in your response. \nYOU MUST USE A FUNCTION CALL IN EACH RESPONSE.\n\nIMPORTANT: YOU SHOULD NEVER ASK FOR HUMAN HELP.\n"
    );
    assert!(result.is_error);
}

#[test]
fn odd_argument_types_never_panic() {
    let mut ws = Workspace::new();
    ws.write("a.py", "x\n");
    let odd = [
        json!(null),
        json!({"a": 1}),
        json!([1]),
        json!(1.5),
        json!(-3),
        json!(true),
        json!(""),
    ];
    for value in odd {
        for key in [
            "command",
            "path",
            "view_range",
            "insert_line",
            "old_str",
            "new_str",
            "file_text",
            "concise",
        ] {
            for command in ["view", "create", "str_replace", "insert", "undo_edit"] {
                let call = ToolCall::new("file_editor")
                    .arg("command", command)
                    .arg("path", "/testbed/a.py")
                    .arg(key, value.clone());
                let result = ws.toolbox.call(&call);
                assert!(
                    result
                        .observation
                        .starts_with("Execution output of [file_editor]:\n")
                );
            }
        }
        for tool in ["search", "execute_bash", "finish"] {
            for key in [
                "search_term",
                "path",
                "regex",
                "python_only",
                "cmd",
                "result",
            ] {
                ws.toolbox
                    .call(&ToolCall::new(tool).arg(key, value.clone()));
            }
        }
    }
}

#[test]
fn observation_rendering() {
    assert_eq!(
        render_observation("search", "out\n", "0", 40),
        "Execution output of [search]:\nout\n"
    );
    assert_eq!(
        render_observation("finish", "<<<Finished>>>\n", "0", 40),
        "<<< Finished >>>"
    );
    assert_eq!(
        render_observation("execute_bash", "a\nb\nc\nd\ne\n", "0", 2),
        "Exit code: 0\nExecution output of [execute_bash]:\na\nb\n--------------------------------------------------\n<Observation truncated in middle for saving context>\n--------------------------------------------------\nd\ne"
    );
    assert_eq!(render_observation("", "x", "0", 40), CONTINUE_MSG);
}

#[test]
fn specs_follow_r2e_gym() {
    let specs = tool_specs(&ToolConfig::default());
    let names: Vec<&str> = specs
        .iter()
        .map(|spec| spec["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["file_editor", "search", "execute_bash", "finish"]);
    assert!(specs.iter().all(|spec| spec["type"] == "function"));
    let editor = &specs[0]["function"]["parameters"];
    assert_eq!(editor["required"], json!(["command", "path"]));
    assert_eq!(
        editor["properties"]["view_range"]["items"],
        json!({"type": "integer"})
    );
    assert_eq!(
        editor["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        [
            "command",
            "path",
            "file_text",
            "old_str",
            "new_str",
            "insert_line",
            "view_range",
            "concise"
        ]
    );
    assert_eq!(
        specs[2]["function"]["parameters"]["required"],
        json!(["cmd"])
    );
    assert!(
        specs[3]["function"]["description"]
            .as_str()
            .unwrap()
            .starts_with("\n\"A simple finish tool with a 'submit' command.\n\n\"\n\"Notes about")
    );
    let agile = tool_specs(&ToolConfig {
        bash_param: "command".into(),
        ..ToolConfig::default()
    });
    assert_eq!(
        agile[2]["function"]["parameters"]["required"],
        json!(["command"])
    );
    assert!(agile[2]["function"]["parameters"]["properties"]["command"].is_object());
}

#[test]
fn config_deserializes_from_partial_json() {
    let config: ToolConfig =
        serde_json::from_value(json!({"python_only": true, "bash_timeout_secs": 5})).unwrap();
    assert!(config.python_only);
    assert_eq!(config.bash_timeout_secs, 5);
    assert_eq!(config.max_response_len, 10_000);
    assert_eq!(
        config.blocked_commands,
        ["cd", "ipython", "jupyter", "pip", "nohup"]
    );
    let r2e = ToolConfig::r2e_gym();
    assert!(r2e.python_only && r2e.expand_tabs);
}

/// Answers `count_lines` calls itself, recording one subagent run per call.
struct LineCounter;

impl swerve_tools::CallInterceptor for LineCounter {
    fn intercept(
        &mut self,
        call: &ToolCall,
        fs: &swerve_tools::WorkspaceFs,
        config: &ToolConfig,
    ) -> Option<swerve_tools::ToolResult> {
        if call.name != "count_lines" {
            return None;
        }
        let path = call.arguments["path"].as_str().unwrap_or_default();
        let output = match fs
            .resolve(path)
            .and_then(|target| fs.read_text(&target, config.max_file_bytes))
        {
            Ok(text) => text.lines().count().to_string(),
            Err(error) => format!("ERROR: {error}"),
        };
        Some(swerve_tools::ToolResult {
            observation: render_observation("count_lines", &output, "0", 0),
            is_error: output.starts_with("ERROR"),
            output,
            error_code: "0".into(),
            done: false,
            submission: None,
        })
    }

    fn tool_specs(&self) -> Vec<serde_json::Value> {
        vec![json!({"type": "function", "function": {"name": "count_lines"}})]
    }

    fn take_subagents(&mut self) -> Vec<swerve_core::trajectory::SubTrajectory> {
        vec![swerve_core::trajectory::SubTrajectory {
            agent: "counter".into(),
            ..Default::default()
        }]
    }
}

#[test]
fn interceptors_add_their_tools_and_hand_on_their_subagent_runs() {
    let ws = Workspace::new();
    ws.write("a.txt", "1\n2\n3\n");
    let mut toolbox = swerve_tools::Toolbox::new(
        swerve_tools::WorkspaceFs::new(ws.root()),
        std::sync::Arc::new(swerve_testing::HostShell::new(ws.root())),
        ToolConfig::default(),
    )
    .with_interceptor(Box::new(LineCounter));
    let names: Vec<String> = toolbox
        .tool_specs()
        .iter()
        .map(|spec| spec["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        names,
        [
            "file_editor",
            "search",
            "execute_bash",
            "finish",
            "count_lines"
        ]
    );
    let counted = toolbox.call(&ToolCall::new("count_lines").arg("path", "/testbed/a.txt"));
    assert_eq!(counted.output, "3");
    assert_eq!(toolbox.take_subagents()[0].agent, "counter");
    assert!(toolbox.take_subagents().is_empty(), "handed over once");
    let native = toolbox.call(
        &ToolCall::new("file_editor")
            .arg("command", "view")
            .arg("path", "/testbed/a.txt"),
    );
    assert!(!native.is_error);
    assert!(toolbox.take_subagents().is_empty());
    let unknown = toolbox.call(&ToolCall::new("nothing"));
    assert!(
        unknown
            .output
            .contains("['file_editor', 'search', 'execute_bash', 'finish', 'count_lines']")
    );
}
