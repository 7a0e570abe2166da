//! Test-time scaling: among K candidate rollouts of a task pick one, by the reward model's
//! mean score (`swr`), by the real tests (`tests`: the share of FAIL_TO_PASS and
//! PASS_TO_PASS tests passing), or by the oracle (`oracle`: resolved if any candidate is);
//! ties go to a seeded draw. TTS@k is the expected real resolve rate of the pick among k
//! candidates drawn at random from each task's K, computed exactly over all k-subsets (as
//! pass@k's unbiased estimator is), reported beside pass@k and the resolve rate of all
//! candidates.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use swerve_core::seeded::draw;

use crate::advantage::pass_at_k;
use crate::stats::{RepeatedRates, repeated_rates};

/// How a candidate is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SelectBy {
    /// The highest mean SWR score.
    Swr,
    /// The highest share of FAIL_TO_PASS and PASS_TO_PASS tests passing in real evaluation.
    Tests,
    /// Resolved (by real evaluation) if any candidate is: the pass@k upper bound.
    Oracle,
}

/// One candidate rollout.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Candidate {
    /// The run directory it came from.
    pub run: PathBuf,
    /// `<instance_id>__<sample>`.
    pub rollout: String,
    /// The task's id.
    pub instance_id: String,
    /// The patch (empty when the rollout made none).
    pub patch: String,
    /// The reward model's mean score, when the candidate has one.
    pub swr: Option<f64>,
    /// The share of FAIL_TO_PASS and PASS_TO_PASS tests passing, when real evaluation ran.
    pub tests: Option<f64>,
    /// Whether real evaluation resolved the task.
    pub resolved: Option<bool>,
}

impl Candidate {
    /// The candidate's score under `by` (`None`: it has none).
    pub fn score(&self, by: SelectBy) -> Option<f64> {
        match by {
            SelectBy::Swr => self.swr,
            SelectBy::Tests => self.tests,
            SelectBy::Oracle => self.resolved.map(|resolved| f64::from(u8::from(resolved))),
        }
    }
}

/// Which of `candidates` `by` picks: the highest score (candidates without one rank below
/// every scored one), ties broken by a draw from `seed` and `key`.
pub fn pick(candidates: &[Candidate], by: SelectBy, seed: u64, key: &str) -> usize {
    let scores: Vec<Option<f64>> = candidates.iter().map(|c| c.score(by)).collect();
    let best = scores
        .iter()
        .copied()
        .fold(None, |best, score| match (best, score) {
            (Some(b), Some(s)) => Some(if s > b { s } else { b }),
            (None, s) | (s, None) => s,
        });
    let tied: Vec<usize> = (0..candidates.len())
        .filter(|&index| scores[index] == best)
        .collect();
    let drawn = draw(seed, key, 0, tied.len().saturating_sub(1) as u32) as usize;
    tied[drawn]
}

/// The expected `value` of the candidate `by` picks among k of `candidates` drawn uniformly
/// without replacement (all of them when there are fewer than k), ties drawn uniformly;
/// `None` when a candidate that can be picked has no value.
///
/// Group the candidates by score, highest first. The pick comes from level j when the draw
/// holds one of its `a` candidates and none above it: with `b` candidates below level j, that
/// happens in C(a + b, k) − C(b, k) of the C(n, k) draws, and then each candidate of the
/// level is equally likely to be the one picked. So E = Σ_j mean_j(value) · (C(a_j + b_j, k)
/// − C(b_j, k)) / C(n, k). With the oracle's scores (resolved or not) this is pass@k.
pub fn expected_pick(
    candidates: &[Candidate],
    by: SelectBy,
    k: usize,
    value: impl Fn(&Candidate) -> Option<f64>,
) -> Option<f64> {
    let n = candidates.len();
    let k = k.min(n);
    if k == 0 {
        return None;
    }
    // Unscored candidates rank below every score, as `pick` ranks them.
    let mut scores: Vec<Option<f64>> = candidates.iter().map(|c| c.score(by)).collect();
    scores.sort_by(|a, b| b.partial_cmp(a).unwrap_or(std::cmp::Ordering::Equal));
    scores.dedup();
    let mut expected = 0.0;
    for level in scores {
        let members: Vec<&Candidate> = candidates.iter().filter(|c| c.score(by) == level).collect();
        let below = candidates.iter().filter(|c| c.score(by) < level).count();
        let chance = choose_ratio(members.len() + below, n, k) - choose_ratio(below, n, k);
        if chance <= 0.0 {
            continue;
        }
        let values: Option<Vec<f64>> = members.iter().map(|c| value(c)).collect();
        expected += chance * values?.iter().sum::<f64>() / members.len() as f64;
    }
    Some(expected)
}

