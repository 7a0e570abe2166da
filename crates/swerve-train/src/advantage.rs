//! Group-relative advantages over the rollouts of one task (`swerve run --samples G`), and
//! the statistics of groups.
//!
//! Estimators of a group with rewards `r_1 … r_G`, mean `μ` and sample standard deviation
//! `σ` (n − 1 in the denominator, as `torch.std` computes it in verl and TRL):
//! - [`Estimator::Grpo`]: `(r_i − μ) / (σ + ε)` (GRPO; DAPO's normalization), ε given:
//!   [`EPSILON`] (verl's 1e-6) by default, TRL's `GRPOTrainer` adds 1e-4;
//! - [`Estimator::DrGrpo`]: `r_i − μ` (Dr. GRPO: no division by σ);
//! - [`Estimator::Rloo`]: `r_i − mean_{j≠i} r_j` (leave-one-out; SWE-World's GRPO++).
//!
//! A group of one has no baseline: as in verl, its mean is taken as 0 and its σ as 1, so
//! its advantage is its reward. DAPO's dynamic sampling ([`zero_variance`]) drops groups
//! whose rewards are all equal (single rollouts included): every advantage in them is 0 and
//! they carry no signal. The advantage of a trajectory applies to every one of its steps
//! ([`broadcast`]). [`pass_at_k`] is the unbiased estimator of Chen et al. (2021).

use serde::{Deserialize, Serialize};

/// The ε added to σ by [`Estimator::Grpo`] unless told otherwise: verl's (1e-6).
pub const EPSILON: f64 = 1e-6;

/// How a group's rewards become advantages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Estimator {
    /// `(r − mean) / (std + ε)`.
    Grpo,
    /// `r − mean`.
    DrGrpo,
    /// `r − mean of the others`.
    Rloo,
}

impl Estimator {
    /// The name in outputs, as serde writes it (`grpo`, `dr_grpo`, `rloo`).
    pub fn as_str(self) -> &'static str {
        match self {
            Estimator::Grpo => "grpo",
            Estimator::DrGrpo => "dr_grpo",
            Estimator::Rloo => "rloo",
        }
    }
}

/// The advantage of each reward of one group, in order; `epsilon` is the ε of
/// [`Estimator::Grpo`] (the others have none).
pub fn advantages(rewards: &[f64], estimator: Estimator, epsilon: f64) -> Vec<f64> {
    let n = rewards.len();
    if n <= 1 {
        return rewards.to_vec();
    }
    let mean = mean(rewards);
    match estimator {
        Estimator::Grpo => {
            let std = sample_std(rewards);
            rewards
                .iter()
                .map(|r| (r - mean) / (std + epsilon))
                .collect()
        }
        Estimator::DrGrpo => rewards.iter().map(|r| r - mean).collect(),
        Estimator::Rloo => {
            let sum: f64 = rewards.iter().sum();
            let others = (n - 1) as f64;
            rewards.iter().map(|r| r - (sum - r) / others).collect()
        }
    }
}

/// Whether every reward of the group is the same (DAPO's dynamic sampling drops it).
pub fn zero_variance(rewards: &[f64]) -> bool {
    rewards
        .iter()
        .all(|reward| (reward - rewards[0]).abs() <= 1e-12)
}

/// One advantage per step: the trajectory's, broadcast.
pub fn broadcast(advantage: f64, steps: usize) -> Vec<f64> {
    vec![advantage; steps]
}

/// The unbiased pass@k of a task with `successes` of `n` samples resolved:
/// `1 − C(n − c, k) / C(n, k)`; `None` when `k` is 0 or above `n`.
pub fn pass_at_k(n: usize, successes: usize, k: usize) -> Option<f64> {
    if k == 0 || k > n || successes > n {
        return None;
    }
    if n - successes < k {
        return Some(1.0);
    }
    let none_pass: f64 = (n - successes + 1..=n)
        .map(|i| 1.0 - k as f64 / i as f64)
        .product();
    Some(1.0 - none_pass)
}

/// The statistics of one group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupStats {
    /// Rollouts in the group.
    pub n: usize,
    /// Rollouts that resolved the task.
    pub successes: usize,
    /// Mean reward.
    pub mean: f64,
    /// Sample standard deviation of the rewards (0 for a group of one).
    pub std: f64,
    /// Lowest reward.
    pub min: f64,
    /// Highest reward.
    pub max: f64,
    /// Whether all rewards are equal.
    pub zero_variance: bool,
}

impl GroupStats {
    /// The statistics of `rewards`, of which `successes` resolved the task.
    pub fn of(rewards: &[f64], successes: usize) -> Self {
        Self {
            n: rewards.len(),
            successes,
            mean: mean(rewards),
            std: sample_std(rewards),
            min: rewards.iter().copied().fold(f64::INFINITY, f64::min),
            max: rewards.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            zero_variance: zero_variance(rewards),
        }
    }
}

fn mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.iter().sum::<f64>() / values.len() as f64
}

