//! The engine over a real repository and real processes: each scaffold's shell semantics
//! (fresh process or persistent session, variables, merged streams, timeouts), a recorded
//! mini-swe-agent trajectory replayed to its submission byte for byte, and property tests
//! of everything that reads foreign files (no panic on any input; errors name the file and
//! field).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use proptest::prelude::*;
use serde_json::{Value, json};
use swerve_core::ToolCall;
use swerve_core::trajectory::import::{detect_and_import, mini_swe_agent};
use swerve_core::trajectory::{Step, Trajectory};
use swerve_replay::{
    Action, Recorded, ReplayReport, Replayer, Scaffold, ScaffoldShell, StepOutcome,
    TrajectoryReport, hazards,
};
use swerve_testing::HostShell;
use swerve_tools::{ToolConfig, Toolbox, WorkspaceFs};

/// A git repository with one commit, in a temporary directory.
fn repository() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let run = |command: &str| {
        let status = Command::new("sh")
            .args(["-c", command])
            .current_dir(dir.path())
            .status()
            .unwrap();
        assert!(status.success(), "{command}");
    };
    std::fs::create_dir(dir.path().join("pkg")).unwrap();
    std::fs::write(
        dir.path().join("pkg/core.py"),
        "def answer():\n    return 41\n",
    )
    .unwrap();
    run("git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm base");
    dir
}

/// Replays `trajectory` over `root` (the repository, also its path in the "sandbox").
fn replay(trajectory: &Trajectory, root: &Path) -> TrajectoryReport {
    let scaffold = Scaffold::of(trajectory).unwrap();
    let semantics = scaffold.semantics(trajectory);
    let mount = root.to_str().unwrap();
    let (shell, last) =
        ScaffoldShell::wrap(Arc::new(HostShell::new(root)), semantics.clone(), mount);
    let tools = scaffold.tool_config(&ToolConfig::default(), &semantics);
    let mut toolbox = Toolbox::new(WorkspaceFs::with_sandbox_root(root, mount), shell, tools);
    let run = Replayer::new(scaffold, &semantics, &mut toolbox, &last, mount).replay(trajectory);
    let patch = run.submission.clone().unwrap_or_default();
    TrajectoryReport::of(
        "t",
        ("task", "owner/repo"),
        &run,
        trajectory.outcome.as_ref().map(|o| o.patch.as_str()),
        &patch,
    )
}

/// A mini-swe-agent document whose actions are `commands`, its observations `outputs`
/// (`(code, text)`), its submission `submission`, its working directory `cwd`.
fn mini(commands: &[&str], outputs: &[(i32, &str)], submission: &str, cwd: &str) -> Value {
    let mut messages = vec![
        json!({"role": "system", "content": "sys"}),
        json!({"role": "user", "content": "task"}),
    ];
    for (command, (code, text)) in commands.iter().zip(outputs) {
        messages.push(json!({"role": "assistant", "content": format!("THOUGHT: go\n\n```bash\n{command}\n```")}));
        let observation = if text.starts_with("COMPLETE_TASK") {
            submission.to_owned()
        } else {
            format!("<returncode>{code}</returncode>\n<output>\n{text}</output>")
        };
        messages.push(json!({"role": "user", "content": observation}));
    }
    json!({
        "instance_id": "owner__repo-1",
        "trajectory_format": "mini-swe-agent-1",
        "messages": messages,
        "info": {
            "exit_status": "Submitted",
            "submission": submission,
            "config": {"environment": {"cwd": cwd, "timeout": 5, "env": {"PAGER": "cat"}}},
        },
    })
}

