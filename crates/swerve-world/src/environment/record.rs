//! Recording world-model training samples while the agent runs for real (`run.env =
//! "sandbox"`): every `execute_bash` command the router would simulate is paired with its
//! transition context (assembled just before it runs) and what it really printed, and with
//! real evaluation each final patch is paired with its evaluation context and its real
//! grade. With `world.record.simulate` the world models are asked too, and their
//! predictions are kept beside the real results for `swerve world fidelity`.
//!
//! Layout of the directory: `swt/<rollout>.jsonl` and `swr/<rollout>.jsonl`, one
//! [`WorldSample`] per line, each line synced as it is written; a rollout that starts again
//! starts its files again.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use swerve_core::{ExecOutcome, Shell, Task};
use swerve_eval::report::{ErrorClass, InstanceReport};
use swerve_llm::Model;
use swerve_tools::{ToolConfig, WorkspaceFs};

use super::{Mode, WorldInterceptor};
use crate::fidelity::CommandResult;
use crate::samples::{PredictedGrade, RealGrade, SwrSample, SwtSample, WorldSample, test_report};
use crate::swr::grader::{EvaluationContexts, SwrGrader};
use crate::tokens::ApproxTokens;
use crate::{Router, TransitionContext, simulate_command};

/// What every rollout of a recording run shares.
pub struct Recorder {
    /// Decides which commands would be simulated (only those are recorded).
    pub router: Router,
    /// Where the samples go (`world.record.dir`).
    pub dir: PathBuf,
    /// Where evaluation contexts come from.
    pub contexts: Arc<EvaluationContexts>,
    /// The transition model, asked beside real runs (`world.record.simulate`).
    pub transition: Option<Arc<dyn Model>>,
    /// The reward model, asked beside real grading (`world.record.simulate`).
    pub grader: Option<SwrGrader>,
}

impl Recorder {
    /// The recording of one rollout: its files started afresh, the interceptor that
    /// assembles transition contexts, and the shell (wrapping `shell`) that records what
    /// the commands really printed. Must be called on a tokio multi-threaded runtime.
    pub fn for_rollout(
        self: &Arc<Self>,
        rollout: &str,
        task: &Task,
        base: WorkspaceFs,
        shell: Arc<dyn Shell>,
    ) -> anyhow::Result<(WorldInterceptor, Arc<dyn Shell>)> {
        let file = SampleFile::create(&self.dir.join("swt").join(format!("{rollout}.jsonl")))?;
        SampleFile::create(&self.dir.join("swr").join(format!("{rollout}.jsonl")))?;
        let pending = Arc::new(Mutex::new(None));
        let recording_shell = RecordingShell {
            rollout: rollout.to_owned(),
            inner: shell.clone(),
            pending: pending.clone(),
            file: Mutex::new(file),
        };
        let interceptor = WorldInterceptor::new(
            Mode::Record {
                recorder: self.clone(),
                pending,
            },
            task.clone(),
            base,
            shell,
        );
        Ok((interceptor, Arc::new(recording_shell)))
    }

    /// Records the real grade `report` of `patch`, with its evaluation context (and the
    /// reward model's grade with `simulate`). Skipped, with a log line, for empty patches
    /// (graded 0 without a model) and grades the machinery spoiled (infra errors, timeouts).
    pub async fn record_grade(
        &self,
        rollout: &str,
        task: &Task,
        patch: &str,
        report: &InstanceReport,
    ) -> anyhow::Result<()> {
        if patch.trim().is_empty() {
            tracing::info!("no SWR sample: the patch is empty");
            return Ok(());
        }
        if let Some(class @ (ErrorClass::Infra | ErrorClass::Timeout | ErrorClass::DiskLimit)) =
            report.error_class
        {
            tracing::info!("no SWR sample: the real grade is unreliable ({class:?})");
            return Ok(());
        }
        let (context, _) = match self.contexts.assemble(task, patch).await {
            Ok(assembled) => assembled,
            Err((class, message)) => {
                tracing::warn!("no SWR sample: no evaluation context ({class:?}: {message})");
                return Ok(());
            }
        };
        let log = report
            .log_path
            .as_ref()
            .and_then(|path| std::fs::read_to_string(path).ok())
            .unwrap_or_default();
        // The sample is the run as the tests printed it: the grader's canaries unprinted.
        let log = match &report.guard {
            Some(guard) => swerve_eval::guard::canary::scrub(&log, &guard.canary_names()),
            None => log,
        };
        let real = RealGrade {
            reward: u8::from(report.resolved),
            test_report: test_report(
                &log,
                self.contexts.world.context.budgets.code,
                &ApproxTokens,
            ),
        };
        let simulated = match &self.grader {
            Some(grader) => {
                let scored = grader.score(&context).await;
                Some(PredictedGrade {
                    mean: scored.mean,
                    votes: scored.votes.iter().map(|vote| vote.reply.reward).collect(),
                    failures: scored.failures.len(),
                    resolved: scored.resolved(self.contexts.world.swr.threshold),
                })
            }
            None => None,
        };
        let mut sample = SwrSample::new(rollout, context, real);
        sample.simulated = simulated;
        let path = self.dir.join("swr").join(format!("{rollout}.jsonl"));
        SampleFile::append_to(&path)?.append(&WorldSample::Swr(sample))
    }
}

