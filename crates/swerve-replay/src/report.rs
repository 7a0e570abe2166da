//! The fidelity report: per step (return-code agreement, normalised output similarity,
//! hazards), per trajectory (agreement shares, the first diverging step with both outputs,
//! the final patch against the recorded submission byte for byte, the grade against the
//! recorded verdict) and per repository. Every number is a function of the recorded and
//! replayed outputs only (times are kept apart, in [`Throughput`]), so two replays of the
//! same inputs in the same environment give the same report.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::action::{Action, Recorded};
use crate::scaffold::Scaffold;
use swerve_core::trajectory::Step;
use swerve_world::fidelity::{normalize_output, normalized_similarity};

use crate::hazards::{Hazard, hazards, output_hazards};

/// Characters of each output kept in a [`Divergence`].
pub const DIVERGENCE_CHARS: usize = 4_000;

/// What replaying one trajectory gave.
#[derive(Debug, Clone)]
pub struct ReplayRun {
    /// The recorded scaffold.
    pub scaffold: Scaffold,
    /// Each step's action.
    pub actions: Vec<Action>,
    /// Each step's recorded result.
    pub recorded: Vec<Recorded>,
    /// Each step's replayed result (`None`: no action).
    pub replayed: Vec<Option<Replayed>>,
    /// The replayed steps: the recorded replies and calls with the replay's observations.
    pub steps: Vec<Step>,
    /// The comparison of each step.
    pub reports: Vec<StepReport>,
    /// The submission the actions produced, for scaffolds whose submission is an action's
    /// output (mini-swe-agent); `None` otherwise (the patch is the workspace's diff).
    pub submission: Option<String>,
    /// Seconds spent executing actions.
    pub env_seconds: f64,
}

/// The similarity of a recorded and a replayed output (trailing whitespace aside), normalised
/// as SWE-World's fidelity measure does.
pub fn similarity(recorded: &str, replayed: &str) -> f64 {
    normalized_similarity(recorded.trim_end(), replayed.trim_end())
}

/// What the replay's environment answered to one action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replayed {
    /// The return code (`None`: timed out, or the tool has none).
    pub return_code: Option<i32>,
    /// The action timed out.
    pub timed_out: bool,
    /// The output, comparable with [`Recorded::output`].
    pub output: String,
    /// The observation as the scaffold would have shown it.
    pub observation: String,
    /// The action ended the episode (`finish`, `submit`).
    pub done: bool,
}

/// How one step compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepOutcome {
    /// Same return code (or none recorded) and the same output after normalisation.
    Agrees,
    /// The same lines in another order (a recursive `grep`/`find` walks directories in the
    /// order the file system lists them, which differs between file systems).
    Reordered,
    /// The environment answered differently.
    Diverges,
    /// Answered differently, but the action reaches the network, the clock or randomness:
    /// not counted as an environment failure.
    NotReplayable,
    /// The step had no action to replay (a format error).
    NoAction,
}

/// One step's comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepReport {
    /// The step's index.
    pub index: usize,
    /// The tool the action ran (`bash` for shell commands).
    pub tool: String,
    /// The outcome.
    pub outcome: StepOutcome,
    /// The hazards the action shows.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub hazards: Vec<Hazard>,
    /// The recorded return code.
    pub recorded_code: Option<i32>,
    /// The replayed return code.
    pub replayed_code: Option<i32>,
    /// Whether the codes agree (`None` when either is unknown).
    pub code_agrees: Option<bool>,
    /// Normalised output similarity (`None` without an action).
    pub similarity: Option<f64>,
}

impl StepReport {
    /// Compares the `recorded` and `replayed` results of `action`, step `index`.
    pub fn compare(
        index: usize,
        action: &Action,
        recorded: &Recorded,
        replayed: Option<&Replayed>,
    ) -> Self {
        let mut found = hazards(&action.text());
        let Some(replayed) = replayed else {
            return Self {
                index,
                tool: action.tool().to_owned(),
                outcome: StepOutcome::NoAction,
                hazards: found,
                recorded_code: recorded.return_code,
                replayed_code: None,
                code_agrees: None,
                similarity: None,
            };
        };
        let code_agrees = match (recorded.return_code, replayed.return_code) {
            (Some(a), Some(b)) => Some(a == b),
            _ if recorded.timed_out || replayed.timed_out => {
                Some(recorded.timed_out == replayed.timed_out)
            }
            _ => None,
        };
        for hazard in output_hazards(&replayed.output) {
            if !found.contains(&hazard) {
                found.push(hazard);
                found.sort();
            }
        }
        let score = similarity(&recorded.output, &replayed.output);
        let codes_ok = code_agrees != Some(false);
        let outcome = if codes_ok && score == 1.0 {
            StepOutcome::Agrees
        } else if codes_ok && same_lines(&recorded.output, &replayed.output) {
            StepOutcome::Reordered
        } else if found.is_empty() {
            StepOutcome::Diverges
        } else {
            StepOutcome::NotReplayable
        };
        Self {
            index,
            tool: action.tool().to_owned(),
            outcome,
            hazards: found,
            recorded_code: recorded.return_code,
            replayed_code: replayed.return_code,
            code_agrees,
            similarity: Some(score),
        }
    }
}