#[test]
fn a_mini_swe_agent_run_replays_to_its_submission_byte_for_byte() {
    let repo = repository();
    let submission = "diff --git a/pkg/core.py b/pkg/core.py\nindex 1083d26..eca386f 100644\n--- a/pkg/core.py\n+++ b/pkg/core.py\n@@ -1,2 +1,2 @@\n def answer():\n-    return 41\n+    return 42\n";
    let document = mini(
        &[
            "cat pkg/core.py",
            "cd pkg && export FOO=1 && echo moved",
            "pwd && echo \"FOO=$FOO PAGER=$PAGER\" && echo err >&2 && echo out",
            "sed -i 's/41/42/' pkg/core.py && python3 -c 'import time; print(time.time())'",
            "grep -q nothing pkg/core.py",
            "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached",
        ],
        &[
            (0, "def answer():\n    return 41\n"),
            (0, "moved\n"),
            // The recorded container: a fresh process at the root, the scaffold's
            // variables, stderr interleaved.
            (0, "/testbed\nFOO= PAGER=cat\nerr\nout\n"),
            (0, "1732000000.123\n"),
            (1, ""),
            (0, "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"),
        ],
        submission,
        "/testbed",
    );
    let trajectory = mini_swe_agent(&document).unwrap();
    // The recorded `/testbed` stands for the replay's repository directory.
    let report = replay(&trajectory, repo.path());
    let outcomes: Vec<StepOutcome> = report.steps.iter().map(|step| step.outcome).collect();
    assert_eq!(
        outcomes,
        [
            StepOutcome::Agrees,
            StepOutcome::Agrees,
            StepOutcome::Agrees,
            StepOutcome::NotReplayable,
            StepOutcome::Agrees,
            StepOutcome::Agrees,
        ],
        "{:#?}",
        report
    );
    assert_eq!(report.steps[3].hazards, [swerve_replay::Hazard::WallClock]);
    assert!(report.first_divergence.is_none());
    assert!(report.patch.as_ref().unwrap().equal, "{report:#?}");
    assert_eq!(report.steps[4].recorded_code, Some(1));
    assert_eq!(report.steps[4].replayed_code, Some(1));
}

#[test]
fn a_persistent_session_carries_cwd_and_exports_and_a_fresh_process_does_not() {
    let repo = repository();
    let root = repo.path().to_str().unwrap();
    let commands = ["cd pkg && export FOO=bar", "pwd; echo \"[$FOO]\""];
    let semantics_of = |scaffold: Scaffold| {
        let mut trajectory = mini_swe_agent(&mini(&[], &[], "", root)).unwrap();
        if scaffold != Scaffold::MiniSweAgent {
            trajectory
                .header
                .extra
                .insert("imported_from".into(), json!({"format": scaffold.name()}));
        }
        scaffold.semantics(&trajectory)
    };
    let run = |scaffold: Scaffold| {
        let (shell, _) = ScaffoldShell::wrap(
            Arc::new(HostShell::new(repo.path())),
            semantics_of(scaffold),
            root,
        );
        let mut output = String::new();
        for command in commands {
            output = shell
                .run(command, Duration::from_secs(5))
                .unwrap()
                .stdout_text();
        }
        output
    };
    assert_eq!(run(Scaffold::MiniSweAgent), format!("{root}\n[]\n"));
    assert_eq!(run(Scaffold::SweAgent), format!("{root}/pkg\n[bar]\n"));
    // The session's state lives under .git/: the working tree stays clean.
    let status = Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(repo.path())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&status.stdout), "");
}

#[test]
fn a_recorded_timeout_agrees_with_a_replayed_one() {
    let repo = repository();
    let root = repo.path().to_str().unwrap();
    let mut document = mini(&["sleep 30"], &[(0, "")], "", root);
    document["messages"][3]["content"] =
        "The last command <command>sleep 30</command> timed out and has been killed.\nThe output of the command was:\n <output>\n\n</output>".into();
    document["info"]["config"]["environment"]["timeout"] = 1.into();
    let trajectory = mini_swe_agent(&document).unwrap();
    let report = replay(&trajectory, repo.path());
    assert_eq!(report.steps[0].code_agrees, Some(true), "{report:#?}");
}

/// The shared samples, kept as the importers' fixtures.
fn sample(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../swerve-core/tests/fixtures/trajectories")
        .join(name)
}

