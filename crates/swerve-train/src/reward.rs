//! The reward of one trajectory, composed of parts that are each switched on in the
//! `[reward]` configuration ([`RewardConfig`]) and kept apart in the result
//! ([`RewardBreakdown`]):
//!
//! - **outcome**: 1 when the task was resolved, else 0 (the graded report of `swerve run
//!   --eval`), times SWE-World's α (`unsubmitted_factor`, paper 0.5) when the rollout ended
//!   without submitting (its Eq. 13);
//! - **compression bonus**: SWE-AGILE's `β · min(R_comp, γ)` (`compression_weight`,
//!   `compression_clip`; paper 0.2 and 0.55), only when the outcome is positive, from the
//!   compression rate `swerve context reward --write` recorded in the outcome;
//! - **step penalty**: the long-context RL seed's penalty on the number of turns T, DAPO's
//!   soft overlong punishment counted in turns (its §3.2 and §4.3; App. C: T_max 40 then
//!   80, T_thr 10), subtracted, in one of two forms ([`StepPenaltyForm`]):
//!   - `overlong` (the default), DAPO's overlong reward shaping (DAPO §3.4, Eq. 13) counted
//!     in turns: nothing up to `max_turns − step_buffer`, then linear up to the whole
//!     `step_penalty` at `max_turns`, and the whole of it beyond;
//!   - `linear`: `step_penalty · clamp((T − step_threshold) / (max_turns − step_threshold),
//!     0, 1)`, the penalty growing from `step_threshold` turns;
//! - **format penalties**: `format_exit_penalty` when the run ended in format errors or
//!   repeats (SWE-AGILE's `formaterr_penalty`, 0.5), `format_error_penalty` per step whose
//!   reply had a format error, subtracted.
//!
//! `total` is the sum of the parts. SWE-AGILE adds its format penalty to the last step's
//! reward only; with advantages broadcast from the last step (its `stepwise_advantage.mode:
//! broadcast`), that is the trajectory's reward, which is what `total` is.

use serde::ser::{SerializeStruct, Serializer};
use serde::{Deserialize, Serialize};
use swerve_core::grading::TestMachineryChange;
use swerve_core::trajectory::{ExitReason, Outcome, Trajectory};

/// The `[reward]` section. The default is the plain binary reward: 1 resolved, 0 not.
///
/// Serialized with every key, except that `step_penalty_form` and `step_buffer` are left
/// out while the step penalty is off: they change no reward then, and configurations saved
/// before they existed still match a run's (`swerve run` refuses to resume a directory
/// whose reward settings differ). With the penalty on they are always written, so a saved
/// configuration names the form it used.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RewardConfig {
    /// SWE-World's α: the outcome is multiplied by it when the rollout ended without
    /// submitting (paper 0.5; 1 turns it off).
    pub unsubmitted_factor: f64,
    /// β, the weight of SWE-AGILE's compression bonus (paper 0.2; 0 turns it off).
    pub compression_weight: f64,
    /// γ, where the compression rate stops counting (paper 0.55).
    pub compression_clip: f64,
    /// The most the step-count penalty subtracts (seed: 1; 0 turns it off).
    pub step_penalty: f64,
    /// How the step penalty grows with the turns: DAPO's overlong shaping (the default) or
    /// linear from `step_threshold`.
    pub step_penalty_form: StepPenaltyForm,
    /// `overlong`: the last turns before `max_turns` over which the penalty grows (the
    /// seed's T_thr, 10; DAPO's L_cache counted in turns).
    pub step_buffer: usize,
    /// `linear`: turns up to which there is no step penalty.
    pub step_threshold: usize,
    /// Turns at which the step penalty is whole (the run's maximum turns, `agent.max_steps`;
    /// seed: 40, then 80).
    pub max_turns: usize,
    /// Subtracted when the run ended in format errors or repeats (SWE-AGILE: 0.5).
    pub format_exit_penalty: f64,
    /// Subtracted per step whose reply could not be read as a tool call.
    pub format_error_penalty: f64,
    /// The model directory (`tokenizer.json`, `tokenizer_config.json`) whose tokens the
    /// compression rate counts. With it (or `run.tokenizer`), `swerve run --eval` and
    /// `swerve serve` measure each graded rollout's rate and add the bonus online.
    pub tokenizer: Option<std::path::PathBuf>,
    /// A Jinja chat template to use instead of the tokenizer directory's (e.g. one that
    /// keeps earlier turns' reasoning, which Qwen3's drops).
    pub chat_template: Option<std::path::PathBuf>,
    /// Which compression rate the online bonus uses: SWE-AGILE's code (the final
    /// conversation under the window vs. with all reasoning) or the paper's Eq. 3 (sums of
    /// the per-step tuples).
    pub compression_rate: CompressionRate,
    /// What a patch's change to the test machinery (`conftest.py`, pytest's settings, the
    /// repository's own runner, …) does to its reward: `reject` (the default; reward 0
    /// whatever the tests say) or `flag` (graded by the tests run with the machinery put
    /// back, the change named in the report). The tests never run with the change either
    /// way (docs/security.md, "Grading").
    pub test_machinery_change: TestMachineryChange,
}