/// A transition context waiting for its command's real result.
pub(super) struct Pending {
    command: String,
    context: TransitionContext,
    /// The transition model's prediction, when it was asked.
    simulated: Option<CommandResult>,
    simulation_error: Option<String>,
}

impl Recorder {
    /// What waits for `command`'s real result: its `context`, and the transition model's
    /// prediction when `world.record.simulate` asks for it.
    pub(super) fn pending(
        &self,
        runtime: &tokio::runtime::Handle,
        command: String,
        context: TransitionContext,
        config: &ToolConfig,
    ) -> Pending {
        let world = &self.contexts.world;
        let simulated = self.transition.as_ref().map(|model| {
            runtime.block_on(simulate_command(
                model.as_ref(),
                &context,
                &world.swt,
                config.observation_lines,
            ))
        });
        let (simulated, simulation_error) = match simulated {
            Some(outcome) => (
                outcome.reply.map(|reply| CommandResult {
                    stdout: reply.stdout,
                    stderr: reply.stderr,
                    exit_code: reply.exit_code,
                }),
                outcome.error,
            ),
            None => (None, None),
        };
        Pending {
            command,
            context,
            simulated,
            simulation_error,
        }
    }
}

/// The rollout's shell, recording the result of the command a transition context waits for.
struct RecordingShell {
    rollout: String,
    inner: Arc<dyn Shell>,
    pending: Arc<Mutex<Option<Pending>>>,
    file: Mutex<SampleFile>,
}

impl Shell for RecordingShell {
    fn run(&self, command: &str, timeout: Duration) -> std::io::Result<ExecOutcome> {
        let outcome = self.inner.run(command, timeout)?;
        let waiting = {
            let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
            match pending.as_ref() {
                Some(waiting) if waiting.command == command => pending.take(),
                _ => None,
            }
        };
        if let Some(pending) = waiting {
            if outcome.timed_out {
                tracing::info!("no SWT sample: the command timed out");
            } else {
                let real = CommandResult {
                    stdout: outcome.stdout_text(),
                    stderr: outcome.stderr_text(),
                    exit_code: outcome.shell_status(),
                };
                let mut sample = SwtSample::new(&self.rollout, pending.context, real);
                sample.simulated = pending.simulated;
                sample.simulation_error = pending.simulation_error;
                let written = self
                    .file
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .append(&WorldSample::Swt(sample));
                if let Err(error) = written {
                    tracing::warn!("cannot record an SWT sample: {error:#}");
                }
            }
        }
        Ok(outcome)
    }
}

/// A JSON-lines file of samples, each line written whole and synced.
struct SampleFile {
    file: File,
    path: PathBuf,
}

impl SampleFile {
    /// Creates (or empties) the file, and its directory.
    fn create(path: &Path) -> anyhow::Result<Self> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let file =
            File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
        Ok(Self {
            file,
            path: path.to_owned(),
        })
    }

    /// Opens an existing file for appending.
    fn append_to(path: &Path) -> anyhow::Result<Self> {
        let file = OpenOptions::new()
            .append(true)
            .open(path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        Ok(Self {
            file,
            path: path.to_owned(),
        })
    }

    fn append(&mut self, sample: &WorldSample) -> anyhow::Result<()> {
        let mut line = serde_json::to_string(sample)?;
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.sync_data())
            .with_context(|| format!("cannot write {}", self.path.display()))
    }
}