/// Whether the two outputs hold the same lines, in any order (after normalisation).
fn same_lines(recorded: &str, replayed: &str) -> bool {
    let lines = |text: &str| {
        let mut lines: Vec<String> = normalize_output(text.trim_end())
            .lines()
            .map(|line| line.trim_end().to_owned())
            .collect();
        lines.sort();
        lines
    };
    lines(recorded) == lines(replayed)
}

/// The first step whose answer differs, with both outputs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Divergence {
    /// The step's index.
    pub step: usize,
    /// The action (command or call arguments).
    pub action: String,
    /// Recorded return code.
    pub recorded_code: Option<i32>,
    /// Replayed return code.
    pub replayed_code: Option<i32>,
    /// The recorded output as compared (normalised), its first [`DIVERGENCE_CHARS`]
    /// characters.
    pub recorded: String,
    /// The replayed output as compared (normalised), its first [`DIVERGENCE_CHARS`]
    /// characters.
    pub replayed: String,
}

/// The final patch against the recorded submission.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PatchComparison {
    /// Byte for byte the same.
    pub equal: bool,
    /// Bytes of the recorded submission.
    pub recorded_bytes: usize,
    /// Bytes of the replayed patch.
    pub replayed_bytes: usize,
    /// The first byte at which they differ, when they do.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub first_difference: Option<usize>,
}

impl PatchComparison {
    /// Compares `replayed` with `recorded`.
    pub fn of(recorded: &str, replayed: &str) -> Self {
        let first_difference = (recorded != replayed).then(|| {
            recorded
                .bytes()
                .zip(replayed.bytes())
                .position(|(a, b)| a != b)
                .unwrap_or(recorded.len().min(replayed.len()))
        });
        Self {
            equal: recorded == replayed,
            recorded_bytes: recorded.len(),
            replayed_bytes: replayed.len(),
            first_difference,
        }
    }
}

/// The replayed patch's grade against the recorded verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GradeComparison {
    /// The replayed patch resolves the task.
    pub replayed_resolved: bool,
    /// The recorded verdict, when the source has one (mini-swe-agent's `report.json`).
    pub recorded_resolved: Option<bool>,
    /// Whether they agree (`None` without a recorded verdict).
    pub agrees: Option<bool>,
    /// Why grading failed, when it did.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
}

/// Counts and shares over the steps of one trajectory (or many).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StepAgreement {
    /// Steps recorded.
    pub steps: usize,
    /// Steps whose action ran.
    pub replayed: usize,
    /// Replayed steps that agree.
    pub agree: usize,
    /// Replayed steps with the same lines in another order.
    pub reordered: usize,
    /// Replayed steps that diverge (environment differences).
    pub diverge: usize,
    /// Replayed steps that differ but cannot be replayed faithfully.
    pub not_replayable: usize,
    /// Steps without an action.
    pub no_action: usize,
    /// Steps with both codes known.
    pub codes_compared: usize,
    /// Of those, how many agree.
    pub codes_agree: usize,
    /// Sum of the replayed steps' similarities (the mean is this over `replayed`).
    pub similarity_sum: f64,
}

