//! The world models behind the `Model` seam (scripted): simulated commands render exactly
//! as real `execute_bash` runs of the same output, failures become the failure
//! observation, and SWR votes average into a score.

use std::fs;
use std::sync::Arc;

use serde_json::json;
use swerve_core::{Task, ToolCall};
use swerve_llm::{Content, ModelError, ModelInput, ModelResponse, Role, Sampling, ScriptedModel};
use swerve_testing::HostShell;
use swerve_tools::{ToolConfig, ToolResult, Toolbox, WorkspaceFs};
use swerve_world::context::{ContextConfig, IssueInputs, Sources, SwrContext, TransitionContext};
use swerve_world::swt::{FEEDBACK_FAILED, render_failure};
use swerve_world::tokens::ApproxTokens;
use swerve_world::{ObservationStyle, SwtConfig, score, simulate_command};
use tempfile::TempDir;

/// What the real `execute_bash` returns for a command printing `stdout` and `stderr` and
/// exiting with `code`.
fn real_result(stdout: &str, stderr: &str, code: i32) -> ToolResult {
    let dir = TempDir::new().unwrap();
    fs::write(dir.path().join("out.txt"), stdout).unwrap();
    fs::write(dir.path().join("err.txt"), stderr).unwrap();
    let fs = WorkspaceFs::new(dir.path());
    let shell = Arc::new(HostShell::new(dir.path()));
    let mut toolbox = Toolbox::new(fs, shell, ToolConfig::default());
    let call = ToolCall::new("execute_bash")
        .arg("cmd", format!("cat out.txt; cat err.txt >&2; exit {code}"));
    toolbox.call(&call)
}

struct Fixture {
    workspace: TempDir,
    task: Task,
}

impl Fixture {
    fn new() -> Self {
        let workspace = TempDir::new().unwrap();
        fs::write(workspace.path().join("t.py"), "print('hi')\n").unwrap();
        let mut task = Task::new("o__r-1", "o/r", "abc", "It breaks.");
        task.patch = Some("--- a/t.py\n+++ b/t.py\n@@ -1 +1 @@\n-x\n+y\n".to_owned());
        task.fail_to_pass = vec!["t.py::test_a".to_owned()];
        Fixture { workspace, task }
    }

    fn transition(&self, command: &str) -> TransitionContext {
        let fs = WorkspaceFs::new(self.workspace.path());
        let sources = Sources {
            workspace: &fs,
            original: &fs,
            counter: &ApproxTokens,
        };
        let inputs = IssueInputs {
            task: &self.task,
            initial_analysis: None,
            agent_patch: "",
        };
        TransitionContext::assemble(&inputs, command, &sources, &ContextConfig::default())
    }

    fn evaluation(&self, agent_patch: &str) -> SwrContext {
        let fs = WorkspaceFs::new(self.workspace.path());
        let sources = Sources {
            workspace: &fs,
            original: &fs,
            counter: &ApproxTokens,
        };
        let inputs = IssueInputs {
            task: &self.task,
            initial_analysis: None,
            agent_patch,
        };
        SwrContext::assemble(
            &inputs,
            "pytest -rA t.py",
            &sources,
            &ContextConfig::default(),
        )
    }
}

fn reply(stdout: &str, stderr: &str, code: i32) -> String {
    json!({"stdout": stdout, "stderr": stderr, "exit_code": code}).to_string()
}

#[tokio::test]
async fn simulated_output_renders_exactly_as_a_real_run() {
    let fixture = Fixture::new();
    let context = fixture.transition("python t.py");
    let long: String = (1..=100).map(|i| format!("line {i}\n")).collect();
    let cases = [
        ("hi\n", "", 0),
        ("  padded  \n\n", "\n warning: x \n", 0),
        (
            "",
            "Traceback (most recent call last):\nValueError: bad\n",
            1,
        ),
        ("\x1b[31mred\x1b[0m\r\n", "", 3),
        (long.as_str(), "", 1),
    ];
    for (stdout, stderr, code) in cases {
        let model = ScriptedModel::from_texts([reply(stdout, stderr, code)]);
        let outcome = simulate_command(&model, &context, &SwtConfig::default(), 40).await;
        assert_eq!(outcome.error, None);
        assert!(!outcome.failed());
        assert_eq!(
            outcome.result,
            real_result(stdout, stderr, code),
            "{stdout:?} {stderr:?} {code}"
        );
        let parsed = outcome.reply.unwrap();
        assert_eq!((parsed.stdout.as_str(), parsed.exit_code), (stdout, code));
    }
}

