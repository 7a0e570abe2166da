//! How faithful the world models are to real execution (SWE-World's Tables 3 and 4):
//! for SWT, over pairs of a command's real and simulated result, how often the exit code
//! agrees (exactly, and as success or failure) and how similar the output is; for SWR, over
//! pairs of a patch's predicted and real grade, accuracy, precision, recall and F1 with
//! "resolved" as the positive class. [`normalize_output`] masks what differs between two
//! runs of the same command in the same environment (durations, addresses, temporary paths,
//! timestamps); [`normalized_similarity`] compares outputs through it.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

/// What a command printed and how it exited.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandResult {
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// The exit code.
    pub exit_code: i32,
}

impl CommandResult {
    /// The lines of standard output, then those of standard error, as one text.
    fn output(&self) -> String {
        let (stdout, stderr) = (self.stdout.trim_end(), self.stderr.trim_end());
        match (stdout.is_empty(), stderr.is_empty()) {
            (_, true) => stdout.to_owned(),
            (true, false) => stderr.to_owned(),
            (false, false) => format!("{stdout}\n{stderr}"),
        }
    }
}

/// Lines compared at most per text by [`output_similarity`] (the comparison is quadratic).
pub const MAX_COMPARED_LINES: usize = 2_000;

/// The similarity of two outputs, line by line: twice the length of their longest common
/// subsequence of lines over the total number of lines (1 for two identical texts, 0 for
/// texts sharing no line; two empty texts are identical). Lines are compared with trailing
/// whitespace removed; only the first [`MAX_COMPARED_LINES`] of each text count.
pub fn output_similarity(real: &str, simulated: &str) -> f64 {
    let lines = |text: &str| -> Vec<String> {
        text.lines()
            .take(MAX_COMPARED_LINES)
            .map(|line| line.trim_end().to_owned())
            .collect()
    };
    let (a, b) = (lines(real), lines(simulated));
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let mut previous = vec![0u32; b.len() + 1];
    let mut current = vec![0u32; b.len() + 1];
    for line in &a {
        for (j, other) in b.iter().enumerate() {
            current[j + 1] = if line == other {
                previous[j] + 1
            } else {
                previous[j + 1].max(current[j])
            };
        }
        std::mem::swap(&mut previous, &mut current);
    }
    let common = f64::from(previous[b.len()]);
    2.0 * common / (a.len() + b.len()) as f64
}