impl StepAgreement {
    /// The counts over `reports`.
    pub fn of<'a>(reports: impl IntoIterator<Item = &'a StepReport>) -> Self {
        let mut counts = Self::default();
        for report in reports {
            counts.add_step(report);
        }
        counts
    }

    fn add_step(&mut self, report: &StepReport) {
        self.steps += 1;
        match report.outcome {
            StepOutcome::NoAction => self.no_action += 1,
            StepOutcome::Agrees => self.agree += 1,
            StepOutcome::Reordered => self.reordered += 1,
            StepOutcome::Diverges => self.diverge += 1,
            StepOutcome::NotReplayable => self.not_replayable += 1,
        }
        if report.outcome != StepOutcome::NoAction {
            self.replayed += 1;
            self.similarity_sum += report.similarity.unwrap_or(0.0);
        }
        if let Some(agrees) = report.code_agrees {
            self.codes_compared += 1;
            self.codes_agree += usize::from(agrees);
        }
    }

    fn add(&mut self, other: &Self) {
        self.steps += other.steps;
        self.replayed += other.replayed;
        self.agree += other.agree;
        self.reordered += other.reordered;
        self.diverge += other.diverge;
        self.not_replayable += other.not_replayable;
        self.no_action += other.no_action;
        self.codes_compared += other.codes_compared;
        self.codes_agree += other.codes_agree;
        self.similarity_sum += other.similarity_sum;
    }

    /// Share of replayed steps that agree.
    pub fn agreement(&self) -> Option<f64> {
        ratio(self.agree, self.replayed)
    }

    /// Share of compared return codes that agree.
    pub fn code_agreement(&self) -> Option<f64> {
        ratio(self.codes_agree, self.codes_compared)
    }

    /// Mean normalised output similarity of the replayed steps.
    pub fn mean_similarity(&self) -> Option<f64> {
        (self.replayed > 0).then(|| self.similarity_sum / self.replayed as f64)
    }
}

fn ratio(part: usize, whole: usize) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

/// One trajectory's report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrajectoryReport {
    /// The trajectory's id.
    pub id: String,
    /// The task.
    pub instance_id: String,
    /// The task's repository (`owner/name`).
    pub repo: String,
    /// The recorded scaffold.
    pub scaffold: String,
    /// Why the trajectory could not be replayed at all (no task, workspace failure).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
    /// Step counts.
    pub agreement: StepAgreement,
    /// The first diverging step (hazards excluded).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub first_divergence: Option<Divergence>,
    /// The first step that differed because it cannot be replayed faithfully.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub first_not_replayable: Option<Divergence>,
    /// The final patch against the recorded submission.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub patch: Option<PatchComparison>,
    /// The grade, with `--grade`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub grade: Option<GradeComparison>,
    /// Every step.
    pub steps: Vec<StepReport>,
}

impl TrajectoryReport {
    /// The report of a replay that could not run.
    pub fn failed(id: &str, instance_id: &str, repo: &str, scaffold: &str, error: String) -> Self {
        Self {
            id: id.to_owned(),
            instance_id: instance_id.to_owned(),
            repo: repo.to_owned(),
            scaffold: scaffold.to_owned(),
            error: Some(error),
            agreement: StepAgreement::default(),
            first_divergence: None,
            first_not_replayable: None,
            patch: None,
            grade: None,
            steps: Vec::new(),
        }
    }

    /// The report of `run` (of trajectory `id` of task `instance_id` in `repo`), whose final
    /// patch is `replayed_patch`, against the recorded `submission`.
    pub fn of(
        id: &str,
        task: (&str, &str),
        run: &ReplayRun,
        submission: Option<&str>,
        replayed_patch: &str,
    ) -> Self {
        let (instance_id, repo) = task;
        let divergence = |wanted: StepOutcome| {
            let position = run
                .reports
                .iter()
                .position(|report| report.outcome == wanted)?;
            let report = &run.reports[position];
            Some(Divergence {
                step: report.index,
                action: run
                    .actions
                    .get(position)?
                    .text()
                    .chars()
                    .take(DIVERGENCE_CHARS)
                    .collect(),
                recorded_code: report.recorded_code,
                replayed_code: report.replayed_code,
                recorded: cut(&run.recorded.get(position)?.output),
                replayed: run
                    .replayed
                    .get(position)?
                    .as_ref()
                    .map(|replayed| cut(&replayed.output))
                    .unwrap_or_default(),
            })
        };
        Self {
            id: id.to_owned(),
            instance_id: instance_id.to_owned(),
            repo: repo.to_owned(),
            scaffold: run.scaffold.name().to_owned(),
            error: None,
            agreement: StepAgreement::of(&run.reports),
            first_divergence: divergence(StepOutcome::Diverges),
            first_not_replayable: divergence(StepOutcome::NotReplayable),
            patch: submission.map(|submission| PatchComparison::of(submission, replayed_patch)),
            grade: None,
            steps: run.reports.clone(),
        }
    }
}

/// The first [`DIVERGENCE_CHARS`] characters of `text`, normalised as compared.
fn cut(text: &str) -> String {
    normalize_output(text)
        .chars()
        .take(DIVERGENCE_CHARS)
        .collect()
}