/// C(m, k) / C(n, k) for m ≤ n: the share of k-subsets of n items that fall within m of them.
fn choose_ratio(m: usize, n: usize, k: usize) -> f64 {
    if m < k {
        return 0.0;
    }
    (m + 1..=n).map(|i| 1.0 - k as f64 / i as f64).product()
}

/// One task's pick among all its candidates.
#[derive(Debug, Clone, Serialize)]
pub struct TaskSelection {
    /// The task.
    pub instance_id: String,
    /// The picked candidate's index among the task's candidates.
    pub selected: usize,
    /// Every candidate of the task, in run-directory order.
    pub candidates: Vec<Candidate>,
}

/// The metrics at one k.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AtK {
    /// How many candidates the pick is made among.
    pub k: usize,
    /// Tasks with at least k candidates (those with fewer use all they have).
    pub tasks_with_k: usize,
    /// The expected real resolve rate of the pick among k random candidates, averaged over
    /// tasks; `None` when a candidate that could be picked has no real grade.
    pub tts: Option<f64>,
    /// The expected SWR score of that pick, when every candidate that could be picked has one.
    pub mean_selected_swr: Option<f64>,
    /// The mean unbiased pass@k over tasks with k or more graded candidates.
    pub pass_at_k: Option<f64>,
}

/// The selection and its metrics.
#[derive(Debug, Clone, Serialize)]
pub struct Selection {
    /// What the pick is by: the SWR score, the share of tests passing, or the oracle.
    pub by: SelectBy,
    /// The seed of the random choices (ties, random picks, the k-subsets).
    pub seed: u64,
    /// The most candidates a task has.
    pub max_k: usize,
    /// The real resolve rate over every candidate with a real grade.
    pub resolve_rate: Option<f64>,
    /// The real resolve rate of each run directory given, with mean, std and SEM over runs
    /// (SWE-Edit's and SWE-AGILE's repeated runs).
    pub across_runs: RepeatedRates,
    /// The real resolve rate of each sample index of each run (`RUN#k`), with mean, std and
    /// SEM over them (the RL seed's 10 samples per task, each a run over the tasks).
    pub across_samples: RepeatedRates,
    /// TTS@k and pass@k for k = 1..=`max_k`.
    pub metrics: Vec<AtK>,
    /// The pick of each task.
    pub tasks: Vec<TaskSelection>,
}

/// Picks per task and computes TTS@k and pass@k for k = 1..K.
pub fn select(tasks: BTreeMap<String, Vec<Candidate>>, by: SelectBy, seed: u64) -> Selection {
    let max_k = tasks.values().map(Vec::len).max().unwrap_or(0);
    let mean = |values: Vec<Option<f64>>| -> Option<f64> {
        let values: Option<Vec<f64>> = values.into_iter().collect();
        values
            .filter(|v| !v.is_empty())
            .map(|v| v.iter().sum::<f64>() / v.len() as f64)
    };
    let metrics = (1..=max_k)
        .map(|k| {
            let pass: Vec<Option<f64>> = tasks
                .values()
                .filter_map(|candidates| {
                    let graded: Vec<bool> = candidates.iter().filter_map(|c| c.resolved).collect();
                    let resolved = graded.iter().filter(|&&r| r).count();
                    (graded.len() >= k).then(|| pass_at_k(graded.len(), resolved, k))
                })
                .collect();
            AtK {
                k,
                tasks_with_k: tasks.values().filter(|c| c.len() >= k).count(),
                tts: mean(
                    tasks
                        .values()
                        .map(|candidates| {
                            expected_pick(candidates, by, k, |c| {
                                c.resolved.map(|r| f64::from(u8::from(r)))
                            })
                        })
                        .collect(),
                ),
                mean_selected_swr: mean(
                    tasks
                        .values()
                        .map(|candidates| expected_pick(candidates, by, k, |c| c.swr))
                        .collect(),
                ),
                pass_at_k: mean(pass),
            }
        })
        .collect();
    let graded: Vec<bool> = tasks
        .values()
        .flatten()
        .filter_map(|c| c.resolved)
        .collect();
    let resolve_rate = (!graded.is_empty())
        .then(|| graded.iter().filter(|&&r| r).count() as f64 / graded.len() as f64);
    let (across_runs, across_samples) = repeats(&tasks);
    let tasks = tasks
        .into_iter()
        .map(|(id, candidates)| TaskSelection {
            selected: pick(&candidates, by, seed, &format!("{id}@{}", candidates.len())),
            instance_id: id,
            candidates,
        })
        .collect();
    Selection {
        by,
        seed,
        max_k,
        resolve_rate,
        across_runs,
        across_samples,
        metrics,
        tasks,
    }
}