#[tokio::test]
async fn sends_the_context_with_the_configured_sampling() {
    let fixture = Fixture::new();
    let context = fixture.transition("python t.py");
    let model = ScriptedModel::from_texts([reply("hi", "", 0)]);
    simulate_command(&model, &context, &SwtConfig::default(), 40).await;
    let requests = model.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].sampling.temperature, Some(0.0));
    let ModelInput::Chat { messages, tools } = &requests[0].input else {
        panic!("expected a chat request");
    };
    assert!(tools.is_empty());
    assert_eq!(messages[0].role, Role::System);
    assert_eq!(messages[1].role, Role::User);
    assert_eq!(
        messages[1].content,
        Some(Content::Text(context.user_prompt()))
    );
}

#[tokio::test]
async fn reads_replies_with_reasoning_fences_and_trailing_text() {
    let fixture = Fixture::new();
    let context = fixture.transition("python t.py");
    let text = format!(
        "<think>\nThe script prints hi.\n</think>\nHere you go:\n```json\n{}\n```\nDone.",
        r#"{"stdout": "hi\n", "stderr": ""}"#
    );
    let model = ScriptedModel::from_texts([text]);
    let outcome = simulate_command(&model, &context, &SwtConfig::default(), 40).await;
    let parsed = outcome.reply.unwrap();
    assert_eq!(parsed.reasoning.as_deref(), Some("The script prints hi."));
    assert_eq!(parsed.exit_code, 1, "a missing exit code is 1");
    assert!(!parsed.exit_code_given);
    assert_eq!(outcome.result.error_code, "Error: Exit code 1");

    // Reasoning returned separately by the server is kept.
    let response = ModelResponse {
        reasoning_content: Some("thinking".to_owned()),
        ..ModelResponse::text(reply("", "", 0))
    };
    let model = ScriptedModel::new([Ok(response)]);
    let outcome = simulate_command(&model, &context, &SwtConfig::default(), 40).await;
    assert_eq!(
        outcome.reply.unwrap().reasoning.as_deref(),
        Some("thinking")
    );
}

#[tokio::test]
async fn failures_become_the_failure_observation() {
    let fixture = Fixture::new();
    let context = fixture.transition("python t.py");
    let config = SwtConfig::default();
    let model = ScriptedModel::new([
        Err(ModelError::RateLimited { attempts: 3 }),
        Ok(ModelResponse::text("I cannot run commands.")),
        Ok(ModelResponse::text(
            r#"{"stdout": "x", "exit_code": "zero"}"#,
        )),
    ]);
    let expected = render_failure(ObservationStyle::Swerve, 40);
    assert_eq!(
        expected.observation,
        format!(
            "Exit code: -1\nExecution output of [execute_bash]:\nError executing command:\n\n[STDOUT]\n\n \n\n[STDERR]\n\n{FEEDBACK_FAILED}\n"
        )
    );
    let errors = [
        "the transition model call failed: model endpoint rate-limited the request (HTTP 429) on all 3 attempt(s)",
        "the transition model's reply cannot be used: the reply has no JSON object with `stdout`, `stderr` or `exit_code`",
        "the transition model's reply cannot be used: `exit_code` must be an integer, got \"zero\"",
    ];
    for error in errors {
        let outcome = simulate_command(&model, &context, &config, 40).await;
        assert!(outcome.failed());
        assert_eq!(outcome.error.as_deref(), Some(error));
        assert_eq!(outcome.result, expected);
        assert!(outcome.result.is_error);
        assert_eq!(outcome.reply, None);
    }
    // A script that ran out is a failure too, not a panic.
    let outcome = simulate_command(&model, &context, &config, 40).await;
    assert!(outcome.failed());
}

