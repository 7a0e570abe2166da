//! How well a viewer's returned lines cover the lines the change touches: per instance
//! recall, precision, F1 and context reduction, and their means over instances (macro)
//! beside micro recall and precision (sums over all instances).
//!
//! With `relevant` the changed lines, `returned` the lines shown and `hits` both:
//! recall = hits / relevant; precision = hits / returned (0 when nothing was returned);
//! F1 = 2 · precision · recall / (precision + recall) (0 when both are 0); context
//! reduction = 1 − returned / lines of the file.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

/// One instance's figures for one method.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Scores {
    /// Lines in the file.
    pub lines: usize,
    /// Lines the change touches.
    pub relevant_lines: usize,
    /// Lines the method returned.
    pub returned_lines: usize,
    /// Lines both relevant and returned.
    pub hits: usize,
    /// `hits / relevant_lines` (0 without relevant lines).
    pub recall: f64,
    /// `hits / returned_lines` (0 when nothing was returned).
    pub precision: f64,
    /// The harmonic mean of precision and recall (0 when both are 0).
    pub f1: f64,
    /// `1 − returned_lines / lines` (0 for an empty file).
    pub context_reduction: f64,
}

impl Scores {
    /// The figures of `returned` against `relevant` in a file of `lines` lines.
    pub fn of(relevant: &BTreeSet<usize>, returned: &BTreeSet<usize>, lines: usize) -> Self {
        let hits = relevant.intersection(returned).count();
        let recall = ratio(hits, relevant.len());
        let precision = ratio(hits, returned.len());
        Self {
            lines,
            relevant_lines: relevant.len(),
            returned_lines: returned.len(),
            hits,
            recall,
            precision,
            f1: match precision + recall > 0.0 {
                true => 2.0 * precision * recall / (precision + recall),
                false => 0.0,
            },
            context_reduction: match lines {
                0 => 0.0,
                _ => 1.0 - returned.len() as f64 / lines as f64,
            },
        }
    }
}

/// `count / of`, 0 when `of` is 0.
fn ratio(count: usize, of: usize) -> f64 {
    match of {
        0 => 0.0,
        _ => count as f64 / of as f64,
    }
}

/// Figures over a set of instances; the means are `None` without instances.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Instances counted.
    pub instances: usize,
    /// Mean recall.
    pub recall: Option<f64>,
    /// Mean precision.
    pub precision: Option<f64>,
    /// Mean F1 (of each instance's precision and recall).
    pub f1: Option<f64>,
    /// Mean context reduction.
    pub context_reduction: Option<f64>,
    /// All hits over all relevant lines.
    pub micro_recall: Option<f64>,
    /// All hits over all returned lines.
    pub micro_precision: Option<f64>,
    /// Relevant lines, summed.
    pub relevant_lines: usize,
    /// Returned lines, summed.
    pub returned_lines: usize,
    /// Hits, summed.
    pub hits: usize,
}

impl Stats {
    /// The figures of `scores`.
    pub fn of<'a>(scores: impl IntoIterator<Item = &'a Scores>) -> Self {
        let mut stats = Self::default();
        let (mut recall, mut precision, mut f1, mut reduction) = (0.0, 0.0, 0.0, 0.0);
        for score in scores {
            stats.instances += 1;
            stats.relevant_lines += score.relevant_lines;
            stats.returned_lines += score.returned_lines;
            stats.hits += score.hits;
            recall += score.recall;
            precision += score.precision;
            f1 += score.f1;
            reduction += score.context_reduction;
        }
        if stats.instances > 0 {
            let mean = |sum: f64| Some(sum / stats.instances as f64);
            stats.recall = mean(recall);
            stats.precision = mean(precision);
            stats.f1 = mean(f1);
            stats.context_reduction = mean(reduction);
            stats.micro_recall = Some(ratio(stats.hits, stats.relevant_lines));
            stats.micro_precision = Some(ratio(stats.hits, stats.returned_lines));
        }
        stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(lines: impl IntoIterator<Item = usize>) -> BTreeSet<usize> {
        lines.into_iter().collect()
    }

    #[test]
    fn per_instance_scores_by_hand() {
        // Relevant 10..=13 (4 lines); returned 1..=12 (12 lines): 3 hits in a 40-line file.
        let scores = Scores::of(&set(10..=13), &set(1..=12), 40);
        assert_eq!(
            (scores.hits, scores.relevant_lines, scores.returned_lines),
            (3, 4, 12)
        );
        assert_eq!(scores.recall, 0.75);
        assert_eq!(scores.precision, 0.25);
        assert_eq!(scores.f1, 2.0 * 0.25 * 0.75 / 1.0);
        assert_eq!(scores.context_reduction, 0.7);
        let nothing = Scores::of(&set([5]), &set([]), 10);
        assert_eq!(
            (nothing.recall, nothing.precision, nothing.f1),
            (0.0, 0.0, 0.0)
        );
        assert_eq!(nothing.context_reduction, 1.0);
        let everything = Scores::of(&set([5]), &set(1..=10), 10);
        assert_eq!((everything.recall, everything.precision), (1.0, 0.1));
        assert_eq!(everything.context_reduction, 0.0);
        assert_eq!(Scores::of(&set([]), &set([]), 0).context_reduction, 0.0);
    }

    #[test]
    fn macro_means_and_micro_sums() {
        let a = Scores::of(&set(10..=13), &set(1..=12), 40); // R .75, P .25, 3 of 4, 3 of 12
        let b = Scores::of(&set([1, 2]), &set([2, 3, 4, 5]), 10); // R .5, P .25, 1 of 2, 1 of 4
        let stats = Stats::of([&a, &b]);
        assert_eq!(stats.instances, 2);
        assert_eq!(stats.recall, Some(0.625));
        assert_eq!(stats.precision, Some(0.25));
        assert_eq!(stats.f1, Some((a.f1 + b.f1) / 2.0));
        assert_eq!(stats.context_reduction, Some((0.7 + 0.6) / 2.0));
        assert_eq!(stats.micro_recall, Some(4.0 / 6.0));
        assert_eq!(stats.micro_precision, Some(4.0 / 16.0));
        assert_eq!(Stats::of([]), Stats::default());
        assert_eq!(Stats::of([]).recall, None);
    }
}
