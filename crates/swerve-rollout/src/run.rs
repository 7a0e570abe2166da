//! A whole run: the rollouts of every selected task, `run.samples` each, in one run
//! directory (`trajectories/`, `logs/`, `eval-logs/`, `preds.jsonl`, `summary.json`,
//! `config.toml`), resumable. [`Run::prepare`] checks the settings, lays out the directory
//! (refusing to resume with settings that change results: all but [`NON_RESULT_KEYS`] and
//! those of every command) and lists the rollouts still to run; a front end runs them its
//! own way (here, [`Run::run_local`] one at a time, or on a cluster) and hands the results
//! to [`Run::finish`] for the summary. [`run`] does all of it on this machine, telling an
//! [`Observer`] as rollouts start and end.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Result, bail};
use swerve_core::trajectory::Outcome;

use crate::batch::{self, Observer};
use crate::config::Config;
use crate::models::ModelSource;
use crate::rollout::{Rollout, RunContext};
use crate::summary::{Failure, Summary, summarize};
use crate::{open, reward, run_dir};

/// Settings a run directory may resume with changed, besides those of every command
/// ([`run_dir::OPERATIONAL_KEYS`], models' endpoints): any other setting, a section added
/// later included, changes results, and resuming with it changed is refused.
pub const NON_RESULT_KEYS: &[&str] = &[
    // How many rollouts run at once.
    "run.concurrency",
    // Rollouts per task: more adds rollouts, fewer leaves some out; none changes.
    "run.samples",
    // Where world-model training data is recorded: a by-product of the rollouts.
    "world.record",
    // `swerve data world --reasoning`'s teacher, not read by a run.
    "world.cot",
    // `swerve data backfill`'s teacher and settings, not read by a run.
    "backfill",
    // edit-bench's judge, instruction writer and embedder, not read by a run.
    "edit.judge",
    "edit.writer",
    "edit.embedder",
];

/// A run ready to go: its shared context, its rollouts and which of them are still to run.
pub struct Run {
    /// What every rollout shares.
    pub context: Arc<RunContext>,
    /// Where each task's model comes from.
    pub source: Arc<ModelSource>,
    /// Every rollout of the run (tasks × samples), finished ones included.
    pub rollouts: Arc<Vec<Rollout>>,
    /// The indices in [`Run::rollouts`] to run now: unfinished ones, or all with `redo`.
    pub pending: Vec<usize>,
    /// The run directory.
    pub out: PathBuf,
}

impl Run {
    /// The run of `config` over the tasks of `task_file` whose ids are in `ids` (all when
    /// empty), in the run directory `out`; `redo` runs finished rollouts again.
    pub fn prepare(
        config: &Config,
        task_file: &Path,
        ids: &[String],
        out: &Path,
        redo: bool,
    ) -> Result<Self> {
        let tasks = open::selected_tasks(task_file, ids)?;
        if config.run.samples == 0 || config.run.concurrency == 0 {
            bail!("run.samples and run.concurrency must be at least 1");
        }
        reward::check_run_reward(config)?;
        let source = Arc::new(ModelSource::new(config, &tasks)?);
        let context = Arc::new(RunContext::new(config, task_file, out.join("eval-logs"))?);
        run_dir::prepare(
            out,
            &["trajectories", "logs"],
            config,
            redo,
            NON_RESULT_KEYS,
            "run every rollout again",
        )?;
        let rollouts: Vec<Rollout> = tasks
            .iter()
            .flat_map(|task| {
                (0..config.run.samples).map(move |sample| Rollout::new(out, task, sample))
            })
            .collect();
        let pending = (0..rollouts.len())
            .filter(|&index| redo || !rollouts[index].finished())
            .collect();
        Ok(Self {
            context,
            source,
            rollouts: Arc::new(rollouts),
            pending,
            out: out.to_path_buf(),
        })
    }

    /// Runs rollout `index` on this machine; an error says why it could not run.
    pub async fn run_local(&self, index: usize) -> Result<Outcome, String> {
        let rollout = &self.rollouts[index];
        match self.source.for_task(&rollout.task) {
            Ok(model) => rollout.run(&self.context, model.as_ref()).await,
            Err(error) => Err(error),
        }
        .map_err(|error| swerve_core::hint::chain(error.as_ref()))
    }

