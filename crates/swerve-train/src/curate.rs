//! Task curation for training: which tasks of a task file are worth rollouts.
//!
//! Filters, each optional ([`Filters`], [`Evidence`]):
//! - **gold patch size**: at most `max_files` files and `max_lines` changed lines (added
//!   plus removed, counted from the hunks: [`patch_size`]);
//! - **determinism**: from `swerve eval --gold --repeat N`: the gold patch must resolve the
//!   task and no test may change its result between the runs ([`Determinism`]);
//! - **difficulty**: from past runs' success rates: drop tasks solved at a rate of
//!   `max_success_rate` or more (by default only always-solved ones) and never-solved ones
//!   (the long-context RL seed's second stage);
//! - **duplicates**: a task with the same problem statement or the same gold patch as an
//!   earlier one (compared with whitespace collapsed) is dropped.
//!
//! Every task gets a [`Decision`] with the reasons it was dropped. The evidence is read from
//! loaded trajectories ([`success_counts`]) and `swerve eval --gold --repeat N` output
//! ([`read_determinism`]).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::Serialize;
use serde_json::Value;
use swerve_core::Task;
use swerve_core::trajectory::import::Loaded;

use crate::reward::resolved;

/// Size limits and switches.
#[derive(Debug, Clone, PartialEq)]
pub struct Filters {
    /// Most files the gold patch may touch.
    pub max_files: Option<usize>,
    /// Most lines the gold patch may add plus remove.
    pub max_lines: Option<usize>,
    /// Drop tasks whose problem statement or gold patch repeats an earlier task's.
    pub dedupe: bool,
    /// Drop tasks solved at this rate or more in the past runs.
    pub max_success_rate: f64,
    /// Keep tasks no past rollout solved.
    pub keep_unsolved: bool,
}

impl Default for Filters {
    fn default() -> Self {
        Self {
            max_files: None,
            max_lines: None,
            dedupe: false,
            max_success_rate: 1.0,
            keep_unsolved: false,
        }
    }
}

/// What past runs and evaluations say about the tasks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Evidence {
    /// Per task: graded rollouts and how many resolved it; `None` skips the difficulty
    /// filter.
    pub outcomes: Option<BTreeMap<String, SuccessCount>>,
    /// Repeated gold evaluations; `None` skips the determinism filter.
    pub determinism: Option<Determinism>,
}

/// Graded rollouts of one task.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SuccessCount {
    /// Rollouts graded.
    pub rollouts: usize,
    /// Rollouts that resolved the task.
    pub resolved: usize,
}

/// The result of `swerve eval --gold --repeat N`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Determinism {
    /// Per graded task: whether the gold patch resolved it.
    pub resolved: BTreeMap<String, bool>,
    /// Per task whose tests' results varied: those tests.
    pub flaky: BTreeMap<String, BTreeSet<String>>,
}

/// What curation decided for one task.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decision {
    /// The task.
    pub instance_id: String,
    /// Whether it is kept.
    pub kept: bool,
    /// Why it was dropped (empty when kept).
    pub reasons: Vec<String>,
    /// The gold patch's size, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch: Option<PatchSize>,
    /// Past rollouts, when runs were given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcomes: Option<SuccessCount>,
}

/// The size of a patch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PatchSize {
    /// Files changed.
    pub files: usize,
    /// Lines added plus lines removed.
    pub lines: usize,
}

/// The size of a unified diff: files with a `diff --git` or `+++` header, and the added
/// and removed lines of their hunks (counted by the hunk headers' lengths, so content
/// lines that look like headers are counted right).
pub fn patch_size(patch: &str) -> PatchSize {
    let mut size = PatchSize::default();
    let (mut old_left, mut new_left) = (0usize, 0usize);
    let mut file_open = false;
    for line in patch.lines() {
        if old_left > 0 || new_left > 0 {
            match line.as_bytes().first() {
                Some(b'+') => {
                    size.lines += 1;
                    new_left = new_left.saturating_sub(1);
                }
                Some(b'-') => {
                    size.lines += 1;
                    old_left = old_left.saturating_sub(1);
                }
                Some(b'\\') => {}
                _ => {
                    old_left = old_left.saturating_sub(1);
                    new_left = new_left.saturating_sub(1);
                }
            }
            continue;
        }
        if line.starts_with("diff --git ") {
            size.files += 1;
            file_open = true;
        } else if line.starts_with("+++ ") {
            if !file_open {
                size.files += 1;
            }
            file_open = false;
        } else if let Some(header) = line.strip_prefix("@@ ") {
            (old_left, new_left) = hunk_lengths(header);
        }
    }
    size
}

