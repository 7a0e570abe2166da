//! Rejection fine-tuning (the long-context RL seed's first phase; SWE-AGILE's RFT
//! collection): keep the trajectories whose reward reaches a threshold, and train only the
//! turns that worked: a turn whose reply could not be read as a tool call (a format error)
//! gets loss weight 0, so the model is not taught to repeat it.

use swerve_core::trajectory::Trajectory;

use crate::reward::RewardBreakdown;

/// Whether a trajectory with reward `reward` is kept at threshold `min_reward`.
pub fn keep(reward: &RewardBreakdown, min_reward: f64) -> bool {
    reward.total >= min_reward
}

/// The loss weight of each step's turn: 0 when its reply had a format error, else 1.
pub fn turn_weights(trajectory: &Trajectory) -> Vec<f64> {
    trajectory
        .steps
        .iter()
        .map(|step| {
            if step.format_error.is_some() {
                0.0
            } else {
                1.0
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use swerve_core::trajectory::{Header, Step};

    use super::*;

    #[test]
    fn format_errors_are_not_trained_and_the_threshold_is_inclusive() {
        let mut trajectory = Trajectory::new(Header::new("t__0", "t"));
        for index in 0..3 {
            let mut step = Step::new(index, "reply");
            if index == 1 {
                step.format_error = Some("no function call".into());
            }
            trajectory.steps.push(step);
        }
        assert_eq!(turn_weights(&trajectory), vec![1.0, 0.0, 1.0]);
        let reward = |total| RewardBreakdown {
            total,
            resolved: total > 0.0,
            submitted: true,
            outcome: total,
            compression_bonus: 0.0,
            compression_rate: None,
            step_penalty: 0.0,
            format_penalty: 0.0,
            steps: 3,
            format_errors: 1,
        };
        assert!(keep(&reward(1.0), 1.0));
        assert!(!keep(&reward(0.9), 1.0));
        assert!(keep(&reward(0.0), 0.0));
    }
}
