//! `swerve data advantages`: the reward of every trajectory (the `[reward]` settings),
//! grouped by task, turned into group-relative advantages ([`swerve_train::advantage`]),
//! with pass@k and each group's statistics. Writes one JSON line per trajectory (or per
//! step with `--steps`) and prints a summary.

use std::collections::BTreeMap;
use std::process::ExitCode;

use anyhow::{Result, bail};
use serde_json::{Value, json};
use swerve_core::trajectory::import::{Loaded, load_all};
use swerve_train::advantage::{Estimator, GroupStats, advantages, broadcast, pass_at_k};
use swerve_train::reward::RewardBreakdown;

use crate::cli::{AdvantagesArgs, EstimatorArg};
use swerve_rollout::config::Config;
use swerve_train::reward::{earns_no_reward, reward_of};
use swerve_train::rows::write_lines;

use swerve_rollout::run_dir::trajectory_files;

pub fn run(config: &Config, args: &AdvantagesArgs) -> Result<ExitCode> {
    let source = &args.source;
    let out = match (&args.out, &source.run) {
        (Some(out), _) => out.clone(),
        (None, Some(run)) => run.join("advantages.jsonl"),
        (None, None) => bail!("give --out FILE (or --run DIR, which writes DIR/advantages.jsonl)"),
    };
    if !(args.epsilon.is_finite() && args.epsilon >= 0.0) {
        bail!(
            "--epsilon {}: give a finite number of 0 or more (verl adds 1e-6, TRL 1e-4)",
            args.epsilon
        );
    }
    let estimator = match args.estimator {
        EstimatorArg::Grpo => Estimator::Grpo,
        EstimatorArg::DrGrpo => Estimator::DrGrpo,
        EstimatorArg::Rloo => Estimator::Rloo,
    };
    let mut groups: BTreeMap<String, Vec<(Loaded, RewardBreakdown)>> = BTreeMap::new();
    // Rollouts graded with an infra error earn no reward: left out of every group.
    let mut no_reward = Vec::new();
    for loaded in load_all(&trajectory_files(source.run.as_deref(), &source.files)?)? {
        if loaded
            .trajectory
            .outcome
            .as_ref()
            .is_some_and(earns_no_reward)
        {
            no_reward.push(loaded.name());
            continue;
        }
        let reward = reward_of(&loaded, &config.reward)?;
        let instance = loaded.trajectory.header.instance_id.clone();
        groups.entry(instance).or_default().push((loaded, reward));
    }

    let mut rows = Vec::new();
    let mut group_rows = Vec::new();
    let (mut trajectories, mut kept_groups, mut reward_sum) = (0, 0, 0.0);
    for (instance_id, members) in &groups {
        let rewards: Vec<f64> = members.iter().map(|(_, reward)| reward.total).collect();
        let successes = members.iter().filter(|(_, reward)| reward.resolved).count();
        let stats = GroupStats::of(&rewards, successes);
        let dropped = args.dynamic_sampling && stats.zero_variance;
        trajectories += members.len();
        reward_sum += rewards.iter().sum::<f64>();
        let mut group = serde_json::to_value(&stats)?;
        group["instance_id"] = json!(instance_id);
        group["dropped"] = json!(dropped);
        group_rows.push(group);
        if dropped {
            continue;
        }
        kept_groups += 1;
        for ((loaded, reward), advantage) in
            members
                .iter()
                .zip(advantages(&rewards, estimator, args.epsilon))
        {
            let trajectory = &loaded.trajectory;
            if args.steps {
                let steps = trajectory.steps.len();
                for (step, advantage) in broadcast(advantage, steps).into_iter().enumerate() {
                    rows.push(json!({
                        "trajectory_id": trajectory.header.id,
                        "instance_id": instance_id,
                        "step": step,
                        "is_last_step": step + 1 == steps,
                        "reward": reward.total,
                        "advantage": advantage,
                    }));
                }
            } else {
                rows.push(json!({
                    "trajectory_id": trajectory.header.id,
                    "instance_id": instance_id,
                    "file": loaded.path,
                    "reward": reward.total,
                    "advantage": advantage,
                    "parts": reward,
                }));
            }
        }
    }
    write_lines(&out, &rows)?;

    let largest = groups.values().map(Vec::len).max().unwrap_or(0);
    let pass: BTreeMap<String, Value> = (1..=largest)
        .filter_map(|k| {
            let values: Vec<f64> = groups
                .values()
                .filter_map(|members| {
                    let successes = members.iter().filter(|(_, r)| r.resolved).count();
                    pass_at_k(members.len(), successes, k)
                })
                .collect();
            let mean = values.iter().sum::<f64>() / values.len() as f64;
            (!values.is_empty()).then(|| {
                (
                    k.to_string(),
                    json!({"value": mean, "groups": values.len()}),
                )
            })
        })
        .collect();
    let summary = json!({
        "estimator": estimator.as_str(),
        "epsilon": args.epsilon,
        "dynamic_sampling": args.dynamic_sampling,
        "trajectories": trajectories,
        "groups": groups.len(),
        "kept_groups": kept_groups,
        "dropped_groups": groups.len() - kept_groups,
        "mean_reward": if trajectories == 0 { 0.0 } else { reward_sum / trajectories as f64 },
        "pass_at_k": pass,
        "rows": rows.len(),
        "no_reward": no_reward,
        "out": out,
        "group_stats": group_rows,
    });
    if args.json {
        println!("{summary}");
    } else {
        let pass_text: Vec<String> = pass
            .iter()
            .map(|(k, v)| format!("pass@{k} {:.3}", v["value"].as_f64().unwrap_or(0.0)))
            .collect();
        println!(
            "{trajectories} trajectories in {} groups; {} dropped (zero variance); mean reward \
             {:.4}; {}",
            groups.len(),
            groups.len() - kept_groups,
            summary["mean_reward"].as_f64().unwrap_or(0.0),
            pass_text.join(", ")
        );
        println!(
            "{} rows ({}, {}) -> {}",
            rows.len(),
            estimator.as_str(),
            if args.steps {
                "per step"
            } else {
                "per trajectory"
            },
            out.display()
        );
        if !no_reward.is_empty() {
            println!(
                "{} left out: graded with an infra error, they earn no reward (grade them \
                 again): {}",
                no_reward.len(),
                no_reward.join(", ")
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