fn sample_std(values: &[f64]) -> f64 {
    if values.len() < 2 {
        return 0.0;
    }
    let mean = mean(values);
    let squares: f64 = values.iter().map(|v| (v - mean).powi(2)).sum();
    (squares / (values.len() - 1) as f64).sqrt()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn assert_close(found: &[f64], expected: &[f64]) {
        assert_eq!(found.len(), expected.len());
        for (f, e) in found.iter().zip(expected) {
            assert!((f - e).abs() < 1e-5, "{found:?} != {expected:?}");
        }
    }

    #[test]
    fn grpo_by_hand() {
        // Rewards 1, 0, 0, 0: mean 0.25, sample variance (0.5625 + 3 · 0.0625) / 3 = 0.25,
        // σ = 0.5: advantages 0.75 / 0.5 = 1.5 and -0.25 / 0.5 = -0.5 (ε moves them by 3e-6).
        assert_close(
            &advantages(&[1.0, 0.0, 0.0, 0.0], Estimator::Grpo, EPSILON),
            &[1.5, -0.5, -0.5, -0.5],
        );
        // 1, 0: mean 0.5, σ = sqrt(0.5) ≈ 0.7071: ±0.7071.
        let half = 0.5 / 0.5f64.sqrt();
        assert_close(
            &advantages(&[1.0, 0.0], Estimator::Grpo, EPSILON),
            &[half, -half],
        );
    }

    #[test]
    fn dr_grpo_by_hand() {
        assert_close(
            &advantages(&[1.0, 0.0, 0.0, 0.0], Estimator::DrGrpo, EPSILON),
            &[0.75, -0.25, -0.25, -0.25],
        );
        // Composite rewards 1.08, 0.5, -0.2: mean 0.46.
        assert_close(
            &advantages(&[1.08, 0.5, -0.2], Estimator::DrGrpo, EPSILON),
            &[0.62, 0.04, -0.66],
        );
    }

    #[test]
    fn rloo_by_hand() {
        // 1 − mean(0,0,0) = 1; 0 − mean(1,0,0) = −1/3.
        let third = 1.0 / 3.0;
        assert_close(
            &advantages(&[1.0, 0.0, 0.0, 0.0], Estimator::Rloo, EPSILON),
            &[1.0, -third, -third, -third],
        );
        // 1.08 − mean(0.5, −0.2) = 0.93; 0.5 − 0.44 = 0.06; −0.2 − 0.79 = −0.99.
        assert_close(
            &advantages(&[1.08, 0.5, -0.2], Estimator::Rloo, EPSILON),
            &[0.93, 0.06, -0.99],
        );
    }

    #[test]
    fn zero_variance_groups_have_zero_advantages_and_are_flagged() {
        for estimator in [Estimator::Grpo, Estimator::DrGrpo, Estimator::Rloo] {
            assert_close(&advantages(&[1.0, 1.0, 1.0], estimator, EPSILON), &[0.0; 3]);
            assert_close(&advantages(&[0.0; 4], estimator, EPSILON), &[0.0; 4]);
            // A group of one: verl's convention, the reward itself.
            assert_close(&advantages(&[0.7], estimator, EPSILON), &[0.7]);
            assert!(advantages(&[], estimator, EPSILON).is_empty());
        }
        assert!(zero_variance(&[1.0, 1.0]) && zero_variance(&[0.5]));
        assert!(!zero_variance(&[1.0, 0.0]));
        let stats = GroupStats::of(&[1.0, 1.0, 1.0], 3);
        assert!(stats.zero_variance && stats.std == 0.0 && stats.mean == 1.0);
    }

    #[test]
    fn pass_at_k_by_hand() {
        // n = 4, c = 1: pass@1 = 1/4; pass@2 = 1 − C(3,2)/C(4,2) = 1 − 3/6 = 0.5.
        assert!((pass_at_k(4, 1, 1).unwrap() - 0.25).abs() < 1e-12);
        assert!((pass_at_k(4, 1, 2).unwrap() - 0.5).abs() < 1e-12);
        // n = 5, c = 2, k = 2: 1 − C(3,2)/C(5,2) = 1 − 3/10 = 0.7.
        assert!((pass_at_k(5, 2, 2).unwrap() - 0.7).abs() < 1e-12);
        assert_eq!(pass_at_k(4, 3, 2), Some(1.0));
        assert_eq!(pass_at_k(4, 0, 4), Some(0.0));
        assert_eq!(pass_at_k(4, 1, 5), None);
        assert_eq!(pass_at_k(4, 1, 0), None);
        assert_eq!(broadcast(0.5, 3), vec![0.5; 3]);
    }

    proptest! {
        #[test]
        fn centred_estimators_sum_to_zero(rewards in prop::collection::vec(-2.0f64..2.0, 2..12)) {
            for estimator in [Estimator::Grpo, Estimator::DrGrpo, Estimator::Rloo] {
                let sum: f64 = advantages(&rewards, estimator, EPSILON).iter().sum();
                prop_assert!(sum.abs() < 1e-6, "{estimator:?} {sum}");
            }
        }

        #[test]
        fn rloo_is_dr_grpo_scaled(rewards in prop::collection::vec(-2.0f64..2.0, 2..12)) {
            let n = rewards.len() as f64;
            let rloo = advantages(&rewards, Estimator::Rloo, EPSILON);
            let dr = advantages(&rewards, Estimator::DrGrpo, EPSILON);
            for (a, b) in rloo.iter().zip(&dr) {
                prop_assert!((a - b * n / (n - 1.0)).abs() < 1e-9);
            }
        }

        #[test]
        fn pass_at_k_grows_with_k(n in 1usize..20, c in 0usize..20) {
            let c = c.min(n);
            let values: Vec<f64> = (1..=n).map(|k| pass_at_k(n, c, k).unwrap()).collect();
            prop_assert!(values.windows(2).all(|w| w[0] <= w[1] + 1e-12));
            prop_assert!((values[0] - c as f64 / n as f64).abs() < 1e-9);
        }
    }
}