/// Which definition of SWE-AGILE's compression rate (`reward.compression_rate`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CompressionRate {
    /// `1 − |final conversation under the window| / |with all reasoning|` (upstream code).
    #[default]
    Code,
    /// `1 − L_hybrid / L_full` over the per-step tuples (paper Eq. 3).
    Paper,
}

impl Default for RewardConfig {
    fn default() -> Self {
        Self {
            unsubmitted_factor: 1.0,
            compression_weight: 0.0,
            compression_clip: 0.55,
            step_penalty: 0.0,
            step_penalty_form: StepPenaltyForm::Overlong,
            step_buffer: 10,
            step_threshold: 10,
            max_turns: 40,
            format_exit_penalty: 0.0,
            format_error_penalty: 0.0,
            tokenizer: None,
            chat_template: None,
            compression_rate: CompressionRate::Code,
            test_machinery_change: TestMachineryChange::Reject,
        }
    }
}

impl Serialize for RewardConfig {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut state = serializer.serialize_struct("RewardConfig", 14)?;
        state.serialize_field("unsubmitted_factor", &self.unsubmitted_factor)?;
        state.serialize_field("compression_weight", &self.compression_weight)?;
        state.serialize_field("compression_clip", &self.compression_clip)?;
        state.serialize_field("step_penalty", &self.step_penalty)?;
        if self.step_penalty > 0.0 {
            state.serialize_field("step_penalty_form", &self.step_penalty_form)?;
            state.serialize_field("step_buffer", &self.step_buffer)?;
        } else {
            state.skip_field("step_penalty_form")?;
            state.skip_field("step_buffer")?;
        }
        state.serialize_field("step_threshold", &self.step_threshold)?;
        state.serialize_field("max_turns", &self.max_turns)?;
        state.serialize_field("format_exit_penalty", &self.format_exit_penalty)?;
        state.serialize_field("format_error_penalty", &self.format_error_penalty)?;
        // Written only when set, so configurations saved before they existed still match.
        match &self.tokenizer {
            Some(dir) => state.serialize_field("tokenizer", dir)?,
            None => state.skip_field("tokenizer")?,
        }
        match &self.chat_template {
            Some(file) => state.serialize_field("chat_template", file)?,
            None => state.skip_field("chat_template")?,
        }
        if self.compression_rate == CompressionRate::Code {
            state.skip_field("compression_rate")?;
        } else {
            state.serialize_field("compression_rate", &self.compression_rate)?;
        }
        // Written only when not the default, so configurations saved before it existed match.
        if self.test_machinery_change == TestMachineryChange::default() {
            state.skip_field("test_machinery_change")?;
        } else {
            state.serialize_field("test_machinery_change", &self.test_machinery_change)?;
        }
        state.end()
    }
}

/// How the step penalty grows with the number of turns T (`reward.step_penalty_form`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StepPenaltyForm {
    /// DAPO's soft overlong punishment (DAPO §3.4, Eq. 13) in turns, as the long-context RL
    /// seed applies it (§4.3): with s = `max_turns − step_buffer`, nothing while T ≤ s,
    /// `(T − s) / step_buffer` of the penalty while s < T ≤ `max_turns`, all of it beyond.
    #[default]
    Overlong,
    /// `clamp((T − step_threshold) / (max_turns − step_threshold), 0, 1)` of the penalty:
    /// it grows from `step_threshold` turns.
    Linear,
}

impl RewardConfig {
    /// Checks the settings; the error names the key and what to give instead.
    pub fn validate(&self) -> Result<(), RewardError> {
        let invalid = |key: &'static str, message: String| RewardError::Config { key, message };
        for (key, value) in [
            ("unsubmitted_factor", self.unsubmitted_factor),
            ("compression_weight", self.compression_weight),
            ("compression_clip", self.compression_clip),
            ("step_penalty", self.step_penalty),
            ("format_exit_penalty", self.format_exit_penalty),
            ("format_error_penalty", self.format_error_penalty),
        ] {
            if !value.is_finite() || value < 0.0 {
                return Err(invalid(
                    key,
                    format!(
                        "is {value}; give a number of at least 0 (penalties are amounts \
                         subtracted: 0.5, not -0.5)"
                    ),
                ));
            }
        }
        if self.step_penalty == 0.0 {
            return Ok(());
        }
        match self.step_penalty_form {
            StepPenaltyForm::Overlong if self.step_buffer == 0 => Err(invalid(
                "step_buffer",
                "is 0; give the number of turns before max_turns over which the step penalty \
                 grows (the seed's 10)"
                    .into(),
            )),
            StepPenaltyForm::Overlong if self.step_buffer > self.max_turns => Err(invalid(
                "step_buffer",
                format!(
                    "is {}, more than max_turns {}; the step penalty grows over the last \
                     step_buffer turns before max_turns",
                    self.step_buffer, self.max_turns
                ),
            )),
            StepPenaltyForm::Linear if self.max_turns <= self.step_threshold => Err(invalid(
                "max_turns",
                format!(
                    "is {}, not above step_threshold {}; the linear step penalty grows from \
                     step_threshold to max_turns",
                    self.max_turns, self.step_threshold
                ),
            )),
            _ => Ok(()),
        }
    }