/// A summary over trajectories (one repository, or all).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Trajectories.
    pub trajectories: usize,
    /// Trajectories that could not be replayed.
    pub failed: usize,
    /// Trajectories with a recorded submission compared.
    pub patches_compared: usize,
    /// Of those, how many replayed patches equal the recorded submission byte for byte.
    pub patches_equal: usize,
    /// Trajectories without a diverging step.
    pub fully_agreeing: usize,
    /// Step counts over all trajectories.
    pub agreement: StepAgreement,
    /// Replayed patches graded.
    pub graded: usize,
    /// Of those, resolved.
    pub resolved: usize,
    /// Grades compared with a recorded verdict.
    pub verdicts_compared: usize,
    /// Of those, agreeing.
    pub verdicts_agree: usize,
}

impl Summary {
    fn add(&mut self, report: &TrajectoryReport) {
        self.trajectories += 1;
        if report.error.is_some() {
            self.failed += 1;
            return;
        }
        if let Some(patch) = &report.patch {
            self.patches_compared += 1;
            self.patches_equal += usize::from(patch.equal);
        }
        self.fully_agreeing += usize::from(report.first_divergence.is_none());
        self.agreement.add(&report.agreement);
        if let Some(grade) = report.grade.as_ref().filter(|grade| grade.error.is_none()) {
            self.graded += 1;
            self.resolved += usize::from(grade.replayed_resolved);
            if let Some(agrees) = grade.agrees {
                self.verdicts_compared += 1;
                self.verdicts_agree += usize::from(agrees);
            }
        }
    }

    /// Share of compared patches that are equal.
    pub fn patch_equality(&self) -> Option<f64> {
        ratio(self.patches_equal, self.patches_compared)
    }
}

/// The whole report: every trajectory, and summaries per repository and overall.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReplayReport {
    /// Over every trajectory.
    pub total: Summary,
    /// Per repository (`owner/name`).
    pub repositories: BTreeMap<String, Summary>,
    /// Every trajectory, in the order replayed.
    pub trajectories: Vec<TrajectoryReport>,
}

impl ReplayReport {
    /// The report over `trajectories`.
    pub fn of(trajectories: Vec<TrajectoryReport>) -> Self {
        let mut report = Self::default();
        for trajectory in &trajectories {
            report.total.add(trajectory);
            report
                .repositories
                .entry(trajectory.repo.clone())
                .or_default()
                .add(trajectory);
        }
        report.trajectories = trajectories;
        report
    }

    /// The per-repository table in Markdown.
    pub fn table(&self) -> String {
        let percent = |share: Option<f64>| {
            share.map_or_else(|| "–".to_owned(), |share| format!("{:.1}%", share * 100.0))
        };
        let mut table = String::from(
            "| repository | trajectories | patches equal | steps | agree | reordered | diverge | not replayable | no action | code agreement | mean similarity | fully agreeing | resolved (verdict agrees) |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
        );
        let rows = self
            .repositories
            .iter()
            .map(|(repo, summary)| (repo.as_str(), summary))
            .chain(std::iter::once(("**all**", &self.total)));
        for (repo, summary) in rows {
            let steps = &summary.agreement;
            let failed = match summary.failed {
                0 => String::new(),
                n => format!(" ({n} failed)"),
            };
            let graded = match summary.graded {
                0 => "–".to_owned(),
                n => format!(
                    "{}/{n} ({}/{})",
                    summary.resolved, summary.verdicts_agree, summary.verdicts_compared
                ),
            };
            table.push_str(&format!(
                "| {repo} | {}{failed} | {}/{} ({}) | {} | {} | {} | {} | {} | {} | {} | {} | {} | {graded} |\n",
                summary.trajectories,
                summary.patches_equal,
                summary.patches_compared,
                percent(summary.patch_equality()),
                steps.steps,
                steps.agree,
                steps.reordered,
                steps.diverge,
                steps.not_replayable,
                steps.no_action,
                percent(steps.code_agreement()),
                steps
                    .mean_similarity()
                    .map_or_else(|| "–".to_owned(), |mean| format!("{mean:.3}")),
                summary.fully_agreeing,
            ));
        }
        table
    }
}

/// How fast the replay ran beside the recorded run's own environment time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Throughput {
    /// Steps whose action ran.
    pub steps: usize,
    /// Seconds the replay spent executing them.
    pub replay_env_seconds: f64,
    /// Seconds the recorded run spent in its environment, over the steps that record it.
    pub recorded_env_seconds: Option<f64>,
    /// Steps with a recorded environment time.
    pub recorded_steps: usize,
}

impl Throughput {
    /// Adds `other`'s steps and seconds (another trajectory's) to these.
    pub fn add(&mut self, other: &Throughput) {
        self.steps += other.steps;
        self.replay_env_seconds += other.replay_env_seconds;
        if let Some(seconds) = other.recorded_env_seconds {
            *self.recorded_env_seconds.get_or_insert(0.0) += seconds;
        }
        self.recorded_steps += other.recorded_steps;
    }
}