#[test]
fn every_shared_sample_yields_its_actions_through_its_scaffolds_tools() {
    let cases = [
        (
            "mini-swe-agent.pytest-dev__pytest-7432.traj.json",
            Scaffold::MiniSweAgent,
        ),
        ("swe-agent.pydicom__pydicom-1458.traj", Scaffold::SweAgent),
        ("r2e-gym.swe-rebench.jsonl", Scaffold::R2eGym),
        ("openhands.output.jsonl", Scaffold::OpenHands),
    ];
    for (file, scaffold) in cases {
        let trajectory = detect_and_import(sample(file)).unwrap().remove(0);
        assert_eq!(Scaffold::of(&trajectory), Some(scaffold), "{file}");
        let semantics = scaffold.semantics(&trajectory);
        let root = semantics.recorded_root.clone();
        assert!(root.is_some(), "{file}: no recorded repository directory");
        let actions: Vec<Action> = trajectory
            .steps
            .iter()
            .map(|step| Action::of(step, scaffold, root.as_deref(), "/testbed"))
            .collect();
        let shells = actions
            .iter()
            .filter(|a| matches!(a, Action::Shell(_)))
            .count();
        assert!(shells > 0, "{file}: no shell action");
        for (step, action) in trajectory.steps.iter().zip(&actions) {
            // The recorded directory is the replay's in every action.
            if let Some(root) = root.as_deref().filter(|root| *root != "/testbed") {
                assert!(!action.text().contains(root), "{file}: {}", action.text());
            }
            let recorded = Recorded::of(step, scaffold, root.as_deref(), "/testbed");
            if scaffold == Scaffold::MiniSweAgent && matches!(action, Action::Shell(_)) {
                let last = step.index + 1 == trajectory.steps.len();
                assert!(
                    last || recorded.return_code.is_some(),
                    "{file} step {}",
                    step.index
                );
            }
        }
        match scaffold {
            Scaffold::SweAgent => assert!(
                actions
                    .iter()
                    .any(|a| matches!(a, Action::Tool(call) if call.name == "edit")),
                "{file}"
            ),
            Scaffold::R2eGym | Scaffold::OpenHands => assert!(
                actions
                    .iter()
                    .any(|a| matches!(a, Action::Tool(call) if call.name == "str_replace_editor")),
                "{file}"
            ),
            _ => {}
        }
    }
    // An empty report aggregates to nothing.
    assert_eq!(ReplayReport::of(Vec::new()).total.trajectories, 0);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn reading_any_step_never_panics(
        observation in ".{0,400}",
        command in ".{0,200}",
        name in "[a-z_]{0,20}",
        exit in any::<i64>(),
    ) {
        let mut step = Step::new(0, "reply");
        step.observation = Some(observation.clone());
        step.tool_call = Some(ToolCall::new(name).arg("command", command.as_str()));
        step.extra.insert(
            "observation_event".into(),
            json!({"extras": {"metadata": {"exit_code": exit}}}),
        );
        for scaffold in [Scaffold::Swerve, Scaffold::MiniSweAgent, Scaffold::SweAgent, Scaffold::R2eGym, Scaffold::OpenHands] {
            let action = Action::of(&step, scaffold, Some("/work"), "/testbed");
            let _ = action.text();
            let _ = Recorded::of(&step, scaffold, Some("/work"), "/testbed");
        }
        let _ = hazards(&command);
        let wrapped = format!("<returncode>{exit}</returncode>\n<output>\n{observation}</output>");
        step.observation = Some(wrapped);
        let recorded = Recorded::of(&step, Scaffold::MiniSweAgent, None, "/testbed");
        prop_assert_eq!(recorded.output, observation);
    }

    #[test]
    fn a_damaged_sample_is_an_error_naming_the_file_never_a_panic(
        cut in 0usize..1000,
        byte in any::<u8>(),
        which in 0usize..4,
    ) {
        let names = [
            "mini-swe-agent.pytest-dev__pytest-7432.traj.json",
            "swe-agent.pydicom__pydicom-1458.traj",
            "r2e-gym.swe-rebench.jsonl",
            "openhands.output.jsonl",
        ];
        let mut bytes = std::fs::read(sample(names[which])).unwrap();
        let at = cut * bytes.len() / 1000;
        bytes[at] = byte;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(names[which]);
        std::fs::write(&path, &bytes).unwrap();
        match detect_and_import(&path) {
            Ok(trajectories) => {
                for trajectory in &trajectories {
                    if let Some(scaffold) = Scaffold::of(trajectory) {
                        let semantics = scaffold.semantics(trajectory);
                        for step in &trajectory.steps {
                            let _ = Action::of(step, scaffold, semantics.recorded_root.as_deref(), "/testbed");
                            let _ = Recorded::of(step, scaffold, semantics.recorded_root.as_deref(), "/testbed");
                        }
                    }
                }
            }
            Err(error) => {
                prop_assert!(error.to_string().contains(names[which]), "{}", error);
            }
        }
    }
}