    /// Whether the compression bonus is on (it needs a recorded compression rate).
    pub fn uses_compression(&self) -> bool {
        self.compression_weight > 0.0
    }
}

/// A trajectory's reward and its parts; `total` is their sum.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RewardBreakdown {
    /// The reward: `outcome + compression_bonus + step_penalty + format_penalty`.
    pub total: f64,
    /// Whether the task was resolved.
    pub resolved: bool,
    /// Whether the rollout ended by submitting.
    pub submitted: bool,
    /// 1 or 0 for resolved, times α when not submitted.
    pub outcome: f64,
    /// `β · min(rate, γ)` when the outcome is positive, else 0.
    pub compression_bonus: f64,
    /// The compression rate the bonus used, when it needed one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compression_rate: Option<f64>,
    /// The step-count penalty, 0 or negative.
    pub step_penalty: f64,
    /// The format penalties, 0 or negative.
    pub format_penalty: f64,
    /// The number of steps (turns).
    pub steps: usize,
    /// Steps whose reply had a format error.
    pub format_errors: usize,
}

/// Why a trajectory has no reward.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RewardError {
    /// A setting is out of range.
    #[error("reward.{key} {message}")]
    Config {
        /// The key under `[reward]`.
        key: &'static str,
        /// What is wrong and what to give.
        message: String,
    },
    /// The run did not finish.
    #[error("trajectory {id}: no outcome record (the run did not finish)\nhint: run it again")]
    NoOutcome {
        /// The trajectory id.
        id: String,
    },
    /// Grading failed for the machinery's reason (`error_class` `infra`): no reward at all.
    #[error(
        "trajectory {id}: grading failed for the machinery's reason (error_class infra), not \
         the model's, so it earns no reward\nhint: grade it again once the environment is fixed \
         (swerve eval), or leave it out"
    )]
    NoReward {
        /// The trajectory id.
        id: String,
    },
    /// The outcome was never graded.
    #[error(
        "trajectory {id}: the outcome has no eval_report saying `resolved` and no reward; \
         grade it first (swerve run --eval)"
    )]
    NotGraded {
        /// The trajectory id.
        id: String,
    },
    /// The compression bonus is on and no rate was recorded.
    #[error(
        "trajectory {id}: reward.compression_weight is {weight} but the outcome has no \
         extra.compression_reward.compression_rate; record it with `swerve context reward \
         FILES --tokenizer DIR --write`, or set reward.compression_weight = 0"
    )]
    NoCompressionRate {
        /// The trajectory id.
        id: String,
        /// The configured β.
        weight: f64,
    },
}

/// The reward of `trajectory` under `config`.
pub fn reward(
    trajectory: &Trajectory,
    config: &RewardConfig,
) -> Result<RewardBreakdown, RewardError> {
    config.validate()?;
    let id = &trajectory.header.id;
    let outcome_record = trajectory
        .outcome
        .as_ref()
        .ok_or_else(|| RewardError::NoOutcome { id: id.clone() })?;
    if earns_no_reward(outcome_record) {
        return Err(RewardError::NoReward { id: id.clone() });
    }
    let resolved = resolved(outcome_record, &trajectory.header.instance_id)
        .ok_or_else(|| RewardError::NotGraded { id: id.clone() })?;
    let submitted = outcome_record.exit_reason == ExitReason::Submitted;
    let mut outcome = if resolved { 1.0 } else { 0.0 };
    if !submitted {
        outcome *= config.unsubmitted_factor;
    }
    let (compression_bonus, compression_rate) = if config.uses_compression() && outcome > 0.0 {
        let rate =
            compression_rate(outcome_record).ok_or_else(|| RewardError::NoCompressionRate {
                id: id.clone(),
                weight: config.compression_weight,
            })?;
        (
            compression_bonus(rate, config.compression_weight, config.compression_clip),
            Some(rate),
        )
    } else {
        (0.0, None)
    };
    let steps = trajectory.steps.len();
    let format_errors = trajectory
        .steps
        .iter()
        .filter(|step| step.format_error.is_some())
        .count();
    let step_penalty = -step_penalty(steps, config);
    let ended_in_format_errors = matches!(
        outcome_record.exit_reason,
        ExitReason::FormatErrors | ExitReason::Repeating
    );
    let format_penalty = -(config.format_error_penalty * format_errors as f64
        + if ended_in_format_errors {
            config.format_exit_penalty
        } else {
            0.0
        });
    Ok(RewardBreakdown {
        total: outcome + compression_bonus + step_penalty + format_penalty,
        resolved,
        submitted,
        outcome,
        compression_bonus,
        compression_rate,
        step_penalty,
        format_penalty,
        steps,
        format_errors,
    })
}

