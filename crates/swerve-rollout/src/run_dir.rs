//! Run directories (`swerve run --out`): `config.toml`, `trajectories/*.jsonl`, `logs/`,
//! `eval-logs/`.
//!
//! - Output directories that commands resume in (`swerve run`, `swerve data backfill`):
//!   the resolved configuration is saved as `config.toml`, and resuming with settings that
//!   change results is refused, so one directory never mixes two set-ups ([`prepare`]).
//! - The trajectories of a run ([`trajectory_files`]).
//! - The candidates of test-time selection: the finished rollouts of run directories, each
//!   with the grade its run recorded ([`read_candidates`]).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use swerve_core::atomic::write_atomically;
use swerve_core::trajectory::{Outcome, read_trajectory};
use swerve_train::tts::Candidate;
use swerve_world::swr::grader::EVALUATOR;

use crate::config::Config;

/// Settings that never change what a command produces, only where and how fast it runs
/// or how its models are reached: every output directory may resume with them changed.
/// Each command adds the settings it does not read ([`prepare`]'s `non_result_keys`).
/// Any other setting, a section added later included, must be what the directory was
/// started with.
pub const OPERATIONAL_KEYS: &[&str] = &[
    // Where base repositories and workspace layers are cached.
    "cache_dir",
    // Where the task repositories are found: the tasks pin their commits.
    "repos_dir",
    "repos",
    // How workspaces are layered over their base: the same files either way.
    "workspace",
    // Where task images come from (store, mirrors, rewrites to a mirror, registries'
    // transport and credentials), not which image a task gets: `images.naming`,
    // `images.swebench_namespace` and `images.platform` change results.
    "images.store",
    "images.mirrors",
    "images.rewrites",
    "images.insecure",
    "images.ca_cert",
    "images.docker_config",
    "images.auth",
    "images.timeout_secs",
    // Here or on a Ray cluster (docs/cluster.md).
    "cluster",
    // `swerve serve`'s address, limits and directories.
    "serve",
    // Prices: what a run is said to cost.
    "run.prices",
];

/// The sections describing a model: their [`ENDPOINT_FIELDS`] never change results.
pub const MODEL_SECTIONS: &[&str] = &[
    "model",
    "backfill.teacher",
    "world.transition_model",
    "world.reward_model",
    "world.analysis_model",
    "edit.viewer",
    "edit.editor",
    "edit.judge",
    "edit.writer",
    "edit.embedder",
];

/// How a model is reached and how patiently: the same model answers either way.
pub const ENDPOINT_FIELDS: &[&str] = &[
    "base_url",
    "api_key_env",
    "ca_cert",
    "timeout_secs",
    "max_retries",
    "backoff_base_secs",
    "backoff_max_secs",
];

