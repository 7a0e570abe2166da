//! SWE-AGILE's compression-aware reward (paper Eq. 4, FORMATS b.4):
//! `R = I_success · (1 + β · min(R_comp, γ))`, every step getting `R`, plus an optional
//! penalty on the last step of a run that ended in format errors or repeats (upstream's
//! `FORMAT_ERR` and `REPEATING`; its `ENV_TIMEOUT` has no swerve exit reason of its own).
//!
//! [`RewardParts`] keeps the pieces apart. The composed training reward (with SWE-World's α
//! and the step penalty too) is `swerve_train::reward`, whose bonus this shares.

use serde::{Deserialize, Serialize};
use swerve_core::trajectory::ExitReason;
use swerve_train::reward::compression_bonus;

/// The reward's settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RewardConfig {
    /// β, the weight of the compression bonus (paper: 0.2; upstream code default 1.0).
    pub beta: f64,
    /// γ, where the compression rate stops counting (paper: 0.55; code default 0.625).
    pub gamma: f64,
    /// Added to the last step of a run that ended in format errors or repeats (upstream:
    /// -0.5; 0 turns it off).
    pub format_penalty: f64,
}

impl Default for RewardConfig {
    /// The paper's settings, without the format penalty.
    fn default() -> Self {
        Self {
            beta: 0.2,
            gamma: 0.55,
            format_penalty: 0.0,
        }
    }
}

/// The reward of one trajectory, in parts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RewardParts {
    /// `I_success`: 1 when the task was resolved, else 0.
    pub resolved: f64,
    /// `β · min(R_comp, γ)` when resolved, else 0.
    pub compression_bonus: f64,
    /// The penalty of the last step (0 unless the run ended in format errors or repeats).
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

/// The reward of a run that `resolved` (or not) the task with compression rate
/// `compression_rate`, ending with `exit_reason`.
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
            compression_bonus(compression_rate, config.beta, config.gamma)
        } else {
            0.0
        },
        format_penalty: if penalized {
            config.format_penalty
        } else {
            0.0
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn hand_computed_rewards() {
        let paper = RewardConfig::default();
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
            beta: 1.0,
            gamma: 0.625,
            format_penalty: -0.5,
        };
        let formats = compression_reward(false, 0.3, ExitReason::FormatErrors, &code);
        assert!(close(formats.trajectory(), 0.0) && close(formats.last_step(), -0.5));
        let repeats = compression_reward(true, 0.7, ExitReason::Repeating, &code);
        assert!(close(repeats.trajectory(), 1.625) && close(repeats.last_step(), 1.125));
        let others = compression_reward(true, 0.3, ExitReason::EnvError, &code);
        assert_eq!(others.format_penalty, 0.0);
    }
}