/// The masks of [`normalize_output`], in the order they apply.
static MASKS: LazyLock<Vec<(Regex, &'static str)>> =
    LazyLock::new(|| {
        [
        // Dates and times of day: `2026-11-25 22:15:03`, `22:15:03.123`.
        (r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?", "<TIMESTAMP>"),
        (r"\b\d{2}:\d{2}:\d{2}(\.\d+)?\b", "<TIME>"),
        // File times as `ls -l` shows them: `Oct 24  2024`, `Nov 26 00:12`.
        (
            r"\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +\d{1,2} +(\d{4}|\d{2}:\d{2})\b",
            "<MTIME>",
        ),
        // Random seeds test runners print (sympy's `random seed: 34498090`, and
        // `PYTHONHASHSEED=47838935` from its and pytest's headers).
        (r"random seed:\s+\d+", "random seed: <SEED>"),
        (r"PYTHONHASHSEED=\d+", "PYTHONHASHSEED=<SEED>"),
        // Addresses of objects and pointers: `at 0x7f3a2c1b9d60`.
        (r"0x[0-9a-fA-F]{6,}", "0x<ADDR>"),
        // Object ids (addresses in decimal), as mocks print them: `id='133226893603216'`.
        (r"\bid='\d{6,}'", "id='<ADDR>'"),
        // Temporary files and directories: `/tmp/tmpab12cd/x.py`, `/tmp/pytest-of-root/pytest-3/`.
        (r#"/tmp/[^\s:'"]+"#, "/tmp/<TMP>"),
        // Durations: `in 0.83s`, `1.2 seconds`, `35ms`, `real 0m0.012s`.
        (r"\b\d+m\d+(\.\d+)?s\b", "<DURATION>"),
        (r"\b\d+(\.\d+)?\s?(s|sec|secs|seconds|ms|msec|us|µs)\b", "<DURATION>"),
        // Rules padded to a fixed width around a duration (`=== 4 passed in 9.03s ===`).
        (r"={3,}", "==="),
    ]
    .into_iter()
    .map(|(pattern, mask)| (Regex::new(pattern).expect("a valid mask pattern"), mask))
    .collect()
    });

/// `text` with what varies between two runs of one command in one environment masked:
/// timestamps, times of day, file times, random seeds test runners print, object addresses,
/// temporary paths, durations and the width of `=` rules padded around them.
pub fn normalize_output(text: &str) -> String {
    MASKS.iter().fold(text.to_owned(), |text, (pattern, mask)| {
        pattern.replace_all(&text, *mask).into_owned()
    })
}

/// [`output_similarity`] of the two outputs after [`normalize_output`].
pub fn normalized_similarity(real: &str, other: &str) -> f64 {
    output_similarity(&normalize_output(real), &normalize_output(other))
}

/// SWT's fidelity over commands with a real and a simulated result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SwtFidelity {
    /// Commands compared.
    pub commands: usize,
    /// Share of commands whose simulated exit code is the real one (`None` without commands).
    pub exit_code_agreement: Option<f64>,
    /// Share of commands whose simulated exit code agrees with the real one on success
    /// (zero) or failure (non-zero).
    pub success_agreement: Option<f64>,
    /// Mean [`output_similarity`] of the simulated output (stdout then stderr) to the real one.
    pub output_similarity: Option<f64>,
    /// Share of commands whose simulated output is the real one, line for line.
    pub exact_output: Option<f64>,
}

impl SwtFidelity {
    /// The fidelity over `(real, simulated)` pairs.
    pub fn of(pairs: &[(CommandResult, CommandResult)]) -> Self {
        let share = |hits: usize| (!pairs.is_empty()).then(|| hits as f64 / pairs.len() as f64);
        let count = |test: &dyn Fn(&CommandResult, &CommandResult) -> bool| {
            pairs.iter().filter(|(real, sim)| test(real, sim)).count()
        };
        let similarities: Vec<f64> = pairs
            .iter()
            .map(|(real, sim)| output_similarity(&real.output(), &sim.output()))
            .collect();
        Self {
            commands: pairs.len(),
            exit_code_agreement: share(count(&|real, sim| real.exit_code == sim.exit_code)),
            success_agreement: share(count(&|real, sim| {
                (real.exit_code == 0) == (sim.exit_code == 0)
            })),
            output_similarity: (!pairs.is_empty())
                .then(|| similarities.iter().sum::<f64>() / pairs.len() as f64),
            exact_output: share(similarities.iter().filter(|&&s| s == 1.0).count()),
        }
    }
}

/// SWR's fidelity over patches with a predicted and a real grade, "resolved" being the
/// positive class. A ratio whose denominator is zero is `None`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SwrFidelity {
    /// Patches compared.
    pub patches: usize,
    /// Predicted resolved, really resolved.
    pub true_positives: usize,
    /// Predicted resolved, really not.
    pub false_positives: usize,
    /// Predicted not resolved, really not.
    pub true_negatives: usize,
    /// Predicted not resolved, really resolved.
    pub false_negatives: usize,
    /// (TP + TN) / all.
    pub accuracy: Option<f64>,
    /// TP / (TP + FP).
    pub precision: Option<f64>,
    /// TP / (TP + FN).
    pub recall: Option<f64>,
    /// The harmonic mean of precision and recall.
    pub f1: Option<f64>,
}

impl SwrFidelity {
    /// The fidelity over `(predicted, real)` grades (true: resolved).
    pub fn of(pairs: &[(bool, bool)]) -> Self {
        let count = |predicted: bool, real: bool| {
            pairs
                .iter()
                .filter(|&&pair| pair == (predicted, real))
                .count()
        };
        let (tp, fp) = (count(true, true), count(true, false));
        let (tn, fn_) = (count(false, false), count(false, true));
        let ratio = |num: usize, den: usize| (den > 0).then(|| num as f64 / den as f64);
        let precision = ratio(tp, tp + fp);
        let recall = ratio(tp, tp + fn_);
        let f1 = match (precision, recall) {
            (Some(p), Some(r)) if p + r > 0.0 => Some(2.0 * p * r / (p + r)),
            (Some(_), Some(_)) => Some(0.0),
            _ => None,
        };
        Self {
            patches: pairs.len(),
            true_positives: tp,
            false_positives: fp,
            true_negatives: tn,
            false_negatives: fn_,
            accuracy: ratio(tp + tn, pairs.len()),
            precision,
            recall,
            f1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalisation_masks_what_varies_between_runs_and_nothing_else() {
        let first = "=== 3 passed in 0.83s ===\n<Foo object at 0x7f3a2c1b9d60>\n\
                     -rw-r--r-- 1 root root 39037 Oct 24  2024 sparse.py\n\
                     /tmp/tmpab12cd/x.py\n<MagicMock id='133226893603216'>\nrandom seed:        34498090\n\
                     hash randomization: on (PYTHONHASHSEED=47838935)\n2026-11-25 22:15:03 done";
        let second = "====== 3 passed in 11.20s ======\n<Foo object at 0x55d0c0ffee00>\n\
                      -rw-r--r-- 1 root root 39037 Nov 26 00:12 sparse.py\n\
                      /tmp/tmpzz99yy/x.py\n<MagicMock id='139773421938768'>\nrandom seed:        77171378\n\
                      hash randomization: on (PYTHONHASHSEED=3541342208)\n2026-11-26 00:01:59 done";
        assert_eq!(normalize_output(first), normalize_output(second));
        assert_eq!(normalized_similarity(first, second), 1.0);
        // What the environment decides is kept: sizes, modes, versions, paths.
        assert!(normalized_similarity("Python 3.9.20", "Python 3.9.18") < 1.0);
        assert!(normalized_similarity("drwxrwxrwx 2 root", "drwxr-xr-x 2 root") < 1.0);
        assert!(
            normalized_similarity("/opt/miniconda3/bin/python", "/swerve-env/bin/python") < 1.0
        );
    }
}
