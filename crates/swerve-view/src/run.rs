//! The run page's data and the index: one row per rollout (exit reason or still running,
//! steps, tokens, cost, time, grade), the totals over the rows, pass@k over graded samples,
//! TTS@k when `swerve select` wrote its `selection.json` into the run directory, and the
//! prompt tokens per step index across the run. Rows come from the trajectory files, so a
//! run still in progress shows what it has so far; `summary.json`, once written, is passed
//! on as it is.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;
use swerve_core::trajectory::Trajectory;
use swerve_train::advantage::pass_at_k;

use crate::catalog::{Catalog, Key};

/// One rollout of a run.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The trajectory page's key.
    pub key: String,
    /// The rollout id (`<instance_id>__<sample>`).
    pub id: String,
    /// The task instance.
    pub instance_id: String,
    /// The exit reason, `running` without an outcome, `unreadable` when the file is not a
    /// trajectory.
    pub status: String,
    /// Steps so far.
    pub steps: usize,
    /// Prompt and completion tokens of the main model (the outcome's totals, else the
    /// steps' sum).
    pub prompt_tokens: u64,
    /// See `prompt_tokens`.
    pub completion_tokens: u64,
    /// Dollars.
    pub cost: f64,
    /// Whether the graded patch resolved the task; `None` when not graded.
    pub resolved: Option<bool>,
    /// Seconds waiting for the model.
    pub model_seconds: f64,
    /// Seconds running tools.
    pub env_seconds: f64,
    /// Answers that could not be parsed into a tool call.
    pub format_errors: usize,
    /// Subagent model calls (SWE-Edit's viewer and editor).
    pub subagent_calls: usize,
    /// Lines of the final patch.
    pub patch_lines: usize,
    /// Why the file could not be read, for `unreadable` rows.
    pub error: Option<String>,
    /// Prompt tokens of each step (0 where not reported).
    pub context: Vec<u64>,
    /// Completion tokens of each step (0 where not reported).
    pub completion: Vec<u64>,
    /// The main model's cost of each step (0 where not known).
    pub step_costs: Vec<f64>,
}

/// Sums over a run's rows.
#[derive(Debug, Default, Serialize)]
pub struct Totals {
    /// Trajectory files.
    pub rollouts: usize,
    /// Rollouts with an outcome.
    pub finished: usize,
    /// Rollouts without one yet.
    pub running: usize,
    /// Finished rollouts per exit reason.
    pub exit_reasons: BTreeMap<String, usize>,
    /// Graded rollouts, and how many resolved their task.
    pub evaluated: usize,
    /// See `evaluated`.
    pub resolved: usize,
    /// Steps over all rollouts.
    pub steps: usize,
    /// Tokens of the main model.
    pub prompt_tokens: u64,
    /// See `prompt_tokens`.
    pub completion_tokens: u64,
    /// Dollars.
    pub cost: f64,
    /// Seconds waiting for the model.
    pub model_seconds: f64,
    /// Seconds running tools.
    pub env_seconds: f64,
}

/// pass@k over the tasks with at least k graded samples.
#[derive(Debug, Serialize)]
pub struct AtK {
    /// k.
    pub k: usize,
    /// The mean unbiased pass@k.
    pub pass_at_k: f64,
    /// Tasks it is averaged over.
    pub tasks: usize,
}

/// The run page.
#[derive(Debug, Serialize)]
pub struct RunView {
    /// The run's position in the catalog.
    pub index: usize,
    /// The run directory.
    pub path: String,
    /// The rollouts, in file-name order.
    pub rows: Vec<Row>,
    /// Sums over the rows.
    pub totals: Totals,
    /// pass@k, k = 1..the most graded samples of a task.
    pub pass_at_k: Vec<AtK>,
    /// `selection.json`'s TTS@k and pass@k rows (`swerve select`), when the run has one.
    pub selection: Option<Value>,
    /// `summary.json`, once the run wrote it.
    pub summary: Option<Value>,
    /// True while rollouts are still running or the summary is not written yet: the page
    /// keeps polling.
    pub live: bool,
}

/// One line of the index: a run directory.
#[derive(Debug, Serialize)]
pub struct RunEntry {
    /// Its position.
    pub index: usize,
    /// The directory.
    pub path: String,
    /// Trajectory files so far.
    pub rollouts: usize,
}

/// One line of the index: a loose trajectory file.
#[derive(Debug, Serialize)]
pub struct FileEntry {
    /// The file.
    pub path: String,
    /// Its trajectories, as rows.
    pub rows: Vec<Row>,
    /// Why it could not be read.
    pub error: Option<String>,
}

/// The index page.
#[derive(Debug, Serialize)]
pub struct Index {
    /// The run directories.
    pub runs: Vec<RunEntry>,
    /// The loose files.
    pub files: Vec<FileEntry>,
}