    /// Writes `summary.json` and `preds.jsonl` from every finished rollout in the directory,
    /// given this invocation's `results` (one per [`Run::pending`] rollout, in order) and
    /// when it started.
    pub fn finish(&self, results: &[Result<Outcome, String>], started: Instant) -> Result<Summary> {
        let failed: Vec<Failure> = self
            .pending
            .iter()
            .zip(results)
            .filter_map(|(&index, result)| {
                let error = result.as_ref().err()?;
                Some(Failure {
                    id: self.rollouts[index].id(),
                    error: error.clone(),
                    log: self.rollouts[index].log.display().to_string(),
                })
            })
            .collect();
        let ran: BTreeSet<String> = self
            .pending
            .iter()
            .map(|&index| self.rollouts[index].id())
            .collect();
        summarize(
            &self.out,
            &self.rollouts,
            &ran,
            &self.context.config.model.model,
            self.source.is_priced(),
            failed,
            started.elapsed().as_secs_f64(),
        )
    }
}

/// Runs `config` over the tasks of `task_file` (those in `ids`, all when empty) on this
/// machine, `run.concurrency` rollouts at once, into `out`, resuming what is there (`redo`
/// runs everything again), telling `observer` as rollouts start and end; returns the run's
/// summary, also written to `out/summary.json`.
pub fn run(
    config: &Config,
    task_file: &Path,
    ids: &[String],
    out: &Path,
    redo: bool,
    observer: Arc<dyn Observer<Outcome>>,
) -> Result<Summary> {
    let run = Arc::new(Run::prepare(config, task_file, ids, out, redo)?);
    let started = Instant::now();
    let jobs = run
        .pending
        .iter()
        .map(|&index| (run.rollouts[index].id(), index))
        .collect();
    let results = batch::run(
        jobs,
        config.run.concurrency,
        |index| {
            let run = run.clone();
            async move { run.run_local(index).await }
        },
        observer,
    )?;
    run.finish(&results, started)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backfill;

    /// [`run_dir::prepare`] of `config` in `out` with `non_result_keys`: the refusal's text, if any.
    fn refusal(out: &Path, config: &Config, non_result_keys: &[&str]) -> Option<String> {
        run_dir::prepare(out, &[], config, false, non_result_keys, "start over")
            .err()
            .map(|error| error.to_string())
    }

    #[test]
    fn resuming_refuses_any_changed_setting_but_the_declared_ones() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("run");
        let first = Config::default();
        assert_eq!(refusal(&out, &first, NON_RESULT_KEYS), None);

        let mut operational = first.clone();
        operational.run.concurrency += 3;
        operational.model.base_url = "http://elsewhere:8000/v1".into();
        operational.model.max_retries += 1;
        operational.backfill.window = "3".parse().unwrap();
        assert_eq!(refusal(&out, &operational, NON_RESULT_KEYS), None);

        let mut changed = first.clone();
        changed.agent.max_steps += 1;
        changed.model.model = "another-model".into();
        let refused = refusal(&out, &changed, NON_RESULT_KEYS).unwrap();
        assert!(
            refused.contains("different settings (agent.max_steps, model.name)"),
            "{refused}"
        );
        // A backfill reads neither.
        let backfill_out = dir.path().join("backfill");
        assert_eq!(
            refusal(&backfill_out, &first, backfill::NON_RESULT_KEYS),
            None
        );
        assert_eq!(
            refusal(&backfill_out, &changed, backfill::NON_RESULT_KEYS),
            None
        );
    }

    #[test]
    fn a_section_no_list_names_changes_results() {
        let dir = tempfile::tempdir().unwrap();
        let config = Config::default();
        let saved = format!(
            "{}\n[new_method]\nstrength = 2\n",
            config.to_toml().unwrap()
        );
        std::fs::write(dir.path().join("config.toml"), saved).unwrap();
        for non_result_keys in [NON_RESULT_KEYS, backfill::NON_RESULT_KEYS] {
            let refused = refusal(dir.path(), &config, non_result_keys).unwrap();
            assert!(
                refused.contains("different settings (new_method)"),
                "{refused}"
            );
        }
    }
}