/// SWE-AGILE's compression bonus `β · min(rate, γ)`.
pub fn compression_bonus(rate: f64, weight: f64, clip: f64) -> f64 {
    weight * rate.min(clip)
}

/// The step-count penalty of `steps` turns, as a positive amount (0 when it is off), in
/// the configured form. The penalty grows linearly from `start` turns to the whole of it
/// at `max_turns`: `start` is `max_turns − step_buffer` for `overlong`, `step_threshold`
/// for `linear`.
pub fn step_penalty(steps: usize, config: &RewardConfig) -> f64 {
    let start = match config.step_penalty_form {
        StepPenaltyForm::Overlong => config.max_turns.saturating_sub(config.step_buffer),
        StepPenaltyForm::Linear => config.step_threshold,
    };
    if config.step_penalty == 0.0 || steps <= start {
        return 0.0;
    }
    let over = (steps - start) as f64;
    let span = config.max_turns.saturating_sub(start).max(1) as f64;
    config.step_penalty * (over / span).min(1.0)
}

/// Whether the run resolved its task: its `eval_report` says `resolved` (swerve's report,
/// or SWE-bench's keyed by instance id), else its `reward` is positive (an import's own
/// grade). `None` when the outcome has neither.
pub fn resolved(outcome: &Outcome, instance_id: &str) -> Option<bool> {
    let from_report = outcome.eval_report.as_ref().and_then(|report| {
        report
            .get("resolved")
            .or_else(|| report.get(instance_id)?.get("resolved"))?
            .as_bool()
    });
    from_report.or_else(|| outcome.reward.map(|reward| reward > 0.0))
}

/// Whether an evaluation report (one instance's, as `Grade::to_json` or `swerve eval`'s
/// `results.json` writes it) failed for a reason that is not the model's: the machinery
/// (`error_class = "infra"`: workspace, environment, sandbox or repository reset). Such a
/// rollout earns no reward (neither 1 nor 0): trainers leave it out rather than learn from
/// it as a failure.
pub fn infra_failure(report: &serde_json::Value) -> bool {
    report
        .get("error_class")
        .and_then(serde_json::Value::as_str)
        == Some("infra")
}

/// Whether `outcome` was graded with an [`infra_failure`]: such a rollout earns no reward.
pub fn earns_no_reward(outcome: &Outcome) -> bool {
    outcome.eval_report.as_ref().is_some_and(infra_failure)
}

/// The compression rate `swerve context reward --write` recorded in the outcome.
pub fn compression_rate(outcome: &Outcome) -> Option<f64> {
    outcome
        .extra
        .get("compression_reward")?
        .get("compression_rate")?
        .as_f64()
}

/// The reward of one trajectory, in parts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RewardParts {
    /// `I_success`: 1 when the task was resolved, else 0.
    pub resolved: f64,
    /// `β · min(R_comp, γ)` (`compression_weight`, `compression_clip`) when resolved, else 0.
    pub compression_bonus: f64,
    /// What the last step gets added: `−format_exit_penalty` when the run ended in format
    /// errors or repeats, else 0.
    pub format_penalty: f64,
}

impl RewardParts {
    /// The reward every step gets: `resolved + compression_bonus`.
    pub fn trajectory(&self) -> f64 {
        self.resolved + self.compression_bonus
    }

    /// The last step's reward: the trajectory's plus the format penalty.
    pub fn last_step(&self) -> f64 {
        self.trajectory() + self.format_penalty
    }
}

/// SWE-AGILE's compression-aware reward (paper Eq. 4, FORMATS b.4) of a run that
/// `resolved` (or not) the task with compression rate `compression_rate`, ending with
/// `exit_reason`: `R = I_success · (1 + β · min(R_comp, γ))` every step, the last step of a
/// run that ended in format errors or repeats also losing `format_exit_penalty` (upstream's
/// `FORMAT_ERR` and `REPEATING`). `swerve context reward` reports it; [`reward`] composes
/// the same bonus with the other parts.
pub fn compression_reward(
    resolved: bool,
    compression_rate: f64,
    exit_reason: ExitReason,
    config: &RewardConfig,
) -> RewardParts {
    let penalized = matches!(
        exit_reason,
        ExitReason::FormatErrors | ExitReason::Repeating
    );
    RewardParts {
        resolved: if resolved { 1.0 } else { 0.0 },
        compression_bonus: if resolved {
            compression_bonus(
                compression_rate,
                config.compression_weight,
                config.compression_clip,
            )
        } else {
            0.0
        },
        format_penalty: if penalized {
            -config.format_exit_penalty
        } else {
            0.0
        },
    }
}