/// The old and new line counts of a hunk header's rest `-a,b +c,d @@…` (a missing count
/// is 1).
fn hunk_lengths(header: &str) -> (usize, usize) {
    let mut parts = header.split_whitespace();
    let count = |part: Option<&str>, sign: char| {
        part.and_then(|p| p.strip_prefix(sign))
            .map_or(0, |range| match range.split_once(',') {
                Some((_, n)) => n.parse().unwrap_or(0),
                None => 1,
            })
    };
    let old = count(parts.next(), '-');
    let new = count(parts.next(), '+');
    (old, new)
}

/// Decides every task, in order.
pub fn curate(tasks: &[Task], filters: &Filters, evidence: &Evidence) -> Vec<Decision> {
    let mut statements: HashMap<String, &str> = HashMap::new();
    let mut patches: HashMap<String, &str> = HashMap::new();
    tasks
        .iter()
        .map(|task| {
            let id = task.instance_id.as_str();
            let mut reasons = Vec::new();
            let patch = task.patch.as_deref().map(patch_size);
            if filters.max_files.is_some() || filters.max_lines.is_some() {
                match patch {
                    None => reasons.push("no gold patch to measure".to_owned()),
                    Some(size) => {
                        if let Some(max) = filters.max_files.filter(|max| size.files > *max) {
                            reasons.push(format!(
                                "the gold patch changes {} files (at most {max})",
                                size.files
                            ));
                        }
                        if let Some(max) = filters.max_lines.filter(|max| size.lines > *max) {
                            reasons.push(format!(
                                "the gold patch changes {} lines (at most {max})",
                                size.lines
                            ));
                        }
                    }
                }
            }
            if let Some(determinism) = &evidence.determinism {
                reasons.extend(determinism_reason(determinism, id));
            }
            let outcomes = evidence
                .outcomes
                .as_ref()
                .map(|outcomes| outcomes.get(id).copied().unwrap_or_default());
            if let Some(count) = outcomes {
                reasons.extend(difficulty_reason(count, filters));
            }
            if filters.dedupe {
                let statement = normalized(&task.problem_statement);
                match statements.get(&statement) {
                    Some(first) => reasons.push(format!("same problem statement as {first}")),
                    None => {
                        statements.insert(statement, id);
                    }
                }
                if let Some(gold) = task.patch.as_deref().map(normalized)
                    && !gold.is_empty()
                {
                    match patches.get(&gold) {
                        Some(first) => reasons.push(format!("same gold patch as {first}")),
                        None => {
                            patches.insert(gold, id);
                        }
                    }
                }
            }
            Decision {
                instance_id: id.to_owned(),
                kept: reasons.is_empty(),
                reasons,
                patch,
                outcomes,
            }
        })
        .collect()
}

fn determinism_reason(determinism: &Determinism, id: &str) -> Option<String> {
    if let Some(tests) = determinism.flaky.get(id) {
        let tests: Vec<&str> = tests.iter().map(String::as_str).collect();
        return Some(format!(
            "the gold patch's results varied between runs (tests: {})",
            tests.join(", ")
        ));
    }
    match determinism.resolved.get(id) {
        None => Some("not in the repeated gold evaluation".to_owned()),
        Some(false) => Some("the gold patch does not resolve it".to_owned()),
        Some(true) => None,
    }
}

fn difficulty_reason(count: SuccessCount, filters: &Filters) -> Option<String> {
    if count.rollouts == 0 {
        return None;
    }
    let rate = count.resolved as f64 / count.rollouts as f64;
    if count.resolved == 0 && !filters.keep_unsolved {
        return Some(format!("never solved in {} rollouts", count.rollouts));
    }
    if count.resolved > 0 && rate >= filters.max_success_rate {
        return Some(format!(
            "solved in {} of {} rollouts (rate {rate:.2}, at most below {})",
            count.resolved, count.rollouts, filters.max_success_rate
        ));
    }
    None
}

