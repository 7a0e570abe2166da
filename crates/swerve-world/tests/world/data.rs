//! The initial analysis request and reply, the training samples recorded from real runs,
//! and the fidelity metrics, on constructed cases with known answers.

use proptest::prelude::*;
use swerve_core::Task;
use swerve_llm::{ModelInput, Role, ScriptedModel};
use swerve_tools::WorkspaceFs;
use swerve_world::analysis::{Analysis, AnalysisConfig, generate_analysis, parse_analysis};
use swerve_world::context::{ContextConfig, IssueInputs, Sources, SwrContext, TransitionContext};
use swerve_world::fidelity::{CommandResult, SwrFidelity, SwtFidelity, output_similarity};
use swerve_world::samples::{RealGrade, SwrSample, SwtSample, WorldSample, test_report};
use swerve_world::tokens::{ApproxTokens, TokenCounter};

fn task() -> Task {
    let mut task = Task::new("o__r-1", "o/r", "abc", "Dividing by zero crashes.");
    task.hints_text = Some("Return None instead.".to_owned());
    task.patch = Some("--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-x\n+y\n".to_owned());
    task.test_patch = Some("--- a/t.py\n+++ b/t.py\n@@ -1 +1 @@\n-a\n+b\n".to_owned());
    task.fail_to_pass = vec!["t.py::test_zero".to_owned()];
    task.pass_to_pass = vec!["t.py::test_one".to_owned()];
    task
}

fn result(stdout: &str, stderr: &str, exit_code: i32) -> CommandResult {
    CommandResult {
        stdout: stdout.to_owned(),
        stderr: stderr.to_owned(),
        exit_code,
    }
}

/// The initial analysis of [`task`] by `model`, with the default settings.
async fn analyse(model: &ScriptedModel) -> Result<Analysis, String> {
    generate_analysis(
        model,
        &task(),
        &ContextConfig::default(),
        &AnalysisConfig::default(),
        &ApproxTokens,
    )
    .await
}

#[tokio::test]
async fn the_analysis_is_asked_from_every_part_of_the_task_and_read_after_reasoning() {
    let model = ScriptedModel::from_texts(["<think>hmm</think>\n- the bug\n- the fix\n"]);
    let analysis = analyse(&model).await.unwrap();
    assert_eq!(analysis.text, "- the bug\n- the fix");
    let requests = model.requests();
    let ModelInput::Chat { messages, .. } = &requests[0].input else {
        panic!("a chat request");
    };
    let user = messages[1].text();
    for part in [
        "o/r",
        "Dividing by zero crashes.",
        "Return None instead.",
        "+y",
        "+b",
        "- t.py::test_zero",
        "- t.py::test_one",
    ] {
        assert!(user.contains(part), "{part} missing from {user}");
    }
    assert_eq!(messages[0].role, Role::System);

    let empty = ScriptedModel::from_texts(["<think>only thoughts</think>  "]);
    let error = analyse(&empty).await.unwrap_err();
    assert_eq!(
        error,
        "the analysis model's reply cannot be used: the reply is empty"
    );
    let none = ScriptedModel::from_texts(Vec::<String>::new());
    let error = analyse(&none).await.unwrap_err();
    assert!(
        error.starts_with("the analysis model call failed"),
        "{error}"
    );
}

#[test]
fn samples_end_with_the_real_answer_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let fs = WorkspaceFs::new(dir.path());
    let sources = Sources {
        workspace: &fs,
        original: &fs,
        counter: &ApproxTokens,
    };
    let task = task();
    let inputs = IssueInputs {
        task: &task,
        initial_analysis: Some("- the bug"),
        agent_patch: "",
    };
    let config = ContextConfig::default();
    let transition = TransitionContext::assemble(&inputs, "python t.py", &sources, &config);
    let swt = SwtSample::new("o__r-1__0", transition.clone(), result("out\n", "err\n", 3));
    assert_eq!(swt.messages.len(), 3);
    assert_eq!(swt.messages[..2], transition.messages()[..]);
    let target: serde_json::Value = serde_json::from_str(&swt.messages[2].text()).unwrap();
    assert_eq!(
        target,
        serde_json::json!({"stdout": "out\n", "stderr": "err\n", "exit_code": 3})
    );
    // The target parses as a transition model's reply.
    let parsed = swerve_world::parse_swt_reply(&swt.messages[2].text()).unwrap();
    assert_eq!((parsed.stdout.as_str(), parsed.exit_code), ("out\n", 3));

    let evaluation = SwrContext::assemble(&inputs, "pytest -rA t.py", &sources, &config);
    let swr = SwrSample::new(
        "o__r-1__0",
        evaluation,
        RealGrade {
            reward: 1,
            test_report: "2 passed".to_owned(),
        },
    );
    let parsed = swerve_world::parse_swr_reply(&swr.messages[2].text()).unwrap();
    assert_eq!(
        (parsed.reward, parsed.test_report.as_str()),
        (1, "2 passed")
    );

    for sample in [WorldSample::Swt(swt), WorldSample::Swr(swr)] {
        let line = serde_json::to_string(&sample).unwrap();
        let back: WorldSample = serde_json::from_str(&line).unwrap();
        assert_eq!(back, sample);
        assert_eq!(back.instance_id(), "o__r-1");
        let kind = serde_json::from_str::<serde_json::Value>(&line).unwrap()["kind"].clone();
        assert!(kind == "swt" || kind == "swr", "{kind}");
    }
}