/// A repeat over the tasks, ordered by the run's position among the runs given, then by
/// sample; shown by its label.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Repeat {
    run: usize,
    sample: Option<usize>,
    label: String,
}

impl std::fmt::Display for Repeat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.label)
    }
}

/// The really graded candidates' resolve rates per run and per run and sample index.
fn repeats(tasks: &BTreeMap<String, Vec<Candidate>>) -> (RepeatedRates, RepeatedRates) {
    let mut runs: Vec<&Path> = Vec::new();
    for candidate in tasks.values().flatten() {
        if !runs.contains(&candidate.run.as_path()) {
            runs.push(&candidate.run);
        }
    }
    let graded = || {
        tasks.values().flatten().filter_map(|candidate| {
            let run = runs
                .iter()
                .position(|run| *run == candidate.run)
                .expect("a run seen");
            let sample = candidate
                .rollout
                .rsplit_once("__")
                .and_then(|(_, sample)| sample.parse::<usize>().ok());
            Some((run, sample, candidate.resolved?))
        })
    };
    let across_runs = repeated_rates(graded().map(|(run, _, resolved)| {
        let label = runs[run].display().to_string();
        (
            Repeat {
                run,
                sample: None,
                label,
            },
            resolved,
        )
    }));
    let across_samples = repeated_rates(graded().map(|(run, sample, resolved)| {
        let label = format!(
            "{}#{}",
            runs[run].display(),
            sample.map_or("?".to_owned(), |sample| sample.to_string())
        );
        (Repeat { run, sample, label }, resolved)
    }));
    (across_runs, across_samples)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(id: &str, sample: usize, swr: Option<f64>, resolved: Option<bool>) -> Candidate {
        Candidate {
            run: PathBuf::from("run"),
            rollout: format!("{id}__{sample}"),
            instance_id: id.to_owned(),
            patch: format!("patch {sample}"),
            swr,
            tests: resolved.map(|r| f64::from(u8::from(r))),
            resolved,
        }
    }

    #[test]
    fn the_highest_score_wins_and_ties_go_to_a_seeded_draw() {
        let candidates = vec![
            candidate("t", 0, Some(1.0 / 3.0), Some(false)),
            candidate("t", 1, Some(1.0), Some(true)),
            candidate("t", 2, None, Some(false)),
        ];
        assert_eq!(pick(&candidates, SelectBy::Swr, 0, "t"), 1);
        let tied = vec![
            candidate("t", 0, Some(1.0), Some(false)),
            candidate("t", 1, Some(1.0), Some(true)),
            candidate("t", 2, Some(1.0), Some(false)),
            candidate("t", 3, Some(0.0), Some(false)),
        ];
        let picks: Vec<usize> = (0..64)
            .map(|seed| pick(&tied, SelectBy::Swr, seed, "t@4"))
            .collect();
        // Only the tied candidates are picked, each for some seed, and a seed repeats its pick.
        assert!(picks.iter().all(|&p| p < 3));
        for index in 0..3 {
            assert!(picks.contains(&index), "{picks:?}");
        }
        assert_eq!(pick(&tied, SelectBy::Swr, 7, "t@4"), picks[7]);
        // Without any score, every candidate is tied.
        let unscored = vec![candidate("t", 0, None, None), candidate("t", 1, None, None)];
        assert!(pick(&unscored, SelectBy::Swr, 0, "t") < 2);
    }

    #[test]
    fn tts_is_the_expected_pick_over_every_k_subset_and_the_oracle_gives_pass_at_k() {
        let mut tasks = BTreeMap::new();
        // a: the reward model prefers the resolved second candidate.
        tasks.insert(
            "a".to_owned(),
            vec![
                candidate("a", 0, Some(0.0), Some(false)),
                candidate("a", 1, Some(1.0), Some(true)),
            ],
        );
        // b: the reward model is fooled by the first candidate.
        tasks.insert(
            "b".to_owned(),
            vec![
                candidate("b", 0, Some(2.0 / 3.0), Some(false)),
                candidate("b", 1, Some(1.0 / 3.0), Some(true)),
            ],
        );
        let swr = select(tasks.clone(), SelectBy::Swr, 0);
        assert_eq!(swr.max_k, 2);
        assert_eq!(swr.resolve_rate, Some(0.5));
        // k = 1: a random single candidate resolves half the time in each task.
        assert_eq!(swr.metrics[0].tts, Some(0.5));
        assert_eq!(swr.metrics[1].tts, Some(0.5));
        assert_eq!(swr.metrics[0].pass_at_k, Some(0.5));
        assert_eq!(swr.metrics[1].pass_at_k, Some(1.0));
        assert_eq!(swr.tasks[0].selected, 1);
        assert_eq!(swr.tasks[1].selected, 0);
        let oracle = select(tasks, SelectBy::Oracle, 0);
        assert_eq!(oracle.metrics[1].tts, Some(1.0));
        assert_eq!(oracle.metrics[1].tts, oracle.metrics[1].pass_at_k);
    }

    /// Four candidates: A (SWR 1, resolved), B (1, not), C (0.5, resolved), D (no score, not).
    /// Enumerating the six pairs: AB is a tie (½), AC → A (1), AD → A (1), BC → B (0),
    /// BD → B (0), CD → C (1): TTS@2 = 3.5 / 6 = 7/12. Every triple holds A or B (or both,
    /// a tie): ½. The expected SWR of the pick at k = 2: 5/6 · 1 + 1/6 · 0.5 = 11/12.
    #[test]
    fn the_expected_pick_matches_enumeration_with_ties_and_unscored_candidates() {
        let candidates = vec![
            candidate("c", 0, Some(1.0), Some(true)),
            candidate("c", 1, Some(1.0), Some(false)),
            candidate("c", 2, Some(0.5), Some(true)),
            candidate("c", 3, None, Some(false)),
        ];
        let resolved = |c: &Candidate| c.resolved.map(|r| f64::from(u8::from(r)));
        let close = |a: Option<f64>, b: f64| (a.unwrap() - b).abs() < 1e-12;
        assert!(close(
            expected_pick(&candidates, SelectBy::Swr, 1, resolved),
            0.5
        ));
        assert!(close(
            expected_pick(&candidates, SelectBy::Swr, 2, resolved),
            7.0 / 12.0
        ));
        assert!(close(
            expected_pick(&candidates, SelectBy::Swr, 3, resolved),
            0.5
        ));
        assert!(close(
            expected_pick(&candidates, SelectBy::Swr, 4, resolved),
            0.5
        ));
        assert!(close(
            expected_pick(&candidates, SelectBy::Swr, 9, resolved),
            0.5
        ));
        // D is never picked at k = 2, so its missing score does not matter there; at k = 1 it
        // may be picked alone.
        let swr = |c: &Candidate| c.swr;
        assert!(close(
            expected_pick(&candidates, SelectBy::Swr, 2, swr),
            11.0 / 12.0
        ));
        assert_eq!(expected_pick(&candidates, SelectBy::Swr, 1, swr), None);
        // The oracle's expectation is pass@k.
        for k in 1..=4 {
            let oracle = expected_pick(&candidates, SelectBy::Oracle, k, resolved).unwrap();
            assert!(
                (oracle - pass_at_k(4, 2, k).unwrap()).abs() < 1e-12,
                "k = {k}"
            );
        }
        assert_eq!(expected_pick(&[], SelectBy::Swr, 1, resolved), None);
    }

    /// The mean over every k-subset of the tied-pick average, by brute force.
    fn enumerated(candidates: &[Candidate], k: usize) -> f64 {
        let n = candidates.len();
        let (mut total, mut subsets) = (0.0, 0);
        for mask in 0u32..1 << n {
            if mask.count_ones() as usize != k {
                continue;
            }
            let chosen: Vec<&Candidate> = (0..n)
                .filter(|i| mask & (1 << i) != 0)
                .map(|i| &candidates[i])
                .collect();
            let best = chosen
                .iter()
                .map(|c| c.swr)
                .max_by(|a, b| a.partial_cmp(b).unwrap());
            let tied: Vec<&&Candidate> = chosen.iter().filter(|c| c.swr == best.unwrap()).collect();
            let resolved = tied.iter().filter(|c| c.resolved == Some(true)).count();
            total += resolved as f64 / tied.len() as f64;
            subsets += 1;
        }
        total / f64::from(subsets)
    }

    proptest::proptest! {
        #[test]
        fn the_expected_pick_equals_enumerating_every_subset(
            cells in proptest::collection::vec((0usize..4, proptest::bool::ANY), 1..8),
            k in 1usize..8,
        ) {
            let levels = [None, Some(0.0), Some(0.5), Some(1.0)];
            let candidates: Vec<Candidate> = cells
                .iter()
                .enumerate()
                .map(|(i, &(level, resolved))| candidate("p", i, levels[level], Some(resolved)))
                .collect();
            let k = k.min(candidates.len());
            let expected = expected_pick(&candidates, SelectBy::Swr, k, |c| {
                c.resolved.map(|r| f64::from(u8::from(r)))
            })
            .unwrap();
            proptest::prop_assert!((expected - enumerated(&candidates, k)).abs() < 1e-9);
        }
    }
}