/// The index of `catalog`.
pub fn index(catalog: &Catalog) -> Index {
    let runs = catalog
        .runs
        .iter()
        .enumerate()
        .map(|(index, path)| RunEntry {
            index,
            path: path.display().to_string(),
            rollouts: catalog.run_files(index).len(),
        })
        .collect();
    let files = catalog
        .files
        .iter()
        .enumerate()
        .map(|(file, path)| {
            let read = catalog.read_file(path);
            let (rows, error) = match read.as_ref() {
                Ok(trajectories) => (
                    trajectories
                        .iter()
                        .enumerate()
                        .map(|(n, trajectory)| row(Key::File { file, n }, trajectory))
                        .collect(),
                    None,
                ),
                Err(error) => (Vec::new(), Some(error.clone())),
            };
            FileEntry {
                path: path.display().to_string(),
                rows,
                error,
            }
        })
        .collect();
    Index { runs, files }
}

/// The page of run `run`; `None` when there is no such run.
pub fn run(catalog: &Catalog, run: usize) -> Option<RunView> {
    let dir = catalog.runs.get(run)?;
    let rows: Vec<Row> = catalog
        .run_files(run)
        .into_iter()
        .map(|(stem, path)| {
            let key = Key::Run { run, stem };
            match catalog.read_run_file(&path).as_ref() {
                Ok(trajectories) if !trajectories.is_empty() => row(key, &trajectories[0]),
                Ok(_) => unreadable(key, "no trajectory in the file".into()),
                Err(error) => unreadable(key, error.clone()),
            }
        })
        .collect();
    let totals = totals(&rows);
    let summary = read_json(&dir.join("summary.json"));
    Some(RunView {
        index: run,
        path: dir.display().to_string(),
        pass_at_k: pass_at(&rows),
        selection: find_selection(dir),
        live: totals.running > 0 || summary.is_none(),
        summary,
        totals,
        rows,
    })
}

/// The row of one trajectory.
pub fn row(key: Key, trajectory: &Trajectory) -> Row {
    let steps = &trajectory.steps;
    let outcome = trajectory.outcome.as_ref();
    let step_usage = steps.iter().filter_map(|step| step.usage);
    let (prompt_tokens, completion_tokens) = match outcome.and_then(|o| o.usage) {
        Some(usage) => (usage.prompt_tokens, usage.completion_tokens),
        None => step_usage.fold((0, 0), |(p, c), u| {
            (p + u.prompt_tokens, c + u.completion_tokens)
        }),
    };
    let seconds = |pick: fn(&swerve_core::trajectory::Timings) -> Option<f64>| match outcome
        .and_then(|o| pick(&o.timings))
    {
        Some(total) => total,
        None => steps.iter().filter_map(|step| pick(&step.timings)).sum(),
    };
    Row {
        key: key.to_string(),
        id: trajectory.header.id.clone(),
        instance_id: trajectory.header.instance_id.clone(),
        status: outcome
            .map_or("running", |o| o.exit_reason.as_str())
            .to_owned(),
        steps: steps.len(),
        prompt_tokens,
        completion_tokens,
        cost: outcome
            .and_then(|o| o.cost)
            .unwrap_or_else(|| steps.iter().filter_map(|step| step.cost).sum()),
        resolved: outcome.and_then(|o| o.reward).map(|reward| reward >= 1.0),
        model_seconds: seconds(|t| t.model_seconds),
        env_seconds: seconds(|t| t.env_seconds),
        format_errors: steps.iter().filter(|s| s.format_error.is_some()).count(),
        subagent_calls: steps
            .iter()
            .flat_map(|step| &step.subagents)
            .map(|sub| sub.calls.len())
            .sum(),
        patch_lines: outcome.map_or(0, |o| o.patch.lines().count()),
        error: None,
        context: steps
            .iter()
            .map(|step| step.usage.map_or(0, |u| u.prompt_tokens))
            .collect(),
        completion: steps
            .iter()
            .map(|step| step.usage.map_or(0, |u| u.completion_tokens))
            .collect(),
        step_costs: steps.iter().map(|step| step.cost.unwrap_or(0.0)).collect(),
    }
}

fn unreadable(key: Key, error: String) -> Row {
    let id = match &key {
        Key::Run { stem, .. } => stem.clone(),
        Key::File { .. } => key.to_string(),
    };
    Row {
        key: key.to_string(),
        instance_id: id
            .rsplit_once("__")
            .map_or(id.as_str(), |(i, _)| i)
            .to_owned(),
        id,
        status: "unreadable".into(),
        steps: 0,
        prompt_tokens: 0,
        completion_tokens: 0,
        cost: 0.0,
        resolved: None,
        model_seconds: 0.0,
        env_seconds: 0.0,
        format_errors: 0,
        subagent_calls: 0,
        patch_lines: 0,
        error: Some(error),
        context: Vec::new(),
        completion: Vec::new(),
        step_costs: Vec::new(),
    }
}

