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
//! - **step penalty**: the long-context RL seed's linear penalty on the number of turns T,
//!   `step_penalty · clamp((T − step_threshold) / (max_turns − step_threshold), 0, 1)`
//!   (seed: threshold 10, max turns 40 then 80), subtracted;
//! - **format penalties**: `format_exit_penalty` when the run ended in format errors or
//!   repeats (SWE-AGILE's `formaterr_penalty`, 0.5), `format_error_penalty` per step whose
//!   reply had a format error, subtracted.
//!
//! `total` is the sum of the parts. SWE-AGILE adds its format penalty to the last step's
//! reward only; with advantages broadcast from the last step (its `stepwise_advantage.mode:
//! broadcast`), that is the trajectory's reward, which is what `total` is.

use serde::{Deserialize, Serialize};
use swerve_core::trajectory::{ExitReason, Outcome, Trajectory};

/// The `[reward]` section. The default is the plain binary reward: 1 resolved, 0 not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// Turns up to which there is no step penalty (seed: 10).
    pub step_threshold: usize,
    /// Turns at which the step penalty is whole (the run's maximum turns; seed: 40, 80).
    pub max_turns: usize,
    /// Subtracted when the run ended in format errors or repeats (SWE-AGILE: 0.5).
    pub format_exit_penalty: f64,
    /// Subtracted per step whose reply could not be read as a tool call.
    pub format_error_penalty: f64,
}

impl Default for RewardConfig {
    fn default() -> Self {
        Self {
            unsubmitted_factor: 1.0,
            compression_weight: 0.0,
            compression_clip: 0.55,
            step_penalty: 0.0,
            step_threshold: 10,
            max_turns: 40,
            format_exit_penalty: 0.0,
            format_error_penalty: 0.0,
        }
    }
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
        if self.step_penalty > 0.0 && self.max_turns <= self.step_threshold {
            return Err(invalid(
                "max_turns",
                format!(
                    "is {}, not above step_threshold {}; the step penalty grows from \
                     step_threshold to max_turns",
                    self.max_turns, self.step_threshold
                ),
            ));
        }
        Ok(())
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
    #[error("trajectory {id}: no outcome record (the run did not finish); run it again")]
    NoOutcome {
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

/// The step-count penalty of `steps` turns, as a positive amount (0 when it is off).
pub fn step_penalty(steps: usize, config: &RewardConfig) -> f64 {
    if config.step_penalty == 0.0 || steps <= config.step_threshold {
        return 0.0;
    }
    let over = (steps - config.step_threshold) as f64;
    let span = config
        .max_turns
        .saturating_sub(config.step_threshold)
        .max(1) as f64;
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

/// The compression rate `swerve context reward --write` recorded in the outcome.
pub fn compression_rate(outcome: &Outcome) -> Option<f64> {
    outcome
        .extra
        .get("compression_reward")?
        .get("compression_rate")?
        .as_f64()
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use swerve_core::trajectory::{Header, Step};

    use super::*;

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

    #[test]
    fn step_penalty_is_linear_between_threshold_and_max_turns() {
        let config = RewardConfig {
            step_penalty: 1.0,
            step_threshold: 10,
            max_turns: 40,
            ..RewardConfig::default()
        };
        let at = |steps| reward(&graded(steps, 0, ExitReason::Submitted, true), &config);
        assert_eq!(at(10).unwrap().total, 1.0);
        // 25 turns: (25 - 10) / (40 - 10) = 0.5 subtracted.
        let half = at(25).unwrap();
        assert!(close(half.step_penalty, -0.5) && close(half.total, 0.5));
        // 40 turns and beyond: the whole penalty.
        assert!(close(at(40).unwrap().total, 0.0));
        assert!(close(at(70).unwrap().total, 0.0));
        // Unresolved at 16 turns: 0 - 6/30 = -0.2.
        let lost = reward(&graded(16, 0, ExitReason::MaxSteps, false), &config).unwrap();
        assert!(close(lost.total, -0.2));
    }

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

    #[test]
    fn all_parts_compose() {
        let config = RewardConfig {
            unsubmitted_factor: 0.5,
            compression_weight: 0.2,
            compression_clip: 0.55,
            step_penalty: 1.0,
            step_threshold: 10,
            max_turns: 40,
            format_exit_penalty: 0.5,
            format_error_penalty: 0.1,
        };
        let mut trajectory = graded(16, 2, ExitReason::MaxSteps, true);
        let outcome = trajectory.outcome.as_mut().unwrap();
        outcome.extra.insert(
            "compression_reward".into(),
            json!({"compression_rate": 0.3}),
        );
        // 0.5 (α) + 0.2 · 0.3 - 6/30 - 2 · 0.1 = 0.5 + 0.06 - 0.2 - 0.2 = 0.16.
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
            step_penalty: 1.0,
            step_threshold: 40,
            max_turns: 10,
            ..RewardConfig::default()
        };
        let message = inverted.validate().unwrap_err().to_string();
        assert!(message.starts_with("reward.max_turns is 10"), "{message}");
    }
}
