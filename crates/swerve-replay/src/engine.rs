//! [`replay`]: runs a recorded trajectory's actions, in order, through a [`Toolbox`] over a
//! fresh workspace whose shell is the scaffold's ([`crate::ScaffoldShell`]), and compares each
//! answer with the recorded one.
//!
//! Shell actions go through the toolbox's `execute_bash` (so interceptors such as SWE-World's
//! recorder see them as in a live run); the comparison reads the raw result the scaffold shell
//! kept. Tool calls (file editor, SWE-agent's commands, search, finish) run as recorded.

use std::time::Instant;

use serde_json::json;
use swerve_core::ToolCall;
use swerve_core::trajectory::{Timings, Trajectory};
use swerve_tools::{ToolResult, Toolbox};

use crate::action::{
    Action, Recorded, mini_observation, mini_shown, mini_submission, r2e_return_code,
};
use crate::report::{ReplayRun, Replayed, StepReport};
use crate::scaffold::{Scaffold, Semantics};
use crate::shell::LastOutcome;

/// Where and how a trajectory replays.
pub struct Replayer<'a> {
    scaffold: Scaffold,
    semantics: &'a Semantics,
    toolbox: &'a mut Toolbox,
    last: &'a LastOutcome,
    mount_point: &'a str,
    /// The submission the last action produced (mini-swe-agent).
    last_submission: Option<String>,
}

impl<'a> Replayer<'a> {
    /// Replays a `scaffold` trajectory with its `semantics` through `toolbox`, whose shell
    /// is the [`crate::ScaffoldShell`] keeping `last`, over a repository at `mount_point`.
    pub fn new(
        scaffold: Scaffold,
        semantics: &'a Semantics,
        toolbox: &'a mut Toolbox,
        last: &'a LastOutcome,
        mount_point: &'a str,
    ) -> Self {
        Self {
            scaffold,
            semantics,
            toolbox,
            last,
            mount_point,
            last_submission: None,
        }
    }

    /// Replays every step of `trajectory` (stopping after a replayed `finish`/`submit`).
    pub fn replay(&mut self, trajectory: &Trajectory) -> ReplayRun {
        let mut run = ReplayRun {
            scaffold: self.scaffold,
            actions: Vec::new(),
            recorded: Vec::new(),
            replayed: Vec::new(),
            steps: Vec::new(),
            reports: Vec::new(),
            submission: None,
            env_seconds: 0.0,
        };
        let root = self.semantics.recorded_root.as_deref();
        for step in &trajectory.steps {
            let action = Action::of(step, self.scaffold, root, self.mount_point);
            let recorded = Recorded::of(step, self.scaffold, root, self.mount_point);
            let started = Instant::now();
            let replayed = self.run(&action, &recorded);
            let seconds = started.elapsed().as_secs_f64();
            run.env_seconds += seconds;
            if let Some(submission) = self.last_submission.take() {
                run.submission = Some(submission);
            }
            let report = StepReport::compare(step.index, &action, &recorded, replayed.as_ref());
            let mut replayed_step = step.clone();
            replayed_step.messages_sent = None;
            replayed_step.timings = Timings {
                model_seconds: step.timings.model_seconds,
                env_seconds: Some(seconds),
            };
            if let Some(replayed) = &replayed {
                replayed_step.observation = Some(replayed.observation.clone());
            }
            replayed_step.extra.insert(
                "replay".into(),
                json!({
                    "recorded_return_code": recorded.return_code,
                    "return_code": replayed.as_ref().and_then(|r| r.return_code),
                    "similarity": report.similarity,
                    "outcome": report.outcome,
                }),
            );
            let done = replayed.as_ref().is_some_and(|replayed| replayed.done);
            run.steps.push(replayed_step);
            run.reports.push(report);
            run.actions.push(action);
            run.recorded.push(recorded);
            run.replayed.push(replayed);
            if done {
                break;
            }
        }
        run
    }

    /// Runs one action; `None` for steps without one.
    fn run(&mut self, action: &Action, recorded: &Recorded) -> Option<Replayed> {
        match action {
            Action::None => None,
            Action::NoOp => Some(Replayed {
                return_code: recorded.return_code,
                timed_out: false,
                output: recorded.output.clone(),
                observation: recorded.output.clone(),
                done: false,
            }),
            Action::Shell(command) => {
                self.last.take();
                let call = ToolCall::new("execute_bash").arg("command", command.as_str());
                let result = self.toolbox.call(&call);
                Some(self.shell_result(result))
            }
            Action::Tool(call) => {
                let result = self.toolbox.call(call);
                let return_code = match self.scaffold {
                    Scaffold::R2eGym | Scaffold::Swerve => r2e_return_code(&result.observation),
                    _ => None,
                };
                let output = match self.scaffold {
                    Scaffold::R2eGym | Scaffold::Swerve => result.observation.clone(),
                    _ => result.output.clone(),
                };
                Some(Replayed {
                    return_code,
                    timed_out: false,
                    output,
                    observation: result.observation,
                    done: result.done,
                })
            }
        }
    }

    /// The replayed result of a shell action, as the scaffold shows it.
    fn shell_result(&mut self, result: ToolResult) -> Replayed {
        let raw = self.last.take();
        let timed_out = raw.as_ref().is_some_and(|raw| raw.timed_out);
        let return_code = raw
            .as_ref()
            .filter(|raw| !raw.timed_out)
            .map(|raw| raw.shell_status());
        let text = raw
            .as_ref()
            .map(|raw| format!("{}{}", raw.stdout_text(), raw.stderr_text()))
            .unwrap_or_else(|| result.output.clone());
        match self.scaffold {
            Scaffold::MiniSweAgent => {
                // Python's text mode reads `\r\n` and `\r` as `\n`.
                let text = text.replace("\r\n", "\n").replace('\r', "\n");
                let observation = match return_code {
                    Some(code) => mini_observation(code, &text),
                    None => format!(
                        "The last command timed out and has been killed.\nThe output of the command was:\n <output>\n{text}\n</output>"
                    ),
                };
                match mini_submission(&text) {
                    // The submitting action: mini shows the submission itself, no code.
                    Some(submission) => {
                        self.last_submission = Some(submission.clone());
                        Replayed {
                            return_code: None,
                            timed_out,
                            output: submission.clone(),
                            observation: submission,
                            done: false,
                        }
                    }
                    None => Replayed {
                        return_code,
                        timed_out,
                        output: if timed_out {
                            observation.clone()
                        } else {
                            mini_shown(&text)
                        },
                        observation,
                        done: false,
                    },
                }
            }
            Scaffold::SweAgent | Scaffold::OpenHands => Replayed {
                return_code,
                timed_out,
                output: text,
                observation: result.observation,
                done: false,
            },
            Scaffold::R2eGym | Scaffold::Swerve => Replayed {
                return_code: return_code.or_else(|| error_code(&result.error_code)),
                timed_out,
                output: result.observation.clone(),
                observation: result.observation,
                done: result.done,
            },
        }
    }
}

/// The return code in a runtime error code (`0`, `Error: Exit code N`, `-1`).
fn error_code(code: &str) -> Option<i32> {
    code.strip_prefix("Error: Exit code ")
        .unwrap_or(code)
        .trim()
        .parse()
        .ok()
}