fn totals(rows: &[Row]) -> Totals {
    let mut totals = Totals::default();
    for row in rows {
        totals.rollouts += 1;
        match row.status.as_str() {
            "running" => totals.running += 1,
            "unreadable" => {}
            reason => {
                totals.finished += 1;
                *totals.exit_reasons.entry(reason.to_owned()).or_default() += 1;
            }
        }
        if let Some(resolved) = row.resolved {
            totals.evaluated += 1;
            totals.resolved += usize::from(resolved);
        }
        totals.steps += row.steps;
        totals.prompt_tokens += row.prompt_tokens;
        totals.completion_tokens += row.completion_tokens;
        totals.cost += row.cost;
        totals.model_seconds += row.model_seconds;
        totals.env_seconds += row.env_seconds;
    }
    totals
}

/// pass@k for k = 1..=n over tasks with n ≥ k graded samples.
fn pass_at(rows: &[Row]) -> Vec<AtK> {
    let mut tasks: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for row in rows {
        if let Some(resolved) = row.resolved {
            let task = tasks.entry(row.instance_id.as_str()).or_default();
            task.0 += 1;
            task.1 += usize::from(resolved);
        }
    }
    let most = tasks.values().map(|&(n, _)| n).max().unwrap_or(0);
    (1..=most)
        .filter_map(|k| {
            let values: Vec<f64> = tasks
                .values()
                .filter_map(|&(n, c)| pass_at_k(n, c, k))
                .collect();
            (!values.is_empty()).then(|| AtK {
                k,
                pass_at_k: values.iter().sum::<f64>() / values.len() as f64,
                tasks: values.len(),
            })
        })
        .collect()
}

/// The `metrics` of a `selection.json` in `dir` or one level below it.
fn find_selection(dir: &Path) -> Option<Value> {
    let direct = std::iter::once(dir.join("selection.json"));
    let below = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|entry| Some(entry.ok()?.path().join("selection.json")));
    direct
        .chain(below)
        .find_map(|path| read_json(&path))
        .and_then(|selection| selection.get("metrics").cloned())
}

fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graded(instance: &str, resolved: bool) -> Row {
        let mut row = unreadable(Key::File { file: 0, n: 0 }, String::new());
        row.instance_id = instance.into();
        row.status = "submitted".into();
        row.resolved = Some(resolved);
        row
    }

    #[test]
    fn a_file_that_is_not_a_trajectory_is_a_row_saying_why() {
        let dir = tempfile::tempdir().unwrap();
        let trajectories = dir.path().join("run/trajectories");
        std::fs::create_dir_all(&trajectories).unwrap();
        std::fs::write(
            trajectories.join("a__0.jsonl"),
            "{\"type\":\"header\",\"schema_version\":1,\"id\":\"a__0\",\"instance_id\":\"a\",\"config\":null}\n{\"type\":\"step\"}\n",
        )
        .unwrap();
        let catalog = Catalog::new(&[dir.path().join("run")]).unwrap();
        let page = run(&catalog, 0).unwrap();
        let row = &page.rows[0];
        assert_eq!(
            (row.status.as_str(), row.instance_id.as_str()),
            ("unreadable", "a")
        );
        let error = row.error.as_deref().unwrap();
        assert!(
            error.contains("a__0.jsonl") && error.contains("line 2"),
            "{error}"
        );
        assert!(page.live, "no summary.json yet");
        assert_eq!(page.totals.finished, 0);
    }

    #[test]
    fn tts_at_k_comes_from_the_selection_swerve_select_wrote_inside_the_run() {
        let dir = tempfile::tempdir().unwrap();
        let run_dir = dir.path().join("run");
        std::fs::create_dir_all(run_dir.join("trajectories")).unwrap();
        let catalog = Catalog::new(std::slice::from_ref(&run_dir)).unwrap();
        assert_eq!(run(&catalog, 0).unwrap().selection, None);
        std::fs::create_dir_all(run_dir.join("select")).unwrap();
        let metrics = serde_json::json!([{"k": 1, "tts": 0.5, "pass_at_k": 0.5}]);
        std::fs::write(
            run_dir.join("select/selection.json"),
            serde_json::json!({"by": "swr", "metrics": metrics}).to_string(),
        )
        .unwrap();
        assert_eq!(run(&catalog, 0).unwrap().selection, Some(metrics));
    }

    #[test]
    fn pass_at_k_averages_over_tasks_with_enough_samples() {
        let rows = [
            graded("a", true),
            graded("a", false),
            graded("b", false),
            graded("b", false),
            graded("c", true),
        ];
        let at = pass_at(&rows);
        assert_eq!(at.len(), 2);
        // k=1: (1/2 + 0 + 1) / 3; k=2: (1 + 0) / 2 (c has one sample).
        assert!((at[0].pass_at_k - 0.5).abs() < 1e-12);
        assert_eq!((at[1].tasks, at[1].pass_at_k), (2, 0.5));
        let totals = totals(&rows);
        assert_eq!((totals.evaluated, totals.resolved), (5, 2));
        assert_eq!(totals.exit_reasons["submitted"], 5);
    }
}