/// Creates `out` and its `subdirs`, and writes `config` to `out/config.toml` after
/// checking that every setting but [`OPERATIONAL_KEYS`], models' [`ENDPOINT_FIELDS`] and
/// the command's `non_result_keys` (dotted keys, each covering what is under it) is what
/// the configuration already there says, unless `redo` starts the directory over;
/// `redo_what` says what `--redo` does, for the refusal.
pub fn prepare(
    out: &Path,
    subdirs: &[&str],
    config: &Config,
    redo: bool,
    non_result_keys: &[&str],
    redo_what: &str,
) -> Result<()> {
    for dir in
        std::iter::once(out.to_path_buf()).chain(subdirs.iter().map(|subdir| out.join(subdir)))
    {
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let path = out.join("config.toml");
    let text = config.to_toml()?;
    if !redo && let Ok(saved) = std::fs::read_to_string(&path) {
        let saved: toml::Table = saved
            .parse()
            .with_context(|| format!("{}: not a configuration file", path.display()))?;
        let current: toml::Table = text.parse()?;
        let changed = changed_settings(&saved, &current, non_result_keys);
        if !changed.is_empty() {
            return Err(anyhow::anyhow!(
                "{} was run with different settings ({}); resuming would mix two set-ups in one \
                 directory\nhint: use a new --out, or --redo to {redo_what} with the new settings",
                out.display(),
                changed.join(", ")
            ));
        }
    }
    write_atomically(&path, |file| file.write_all(text.as_bytes()))
        .with_context(|| format!("cannot write {}", path.display()))
}

/// The dotted keys of the settings that differ between `saved` and `current` (set in one
/// and not the other included), leaving out [`OPERATIONAL_KEYS`], models'
/// [`ENDPOINT_FIELDS`], `non_result_keys` and what is under them.
fn changed_settings(
    saved: &toml::Table,
    current: &toml::Table,
    non_result_keys: &[&str],
) -> Vec<String> {
    let mut changed = Vec::new();
    differing_keys(saved, current, "", non_result_keys, &mut changed);
    changed
}

/// Adds to `changed` the keys under `prefix` (dotted, empty at the top) whose values
/// differ between `saved` and `current`, going into tables both have.
fn differing_keys(
    saved: &toml::Table,
    current: &toml::Table,
    prefix: &str,
    non_result_keys: &[&str],
    changed: &mut Vec<String>,
) {
    let keys: std::collections::BTreeSet<&String> = saved.keys().chain(current.keys()).collect();
    for key in keys {
        let path = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        if !changes_results(&path, non_result_keys) {
            continue;
        }
        match (saved.get(key), current.get(key)) {
            (Some(toml::Value::Table(saved)), Some(toml::Value::Table(current))) => {
                differing_keys(saved, current, &path, non_result_keys, changed);
            }
            (saved, current) if saved != current => changed.push(path),
            _ => {}
        }
    }
}

/// Whether the setting at dotted `path` may change results: it is not (under) one of
/// [`OPERATIONAL_KEYS`] or `non_result_keys`, nor a model's endpoint field.
fn changes_results(path: &str, non_result_keys: &[&str]) -> bool {
    let covers = |key: &&str| {
        path.strip_prefix(key)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
    };
    let endpoint = path.rsplit_once('.').is_some_and(|(section, field)| {
        MODEL_SECTIONS.contains(&section) && ENDPOINT_FIELDS.contains(&field)
    });
    !(endpoint || OPERATIONAL_KEYS.iter().chain(non_result_keys).any(covers))
}

/// The trajectory files to read: `run`'s `trajectories/*.jsonl` (sorted) and `files`.
pub fn trajectory_files(run: Option<&Path>, files: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    if let Some(run) = run {
        let dir = run.join("trajectories");
        let entries = std::fs::read_dir(&dir).with_context(|| {
            format!(
                "cannot read {}: --run takes the --out directory of `swerve run`",
                dir.display()
            )
        })?;
        for entry in entries {
            let path = entry?.path();
            if path.extension().is_some_and(|ext| ext == "jsonl") {
                found.push(path);
            }
        }
        found.sort();
    }
    found.extend(files.iter().cloned());
    if found.is_empty() {
        return Err(anyhow::anyhow!(
            "no trajectories\nhint: give --run DIR or trajectory files"
        ));
    }
    Ok(found)
}

/// The candidate of a finished rollout: the SWR score from a predicted report, the real
/// grade from a real one.
pub fn candidate(run: &Path, rollout: &str, instance_id: &str, outcome: &Outcome) -> Candidate {
    let report = outcome.eval_report.as_ref();
    let predicted = report.is_some_and(|report| report["evaluator"] == EVALUATOR);
    let real = report.filter(|_| !predicted);
    Candidate {
        run: run.to_owned(),
        rollout: rollout.to_owned(),
        instance_id: instance_id.to_owned(),
        patch: outcome.patch.clone(),
        swr: report
            .filter(|_| predicted)
            .and_then(|report| report["swr"]["score"].as_f64()),
        tests: real.map(passing_share),
        resolved: real.map(|report| report["resolved"] == true),
    }
}

/// The share of the FAIL_TO_PASS and PASS_TO_PASS tests that pass in a real report (0
/// when nothing was graded).
fn passing_share(report: &serde_json::Value) -> f64 {
    let status = &report["tests_status"];
    let count = |list: &str, result: &str| {
        status[list][result]
            .as_array()
            .map_or(0, |tests| tests.len())
    };
    let passed = count("FAIL_TO_PASS", "success") + count("PASS_TO_PASS", "success");
    let total = passed + count("FAIL_TO_PASS", "failure") + count("PASS_TO_PASS", "failure");
    if total == 0 {
        f64::from(u8::from(report["resolved"] == true))
    } else {
        passed as f64 / total as f64
    }
}

/// The candidates of the runs given to `swerve select`, grouped by task.
pub struct Candidates {
    /// Each task's candidates (in id order), in run order then sample order.
    pub tasks: BTreeMap<String, Vec<Candidate>>,
    /// Trajectory files of rollouts that did not finish, which are not candidates.
    pub unfinished: Vec<PathBuf>,
}

/// The candidates of the finished rollouts in `runs`; unfinished rollouts are listed apart.
pub fn read_candidates(runs: &[PathBuf]) -> Result<Candidates> {
    let mut unfinished = Vec::new();
    let mut tasks: BTreeMap<String, Vec<(usize, usize, Candidate)>> = BTreeMap::new();
    for (run_index, run) in runs.iter().enumerate() {
        let dir = run.join("trajectories");
        let entries = std::fs::read_dir(&dir).with_context(|| {
            format!(
                "{}: not a run directory (no trajectories/ inside; give directories written \
                 by `swerve run --out`)",
                run.display()
            )
        })?;
        let mut files: Vec<PathBuf> = entries
            .filter_map(|entry| Some(entry.ok()?.path()))
            .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
            .collect();
        files.sort();
        for file in files {
            let read = read_trajectory(&file).map_err(|error| anyhow::anyhow!("{error}"))?;
            let header = &read.trajectory.header;
            let Some(outcome) = &read.trajectory.outcome else {
                unfinished.push(file);
                continue;
            };
            let sample = header
                .id
                .rsplit_once("__")
                .and_then(|(_, sample)| sample.parse().ok())
                .unwrap_or(0);
            let candidate = candidate(run, &header.id, &header.instance_id, outcome);
            tasks
                .entry(header.instance_id.clone())
                .or_default()
                .push((run_index, sample, candidate));
        }
    }
    if tasks.is_empty() {
        bail!("no finished rollouts in the runs given");
    }
    let tasks = tasks
        .into_iter()
        .map(|(id, mut candidates)| {
            candidates.sort_by_key(|(run, sample, _)| (*run, *sample));
            (id, candidates.into_iter().map(|(_, _, c)| c).collect())
        })
        .collect();
    Ok(Candidates { tasks, unfinished })
}