/// The reward of a loaded trajectory; the error names its file.
pub fn reward_of(
    loaded: &swerve_core::trajectory::import::Loaded,
    config: &RewardConfig,
) -> anyhow::Result<RewardBreakdown> {
    use anyhow::Context;
    reward(&loaded.trajectory, config).with_context(|| loaded.path.display().to_string())
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use swerve_core::trajectory::{Header, Step};

    use super::*;

    #[test]
    fn hand_computed_compression_rewards() {
        let paper = RewardConfig {
            compression_weight: 0.2,
            ..RewardConfig::default()
        };
        // Resolved, compression 0.4 under γ = 0.55: 1 + 0.2 · 0.4 = 1.08.
        let parts = compression_reward(true, 0.4, ExitReason::Submitted, &paper);
        assert!(close(parts.compression_bonus, 0.08));
        assert!(close(parts.trajectory(), 1.08) && close(parts.last_step(), 1.08));
        // Compression 0.9 is clipped at γ: 1 + 0.2 · 0.55 = 1.11.
        let clipped = compression_reward(true, 0.9, ExitReason::Submitted, &paper);
        assert!(close(clipped.trajectory(), 1.11));
        // Unresolved: no bonus whatever the compression.
        let failed = compression_reward(false, 0.9, ExitReason::MaxSteps, &paper);
        assert_eq!((failed.resolved, failed.trajectory()), (0.0, 0.0));
        // Upstream's code defaults with its penalty: β 1, γ 0.625, -0.5 on the last step.
        let code = RewardConfig {
            compression_weight: 1.0,
            compression_clip: 0.625,
            format_exit_penalty: 0.5,
            ..RewardConfig::default()
        };
        let formats = compression_reward(false, 0.3, ExitReason::FormatErrors, &code);
        assert!(close(formats.trajectory(), 0.0) && close(formats.last_step(), -0.5));
        let repeats = compression_reward(true, 0.7, ExitReason::Repeating, &code);
        assert!(close(repeats.trajectory(), 1.625) && close(repeats.last_step(), 1.125));
        let others = compression_reward(true, 0.3, ExitReason::EnvError, &code);
        assert_eq!(others.format_penalty, 0.0);
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    /// A graded trajectory of `steps` steps, `format_errors` of them with a format error.
    fn graded(steps: usize, format_errors: usize, exit: ExitReason, resolved: bool) -> Trajectory {
        let mut trajectory = Trajectory::new(Header::new("t__0", "t"));
        for index in 0..steps {
            let mut step = Step::new(index, "reply");
            if index < format_errors {
                step.format_error = Some("no tool call".into());
            }
            trajectory.steps.push(step);
        }
        let mut outcome = Outcome::new(exit, "diff");
        outcome.eval_report = Some(json!({ "resolved": resolved }));
        outcome.reward = Some(if resolved { 1.0 } else { 0.0 });
        trajectory.outcome = Some(outcome);
        trajectory
    }

    #[test]
    fn the_default_is_the_binary_reward() {
        let config = RewardConfig::default();
        let won = reward(&graded(50, 3, ExitReason::Submitted, true), &config).unwrap();
        assert_eq!(
            (won.total, won.outcome, won.steps, won.format_errors),
            (1.0, 1.0, 50, 3)
        );
        let lost = reward(&graded(5, 0, ExitReason::MaxSteps, false), &config).unwrap();
        assert_eq!(
            (lost.total, lost.resolved, lost.submitted),
            (0.0, false, false)
        );
    }

    /// The step-penalty settings of one of the seed's RL stages (App. C, Table 3: T_max 40
    /// in stage 1, 80 in stage 2; T_thr 10 in both), in `form`, weighing `weight`.
    fn stage(form: StepPenaltyForm, max_turns: usize, weight: f64) -> RewardConfig {
        RewardConfig {
            step_penalty: weight,
            step_penalty_form: form,
            step_buffer: 10,
            step_threshold: 10,
            max_turns,
            ..RewardConfig::default()
        }
    }

    /// Checks `step_penalty` against `(turns, penalty)` rows computed by hand, and the reward
    /// of a resolved, submitted rollout (1 − penalty) at each.
    fn check_table(config: &RewardConfig, table: &[(usize, f64)]) {
        for &(turns, expected) in table {
            let penalty = step_penalty(turns, config);
            assert!(
                close(penalty, expected),
                "{turns} turns: {penalty} ≠ {expected}"
            );
            let parts = reward(&graded(turns, 0, ExitReason::Submitted, true), config).unwrap();
            assert!(
                close(parts.step_penalty, -expected),
                "{turns} turns: {parts:?}"
            );
            assert!(
                close(parts.total, 1.0 - expected),
                "{turns} turns: {parts:?}"
            );
        }
    }

    /// DAPO's overlong reward shaping (DAPO §3.4, Eq. 13), R_length(y) = 0 for |y| ≤ L_max −
    /// L_cache, ((L_max − L_cache) − |y|) / L_cache up to L_max, −1 beyond, counted in turns
    /// as the long-context RL seed applies it (§4.3: "Following DAPO formulation … a
    /// trajectory length penalty … for exceeding a predefined number of steps"; §3.2: the
    /// penalty "scales linearly within a specified interval"; App. C, Table 3: L_max =
    /// T_max, L_cache = T_thr = 10).
    #[test]
    fn the_overlong_step_penalty_is_dapo_eq_13_in_turns() {
        // Stage 1: T_max 40, so the penalty grows over turns 31 to 40.
        let stage1 = stage(StepPenaltyForm::Overlong, 40, 1.0);
        check_table(
            &stage1,
            &[
                (0, 0.0),
                (10, 0.0),
                (25, 0.0),
                (30, 0.0),  // T = T_max − T_thr: still no penalty
                (31, 0.1),  // (31 − 30) / 10
                (35, 0.5),  // (35 − 30) / 10
                (39, 0.9),  // (39 − 30) / 10
                (40, 1.0),  // T = T_max: the whole penalty
                (41, 1.0),  // beyond T_max: −1
                (100, 1.0), // and no more
            ],
        );
        // Stage 2: T_max 80 with the same T_thr 10: turns 71 to 80.
        let stage2 = stage(StepPenaltyForm::Overlong, 80, 1.0);
        check_table(
            &stage2,
            &[
                (40, 0.0),
                (70, 0.0),
                (72, 0.2),
                (75, 0.5),
                (78, 0.8),
                (80, 1.0),
                (81, 1.0),
            ],
        );
        // A weight scales every value: 0.5 · (35 − 30) / 10 = 0.25.
        check_table(
            &stage(StepPenaltyForm::Overlong, 40, 0.5),
            &[(30, 0.0), (35, 0.25), (40, 0.5), (60, 0.5)],
        );
        // A buffer as long as max_turns penalizes from the first turn: 4 / 40 = 0.1.
        let whole = RewardConfig {
            step_buffer: 40,
            ..stage1.clone()
        };
        check_table(&whole, &[(0, 0.0), (4, 0.1), (20, 0.5), (40, 1.0)]);
        // Unresolved at 35 turns: 0 − 0.5.
        let lost = reward(&graded(35, 0, ExitReason::MaxSteps, false), &stage1).unwrap();
        assert!(close(lost.total, -0.5), "{lost:?}");
    }

    /// The linear reading of the seed's T_thr (the form swerve used before the overlong one,
    /// kept as `step_penalty_form = "linear"`): 0 up to T_thr, then
    /// (T − T_thr) / (T_max − T_thr), whole from T_max (§4.3; App. C, Table 3).
    #[test]
    fn the_linear_step_penalty_grows_from_the_threshold() {
        check_table(
            &stage(StepPenaltyForm::Linear, 40, 1.0),
            &[
                (0, 0.0),
                (10, 0.0),
                (16, 0.2), // 6 / 30
                (25, 0.5), // 15 / 30
                (34, 0.8), // 24 / 30
                (40, 1.0),
                (70, 1.0),
            ],
        );
        check_table(
            &stage(StepPenaltyForm::Linear, 80, 1.0),
            &[(10, 0.0), (45, 0.5), (66, 0.8), (80, 1.0)],
        );
    }

    #[test]
    fn the_overlong_form_is_the_default() {
        let config = RewardConfig {
            step_penalty: 1.0,
            ..RewardConfig::default()
        };
        assert_eq!(config.step_penalty_form, StepPenaltyForm::Overlong);
        assert_eq!((config.step_buffer, config.max_turns), (10, 40));
        assert!(close(step_penalty(25, &config), 0.0));
        assert!(close(step_penalty(35, &config), 0.5));
    }

    /// The form and buffer are saved only while the penalty is on; every value reads back.
    #[test]
    fn the_form_is_saved_with_a_penalty_that_is_on() {
        let keys = |config: &RewardConfig| {
            let value = serde_json::to_value(config).unwrap();
            let back: RewardConfig = serde_json::from_value(value.clone()).unwrap();
            assert_eq!(&back, config);
            value
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect::<Vec<_>>()
        };
        let off = keys(&RewardConfig::default());
        assert!(!off.contains(&"step_penalty_form".to_owned()), "{off:?}");
        assert!(!off.contains(&"step_buffer".to_owned()), "{off:?}");
        let linear = stage(StepPenaltyForm::Linear, 80, 0.5);
        let on = keys(&linear);
        assert!(on.contains(&"step_penalty_form".to_owned()), "{on:?}");
        assert!(on.contains(&"step_buffer".to_owned()), "{on:?}");
        assert_eq!(
            serde_json::to_value(&linear).unwrap()["step_penalty_form"],
            "linear"
        );
        let unknown = serde_json::from_value::<RewardConfig>(json!({"step_form": "linear"}));
        assert!(unknown.unwrap_err().to_string().contains("step_form"));
    }

    /// SWE-World's reward (App. D, Eq. 13): r̂, or α · r̂ when the rollout did not submit.
    #[test]
    fn alpha_scales_resolved_rollouts_that_did_not_submit() {
        let config = RewardConfig {
            unsubmitted_factor: 0.5,
            ..RewardConfig::default()
        };
        let cut = reward(&graded(8, 0, ExitReason::MaxSteps, true), &config).unwrap();
        assert_eq!((cut.outcome, cut.total, cut.submitted), (0.5, 0.5, false));
        let submitted = reward(&graded(8, 0, ExitReason::Submitted, true), &config).unwrap();
        assert_eq!(submitted.total, 1.0);
        let lost = reward(&graded(8, 0, ExitReason::MaxSteps, false), &config).unwrap();
        assert_eq!(lost.total, 0.0);
    }

    /// SWE-AGILE's reward (§2.3, Eq. 4): I_success · (1 + β · min(R_comp, γ)).
    #[test]
    fn compression_bonus_needs_success_and_a_recorded_rate() {
        let config = RewardConfig {
            compression_weight: 0.2,
            compression_clip: 0.55,
            ..RewardConfig::default()
        };
        let mut won = graded(4, 0, ExitReason::Submitted, true);
        let error = reward(&won, &config).unwrap_err();
        assert!(matches!(error, RewardError::NoCompressionRate { .. }));
        assert!(
            error.to_string().contains("swerve context reward"),
            "{error}"
        );
        let outcome = won.outcome.as_mut().unwrap();
        outcome.extra.insert(
            "compression_reward".into(),
            json!({"compression_rate": 0.4}),
        );
        // 1 + 0.2 · 0.4 = 1.08.
        let parts = reward(&won, &config).unwrap();
        assert!(close(parts.compression_bonus, 0.08) && close(parts.total, 1.08));
        assert_eq!(parts.compression_rate, Some(0.4));
        // Clipped at γ: 1 + 0.2 · 0.55 = 1.11.
        let outcome = won.outcome.as_mut().unwrap();
        outcome.extra.insert(
            "compression_reward".into(),
            json!({"compression_rate": 0.9}),
        );
        assert!(close(reward(&won, &config).unwrap().total, 1.11));
        // Unresolved: no bonus, no rate needed.
        let lost = graded(4, 0, ExitReason::Submitted, false);
        assert_eq!(reward(&lost, &config).unwrap().total, 0.0);
    }

    #[test]
    fn format_penalties_on_exit_and_per_error() {
        let config = RewardConfig {
            format_exit_penalty: 0.5,
            format_error_penalty: 0.1,
            ..RewardConfig::default()
        };
        // Ended in format errors with 3 of them: -0.5 - 3 · 0.1 = -0.8.
        let ended = reward(&graded(6, 3, ExitReason::FormatErrors, false), &config).unwrap();
        assert!(close(ended.format_penalty, -0.8) && close(ended.total, -0.8));
        // Repeats count as format errors' exit (SWE-AGILE's REPEATING).
        let repeated = reward(&graded(6, 0, ExitReason::Repeating, true), &config).unwrap();
        assert!(close(repeated.total, 0.5));
        // One stray format error on a resolved, submitted run: 1 - 0.1.
        let stray = reward(&graded(6, 1, ExitReason::Submitted, true), &config).unwrap();
        assert!(close(stray.total, 0.9));
    }

    /// SWE-AGILE §2.3, Eq. 4: R = I_success · (1 + β · min(R_comp, γ)), β = 0.2, γ = 0.55
    /// (App. B); the bonus part is β · min(R_comp, γ), hand-computed per row.
    #[test]
    fn compression_bonus_follows_eq_4() {
        for (rate, bonus) in [
            (0.0, 0.0),
            (0.3, 0.06),
            (0.55, 0.11),
            (0.8, 0.11), // clipped at γ
        ] {
            assert!(close(compression_bonus(rate, 0.2, 0.55), bonus), "{rate}");
        }
    }

    #[test]
    fn online_tokenizer_settings_are_saved_only_when_set() {
        let plain = serde_json::to_string(&RewardConfig::default()).unwrap();
        for key in ["tokenizer", "chat_template", "compression_rate"] {
            assert!(!plain.contains(key), "{plain}");
        }
        let online = RewardConfig {
            tokenizer: Some("/models/q".into()),
            chat_template: Some("t.jinja".into()),
            compression_rate: CompressionRate::Paper,
            ..RewardConfig::default()
        };
        let text = serde_json::to_string(&online).unwrap();
        assert!(text.contains("\"tokenizer\":\"/models/q\""), "{text}");
        assert!(text.contains("\"compression_rate\":\"paper\""), "{text}");
        let back: RewardConfig = serde_json::from_str(&text).unwrap();
        assert_eq!(back, online);
    }

    #[test]
    fn all_parts_compose() {
        let config = RewardConfig {
            unsubmitted_factor: 0.5,
            compression_weight: 0.2,
            compression_clip: 0.55,
            step_penalty: 1.0,
            step_penalty_form: StepPenaltyForm::Overlong,
            step_buffer: 10,
            step_threshold: 10,
            max_turns: 40,
            format_exit_penalty: 0.5,
            format_error_penalty: 0.1,
            ..RewardConfig::default()
        };
        let mut trajectory = graded(32, 2, ExitReason::MaxSteps, true);
        let outcome = trajectory.outcome.as_mut().unwrap();
        outcome.extra.insert(
            "compression_reward".into(),
            json!({"compression_rate": 0.3}),
        );
        // 0.5 (α) + 0.2 · 0.3 - (32 - 30)/10 - 2 · 0.1 = 0.5 + 0.06 - 0.2 - 0.2 = 0.16.
        let parts = reward(&trajectory, &config).unwrap();
        assert!(close(parts.total, 0.16), "{parts:?}");
        let sum =
            parts.outcome + parts.compression_bonus + parts.step_penalty + parts.format_penalty;
        assert!(close(parts.total, sum));
    }

    #[test]
    fn ungraded_and_unfinished_runs_are_errors() {
        let config = RewardConfig::default();
        let mut trajectory = graded(2, 0, ExitReason::Submitted, true);
        let outcome = trajectory.outcome.as_mut().unwrap();
        outcome.eval_report = None;
        outcome.reward = None;
        let error = reward(&trajectory, &config).unwrap_err();
        assert!(error.to_string().contains("swerve run --eval"), "{error}");
        trajectory.outcome = None;
        assert!(matches!(
            reward(&trajectory, &config),
            Err(RewardError::NoOutcome { .. })
        ));
    }

    #[test]
    fn an_infra_failure_earns_no_reward_not_a_zero() {
        let config = RewardConfig::default();
        let mut trajectory = graded(5, 0, ExitReason::Submitted, false);
        let outcome = trajectory.outcome.as_mut().unwrap();
        assert!(!earns_no_reward(outcome));
        outcome.eval_report = Some(json!({
            "resolved": false, "error_class": "infra", "infra_failure": true,
            "infra_failure_reason": "test_runner_missing",
        }));
        outcome.reward = None;
        assert!(earns_no_reward(outcome));
        let error = reward(&trajectory, &config).unwrap_err();
        assert!(matches!(error, RewardError::NoReward { .. }), "{error}");
        assert!(error.to_string().contains("no reward"), "{error}");
    }

    #[test]
    fn the_report_decides_over_the_recorded_reward() {
        let mut outcome = Outcome::new(ExitReason::Submitted, "");
        assert_eq!(resolved(&outcome, "a"), None);
        outcome.reward = Some(1.0);
        assert_eq!(resolved(&outcome, "a"), Some(true));
        outcome.eval_report = Some(json!({"a": {"resolved": false}}));
        assert_eq!(resolved(&outcome, "a"), Some(false));
        outcome.eval_report = Some(json!({"resolved": true}));
        outcome.reward = Some(0.0);
        assert_eq!(resolved(&outcome, "a"), Some(true));
    }

    #[test]
    fn bad_settings_name_their_key() {
        let negative = RewardConfig {
            format_exit_penalty: -0.5,
            ..RewardConfig::default()
        };
        let message = negative.validate().unwrap_err().to_string();
        assert!(
            message.starts_with("reward.format_exit_penalty is -0.5"),
            "{message}"
        );
        let inverted = RewardConfig {
            step_threshold: 40,
            max_turns: 10,
            ..stage(StepPenaltyForm::Linear, 40, 1.0)
        };
        let message = inverted.validate().unwrap_err().to_string();
        assert!(message.starts_with("reward.max_turns is 10"), "{message}");
        // The threshold is the linear form's: the overlong form does not read it.
        let overlong = RewardConfig {
            step_penalty_form: StepPenaltyForm::Overlong,
            ..inverted
        };
        assert!(overlong.validate().is_ok());
        for (buffer, expected) in [
            (0, "reward.step_buffer is 0"),
            (41, "reward.step_buffer is 41, more than max_turns 40"),
        ] {
            let config = RewardConfig {
                step_buffer: buffer,
                ..stage(StepPenaltyForm::Overlong, 40, 1.0)
            };
            let message = config.validate().unwrap_err().to_string();
            assert!(message.starts_with(expected), "{message}");
            // Off, the shape of the penalty is not checked.
            let off = RewardConfig {
                step_penalty: 0.0,
                ..config
            };
            assert!(off.validate().is_ok());
        }
    }
}