/// Text with runs of whitespace collapsed to one space and the ends trimmed.
fn normalized(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Graded rollouts per task over the `loaded` trajectories, and how many of them were
/// unfinished or ungraded (not counted).
pub fn success_counts(loaded: &[Loaded]) -> (BTreeMap<String, SuccessCount>, usize) {
    let mut counts: BTreeMap<String, SuccessCount> = BTreeMap::new();
    let mut ungraded = 0;
    for loaded in loaded {
        let header = &loaded.trajectory.header;
        let Some(success) = loaded
            .trajectory
            .outcome
            .as_ref()
            .and_then(|outcome| resolved(outcome, &header.instance_id))
        else {
            ungraded += 1;
            continue;
        };
        let count = counts.entry(header.instance_id.clone()).or_default();
        count.rollouts += 1;
        count.resolved += usize::from(success);
    }
    (counts, ungraded)
}

/// Reads the result of `swerve eval --gold --repeat N --out dir`: `results.json` (the
/// first run's reports) and `flaky.json` (tests whose result varied).
pub fn read_determinism(dir: &Path) -> Result<Determinism> {
    let flaky_path = dir.join("flaky.json");
    if !flaky_path.exists() {
        bail!(
            "{} not found: --determinism takes the output of `swerve eval --gold --repeat N \
             --out DIR` with N of at least 2",
            flaky_path.display()
        );
    }
    let flaky: BTreeMap<String, BTreeSet<String>> = read_json(&flaky_path)?;
    let results_path = dir.join("results.json");
    let results: BTreeMap<String, Value> = read_json(&results_path)?;
    let mut resolved = BTreeMap::new();
    for (id, report) in results {
        let Some(value) = report.get("resolved").and_then(Value::as_bool) else {
            bail!(
                "{}: instance {id}: field `resolved` is missing or not true/false; grade again \
                 with swerve eval",
                results_path.display()
            );
        };
        resolved.insert(id, value);
    }
    Ok(Determinism { resolved, flaky })
}

/// `path` read as JSON of type `T`; an error names the file and says to grade again.
fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| {
        format!(
            "{}: not the JSON swerve eval writes; grade again with swerve eval",
            path.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    const TWO_FILES: &str = "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1,3 +1,3 @@\n x\n-y\n+z\n w\ndiff --git a/b.py b/b.py\nnew file mode 100644\n--- /dev/null\n+++ b/b.py\n@@ -0,0 +1,2 @@\n+--- not a header\n++++ nor this\n";

    fn task(id: &str, statement: &str, patch: &str) -> Task {
        let mut task = Task::new(id, "o/r", "abc", statement);
        task.patch = Some(patch.to_owned());
        task
    }

    #[test]
    fn patch_size_counts_hunk_lines_not_headers() {
        assert_eq!(patch_size(TWO_FILES), PatchSize { files: 2, lines: 4 });
        assert_eq!(patch_size(""), PatchSize::default());
        let plain = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n";
        assert_eq!(patch_size(plain), PatchSize { files: 1, lines: 2 });
    }

    #[test]
    fn size_filters_name_the_limit() {
        let tasks = [
            task(
                "small",
                "s",
                "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n",
            ),
            task("big", "b", TWO_FILES),
        ];
        let filters = Filters {
            max_files: Some(1),
            max_lines: Some(3),
            ..Filters::default()
        };
        let decisions = curate(&tasks, &filters, &Evidence::default());
        assert!(decisions[0].kept);
        assert_eq!(
            decisions[1].reasons,
            [
                "the gold patch changes 2 files (at most 1)",
                "the gold patch changes 4 lines (at most 3)"
            ]
        );
    }

    #[test]
    fn difficulty_drops_always_and_never_solved() {
        let tasks = [
            task("easy", "1", "p1"),
            task("hard", "2", "p2"),
            task("mid", "3", "p3"),
            task("unseen", "4", "p4"),
        ];
        let outcomes = BTreeMap::from([
            (
                "easy".to_owned(),
                SuccessCount {
                    rollouts: 4,
                    resolved: 4,
                },
            ),
            (
                "hard".to_owned(),
                SuccessCount {
                    rollouts: 4,
                    resolved: 0,
                },
            ),
            (
                "mid".to_owned(),
                SuccessCount {
                    rollouts: 4,
                    resolved: 3,
                },
            ),
        ]);
        let evidence = Evidence {
            outcomes: Some(outcomes),
            determinism: None,
        };
        let kept = |filters: &Filters| -> Vec<bool> {
            curate(&tasks, filters, &evidence)
                .iter()
                .map(|d| d.kept)
                .collect()
        };
        assert_eq!(kept(&Filters::default()), [false, false, true, true]);
        let stricter = Filters {
            max_success_rate: 0.75,
            keep_unsolved: true,
            ..Filters::default()
        };
        assert_eq!(kept(&stricter), [false, true, false, true]);
        let decisions = curate(&tasks, &Filters::default(), &evidence);
        assert_eq!(decisions[1].reasons, ["never solved in 4 rollouts"]);
    }

    #[test]
    fn determinism_needs_a_resolving_stable_gold_patch() {
        let tasks = [
            task("stable", "1", "p1"),
            task("flaky", "2", "p2"),
            task("broken", "3", "p3"),
            task("missing", "4", "p4"),
        ];
        let determinism = Determinism {
            resolved: BTreeMap::from([
                ("stable".to_owned(), true),
                ("flaky".to_owned(), true),
                ("broken".to_owned(), false),
            ]),
            flaky: BTreeMap::from([("flaky".to_owned(), BTreeSet::from(["t::a".to_owned()]))]),
        };
        let evidence = Evidence {
            outcomes: None,
            determinism: Some(determinism),
        };
        let decisions = curate(&tasks, &Filters::default(), &evidence);
        let reasons: Vec<String> = decisions.iter().map(|d| d.reasons.join("; ")).collect();
        assert_eq!(
            reasons,
            [
                "",
                "the gold patch's results varied between runs (tests: t::a)",
                "the gold patch does not resolve it",
                "not in the repeated gold evaluation"
            ]
        );
    }

    #[test]
    fn duplicates_keep_the_first() {
        let tasks = [
            task("a", "Fix  the\nbug", "diff one"),
            task("b", "Fix the bug", "diff two"),
            task("c", "Other", "diff  one"),
            task("d", "Another", "diff three"),
        ];
        let filters = Filters {
            dedupe: true,
            ..Filters::default()
        };
        let decisions = curate(&tasks, &filters, &Evidence::default());
        let reasons: Vec<String> = decisions.iter().map(|d| d.reasons.join("; ")).collect();
        assert_eq!(
            reasons,
            [
                "",
                "same problem statement as a",
                "same gold patch as a",
                ""
            ]
        );
    }

    proptest! {
        /// A generated diff of files with hunks of random lines is measured exactly,
        /// whatever the content lines look like.
        #[test]
        fn patch_size_of_generated_diffs(
            files in prop::collection::vec(
                prop::collection::vec((0u8..3, "[-+ @a-z]{0,6}"), 1..8),
                0..4,
            )
        ) {
            let mut patch = String::new();
            let mut lines = 0;
            for (index, hunk) in files.iter().enumerate() {
                let old = hunk.iter().filter(|(kind, _)| *kind != 1).count();
                let new = hunk.iter().filter(|(kind, _)| *kind != 0).count();
                patch.push_str(&format!(
                    "diff --git a/f{index} b/f{index}\n--- a/f{index}\n+++ b/f{index}\n@@ -1,{old} +1,{new} @@\n"
                ));
                for (kind, text) in hunk {
                    let sign = ["-", "+", " "][*kind as usize];
                    lines += usize::from(*kind != 2);
                    patch.push_str(&format!("{sign}{text}\n"));
                }
            }
            prop_assert_eq!(patch_size(&patch), PatchSize { files: files.len(), lines });
        }

        #[test]
        fn patch_size_never_panics(text in "(diff --git |@@ -|\\+\\+\\+ |[-+ ]|[a-z0-9,]|\n){0,60}") {
            let _ = patch_size(&text);
        }
    }
}