#[test]
fn test_reports_are_cut_where_the_tests_start() {
    let pytest =
        "+ git apply\nnoise\n============ test session starts ============\nt.py ..\n2 passed\n";
    assert_eq!(
        test_report(pytest, 1000, &ApproxTokens),
        "============ test session starts ============\nt.py ..\n2 passed"
    );
    let marked = "+ git apply\n+ : '>>>>> Start Test Output'\ntest_a ... ok\nOK\n+ : '>>>>> End Test Output'\n+ git checkout\n";
    assert_eq!(
        test_report(marked, 1000, &ApproxTokens),
        "test_a ... ok\nOK"
    );
    assert_eq!(test_report("plain log\n", 1000, &ApproxTokens), "plain log");
    let long = "x".repeat(10_000);
    assert!(ApproxTokens.count(&test_report(&long, 100, &ApproxTokens)) <= 100);
}

#[test]
fn swt_fidelity_on_a_known_case() {
    let pairs = [
        // Same output, same code.
        (result("a\nb\n", "", 0), result("a\nb\n", "", 0)),
        // Same code, half the lines: real a b c d, simulated a b → LCS 2, 2*2/(5+3).
        (result("a\nb\nc\nd\n", "", 1), result("a\nb\n", "", 1)),
        // Both fail, different codes, nothing in common.
        (result("x\n", "", 2), result("y\n", "", 1)),
        // Success predicted as failure.
        (result("", "", 0), result("", "boom", 1)),
    ];
    let fidelity = SwtFidelity::of(&pairs);
    assert_eq!(fidelity.commands, 4);
    assert_eq!(fidelity.exit_code_agreement, Some(0.5));
    assert_eq!(fidelity.success_agreement, Some(0.75));
    assert_eq!(fidelity.exact_output, Some(0.25));
    // Outputs are the lines of stdout, then those of stderr.
    let second = 2.0 * 2.0 / (4.0 + 2.0);
    let (third, fourth) = (0.0, 0.0);
    let expected = (1.0 + second + third + fourth) / 4.0;
    assert!(
        (fidelity.output_similarity.unwrap() - expected).abs() < 1e-12,
        "{fidelity:?}"
    );
    assert_eq!(SwtFidelity::of(&[]).exit_code_agreement, None);
}

#[test]
fn swr_fidelity_on_a_known_case() {
    // (predicted, real): TP 3, FP 1, TN 4, FN 2.
    let mut pairs = vec![(true, true); 3];
    pairs.push((true, false));
    pairs.extend([(false, false); 4]);
    pairs.extend([(false, true); 2]);
    let fidelity = SwrFidelity::of(&pairs);
    assert_eq!(
        (
            fidelity.true_positives,
            fidelity.false_positives,
            fidelity.true_negatives,
            fidelity.false_negatives
        ),
        (3, 1, 4, 2)
    );
    assert_eq!(fidelity.accuracy, Some(0.7));
    assert_eq!(fidelity.precision, Some(0.75));
    assert_eq!(fidelity.recall, Some(0.6));
    let f1 = 2.0 * 0.75 * 0.6 / (0.75 + 0.6);
    assert!((fidelity.f1.unwrap() - f1).abs() < 1e-12);
    // Nothing predicted resolved: precision is undefined, recall 0.
    let none = SwrFidelity::of(&[(false, true), (false, false)]);
    assert_eq!(
        (none.precision, none.recall, none.f1),
        (None, Some(0.0), None)
    );
    assert_eq!(SwrFidelity::of(&[]).accuracy, None);
}

proptest! {
    #[test]
    fn similarity_is_a_symmetric_ratio(a in "[ab\n]{0,40}", b in "[ab\n]{0,40}") {
        let forward = output_similarity(&a, &b);
        prop_assert!((0.0..=1.0).contains(&forward));
        prop_assert!((forward - output_similarity(&b, &a)).abs() < 1e-12);
        prop_assert_eq!(output_similarity(&a, &a), 1.0);
    }

    #[test]
    fn analysis_and_report_readers_never_panic(text in any::<String>(), budget in 0usize..100) {
        let _ = parse_analysis(&text);
        let report = test_report(&text, budget, &ApproxTokens);
        prop_assert!(ApproxTokens.count(&report) <= budget);
    }
}
