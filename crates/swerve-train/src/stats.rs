//! Spread over repeated runs, as the papers report their scores: the mean with its sample
//! standard deviation and standard error (the long-context RL seed's Pass@1 is "mean ± SEM
//! over 10 runs", Table 1; SWE-Edit reports mean ± std of 3 runs, App. B.1; SWE-AGILE the
//! mean of 2 runs, §3.1).
//!
//! A *repeat* is one pass over the tasks: one sample index of a run with `--samples N`
//! (rollouts `<id>__k`), or one run directory. Each repeat's resolve rate is its resolved
//! rollouts over its graded ones; the spread is over those rates.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Mean, sample standard deviation (n − 1) and standard error of the mean (std / √n) of a
/// set of values; `std` and `sem` are `None` for a single value.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// How many values.
    pub n: usize,
    /// The arithmetic mean.
    pub mean: f64,
    /// The sample standard deviation (n − 1); `None` for a single value.
    pub std: Option<f64>,
    /// The standard error of the mean, `std / √n`; `None` for a single value.
    pub sem: Option<f64>,
}

/// The spread of `values`; `None` when there are none.
pub fn spread(values: &[f64]) -> Option<Spread> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let (std, sem) = if n > 1 {
        let variance = values
            .iter()
            .map(|value| (value - mean).powi(2))
            .sum::<f64>()
            / (n - 1) as f64;
        let std = variance.sqrt();
        (Some(std), Some(std / (n as f64).sqrt()))
    } else {
        (None, None)
    };
    Some(Spread { n, mean, std, sem })
}

/// One repeat's grades.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepeatRate {
    /// The repeat: a sample index, or a run directory.
    pub repeat: String,
    /// Rollouts graded in it.
    pub graded: usize,
    /// How many of them resolved their task.
    pub resolved: usize,
    /// `resolved / graded`.
    pub rate: f64,
}

/// The resolve rate per repeat and their spread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepeatedRates {
    /// One entry per repeat, ordered by repeat key.
    pub repeats: Vec<RepeatRate>,
    /// The spread of the repeats' rates (`None` without graded rollouts).
    pub spread: Option<Spread>,
}

/// Groups graded rollouts `(repeat, resolved)` by repeat (in key order) and gives each
/// repeat's resolve rate and their spread.
pub fn repeated_rates<K: Ord + ToString>(
    grades: impl IntoIterator<Item = (K, bool)>,
) -> RepeatedRates {
    let mut groups: BTreeMap<K, (usize, usize)> = BTreeMap::new();
    for (repeat, resolved) in grades {
        let entry = groups.entry(repeat).or_default();
        entry.0 += 1;
        entry.1 += usize::from(resolved);
    }
    let repeats: Vec<RepeatRate> = groups
        .into_iter()
        .map(|(repeat, (graded, resolved))| RepeatRate {
            repeat: repeat.to_string(),
            graded,
            resolved,
            rate: resolved as f64 / graded as f64,
        })
        .collect();
    let rates: Vec<f64> = repeats.iter().map(|repeat| repeat.rate).collect();
    RepeatedRates {
        spread: spread(&rates),
        repeats,
    }
}

/// `mean% ± sem (std s, n runs)` for a rate, or the mean alone for one run.
pub fn render_rate(spread: &Spread) -> String {
    match (spread.std, spread.sem) {
        (Some(std), Some(sem)) => format!(
            "{:.1}% ± {:.1} (mean ± SEM over {} repeats; std {:.1})",
            spread.mean * 100.0,
            sem * 100.0,
            spread.n,
            std * 100.0
        ),
        _ => format!("{:.1}% (one repeat)", spread.mean * 100.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    /// Hand-computed: mean = Σx/n; std = √(Σ(x − mean)² / (n − 1)); SEM = std/√n (the RL
    /// seed's "mean ± SEM", Table 1 and §4.3; SWE-Edit's "mean ± std", App. B.1).
    #[test]
    fn spreads_by_hand() {
        // (values, mean, std, sem)
        let table: [(&[f64], f64, f64, f64); 4] = [
            // 3 runs at 40, 42 and 38 %: deviations 0, 2, −2 points; std = √(8/2) = 2 points.
            (
                &[0.40, 0.42, 0.38],
                0.40,
                0.02,
                0.02 / 1.732_050_807_568_877_2,
            ),
            // 2 runs (SWE-AGILE's protocol): 24 and 26 %: std = √2 points, SEM = 1 point.
            (&[0.24, 0.26], 0.25, 0.014_142_135_623_730_95, 0.01),
            // Bernoulli outcomes 1, 0, 0, 1: p = 0.5, std = √(1/3), SEM = √(1/12).
            (
                &[1.0, 0.0, 0.0, 1.0],
                0.5,
                0.577_350_269_189_625_8,
                0.288_675_134_594_812_9,
            ),
            // Identical runs have no spread.
            (&[0.3, 0.3, 0.3], 0.3, 0.0, 0.0),
        ];
        for (values, mean, std, sem) in table {
            let got = spread(values).unwrap();
            assert_eq!(got.n, values.len());
            assert!(close(got.mean, mean), "{values:?}: {got:?}");
            assert!(close(got.std.unwrap(), std), "{values:?}: {got:?}");
            assert!(close(got.sem.unwrap(), sem), "{values:?}: {got:?}");
        }
        let one = spread(&[0.7]).unwrap();
        assert_eq!((one.n, one.std, one.sem), (1, None, None));
        assert!(spread(&[]).is_none());
    }

    #[test]
    fn repeats_are_rates_over_their_own_graded_rollouts() {
        // Sample 0: 2 of 4 resolved; sample 1: 1 of 3 (one rollout ungraded).
        let grades = [
            (0, true),
            (0, true),
            (0, false),
            (0, false),
            (1, true),
            (1, false),
            (1, false),
        ];
        let rates = repeated_rates(grades);
        assert_eq!(rates.repeats.len(), 2);
        assert_eq!((rates.repeats[1].graded, rates.repeats[1].resolved), (3, 1));
        let spread = rates.spread.unwrap();
        assert!(close(spread.mean, (0.5 + 1.0 / 3.0) / 2.0));
        // std of {1/2, 1/3} = |1/2 − 1/3| / √2.
        assert!(close(spread.std.unwrap(), (1.0 / 6.0) / 2f64.sqrt()));
        assert!(close(spread.sem.unwrap(), 1.0 / 12.0));
        assert_eq!(
            render_rate(&spread),
            "41.7% ± 8.3 (mean ± SEM over 2 repeats; std 11.8)"
        );
    }
}