#[tokio::test]
async fn swe_world_style_uses_its_own_layout() {
    let fixture = Fixture::new();
    let context = fixture.transition("python t.py");
    let config = SwtConfig {
        style: ObservationStyle::SweWorld,
        ..SwtConfig::default()
    };
    let model = ScriptedModel::from_texts([reply("hi\n", "", 0)]);
    let outcome = simulate_command(&model, &context, &config, 40).await;
    assert_eq!(
        outcome.result.observation,
        "Exit code: 0\nExecution output of [execute_bash]:\n[STDOUT]\n\nhi\n\n\n[STDERR]\n\n"
    );
    let failure = render_failure(ObservationStyle::SweWorld, 40);
    assert_eq!(
        failure.output,
        "[STDOUT]\n\n\n\n[STDERR]\n\nFailed to get environment feedback!"
    );
    assert_eq!(failure.error_code, "-1");
}

#[tokio::test]
async fn swr_scores_the_mean_of_its_votes() {
    let fixture = Fixture::new();
    let context = fixture.evaluation("--- a/t.py\n+++ b/t.py\n@@ -1 +1 @@\n-x\n+y\n");
    let model = ScriptedModel::from_texts([
        "<think>F2P passes.</think>\n{\"test_report\": \"all pass\", \"reward\": 1}",
        "{\"test_report\": \"test_a fails\", \"reward\": 0}",
        "```json\n{\"reward\": \"1\", \"test_report\": [\"a\", \"b\"]}\n```",
    ]);
    let sampling = Sampling {
        temperature: Some(0.7),
        ..Sampling::default()
    };
    let result = score(&model, &context, 3, &sampling).await;
    assert_eq!(result.votes.len(), 3);
    assert!(result.failures.is_empty());
    assert!((result.mean.unwrap() - 2.0 / 3.0).abs() < 1e-12);
    assert!(!result.empty_patch);
    let rewards: Vec<u8> = result.votes.iter().map(|vote| vote.reply.reward).collect();
    assert_eq!(rewards, [1, 0, 1]);
    assert_eq!(
        result.votes[0].reply.reasoning.as_deref(),
        Some("F2P passes.")
    );
    assert_eq!(result.votes[2].reply.test_report, "a\nb");
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests.iter().all(|r| r.sampling.temperature == Some(0.7)));

    let model = ScriptedModel::new([
        Ok(ModelResponse::text("{\"reward\": 2}")),
        Err(ModelError::malformed("cut short")),
        Ok(ModelResponse::text(
            "{\"test_report\": \"ok\", \"reward\": 0}",
        )),
    ]);
    let result = score(&model, &context, 3, &sampling).await;
    assert_eq!(result.votes.len(), 1);
    assert_eq!(result.mean, Some(0.0));
    let errors: Vec<&str> = result.failures.iter().map(|f| f.error.as_str()).collect();
    assert_eq!(
        errors,
        [
            "the reward model's reply cannot be used: `reward` must be 0 or 1, got 2",
            "the reward model call failed: malformed model response: cut short",
        ]
    );
    assert!(result.failures[0].response.is_some());

    let model = ScriptedModel::from_texts(["no json"]);
    let result = score(&model, &context, 1, &sampling).await;
    assert_eq!(result.mean, None);
    assert_eq!(result.failures.len(), 1);

    let model = ScriptedModel::from_texts(Vec::<String>::new());
    let result = score(&model, &context, 0, &sampling).await;
    assert_eq!(result.mean, None);
}

#[tokio::test]
async fn an_empty_patch_scores_zero_without_a_call() {
    let fixture = Fixture::new();
    let context = fixture.evaluation("  \n");
    let model = ScriptedModel::from_texts(["{\"reward\": 1}"]);
    let result = score(&model, &context, 3, &Sampling::default()).await;
    assert!(result.empty_patch);
    assert_eq!(result.mean, Some(0.0));
    assert!(result.votes.is_empty());
    assert!(model.requests().is_empty());
}
