//! Train/validation/test splits of PR-Edit instances by pull request (SWE-Edit §4.3.1: 3.5K
//! instances → 2.8K / 200 / 500, split by PR), and the decontamination filter against a
//! benchmark's tasks (no repository overlap, no exact code overlap).

use std::collections::{BTreeMap, HashSet};

use serde_json::Value;
use swerve_core::Task;

use super::instance::EditInstance;

/// The group an instance is split with: its repository and PR (or commit).
pub fn group(instance: &EditInstance) -> String {
    let field = |key: &str| {
        instance
            .metadata
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let unit = match instance.metadata.get("pr").and_then(Value::as_str) {
        Some(pr) => format!("#{pr}"),
        None => format!("@{}", field("commit")),
    };
    format!("{}{unit}", field("repo"))
}

fn fnv(seed: u64, text: &str) -> u64 {
    text.bytes()
        .fold(0xcbf2_9ce4_8422_2325 ^ seed, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
        })
}

/// Puts each instance in one of `splits` (name, weight; weights are shares or counts) by
/// its [`group`]: the groups in a seeded order are cut at the cumulative weights, so a PR's
/// files always share a split. Writes `metadata.split`; returns the groups per split.
pub fn split_by_pr(
    instances: &mut [EditInstance],
    splits: &[(String, f64)],
    seed: u64,
) -> BTreeMap<String, usize> {
    let mut groups: Vec<String> = instances
        .iter()
        .map(group)
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    groups.sort_by_key(|group| (fnv(seed, group), group.clone()));
    let total: f64 = splits.iter().map(|(_, weight)| weight).sum();
    let mut assignment = BTreeMap::new();
    let mut counts = BTreeMap::new();
    let n = groups.len();
    let mut start = 0usize;
    let mut cumulative = 0.0;
    for (index, (name, weight)) in splits.iter().enumerate() {
        cumulative += weight;
        let end = if index + 1 == splits.len() {
            n
        } else {
            ((cumulative / total) * n as f64).round() as usize
        };
        let end = end.clamp(start, n);
        for group in &groups[start..end] {
            assignment.insert(group.clone(), name.clone());
        }
        counts.insert(name.clone(), end - start);
        start = end;
    }
    for instance in instances.iter_mut() {
        let split = assignment
            .get(&group(instance))
            .cloned()
            .unwrap_or_default();
        instance.metadata.insert("split".into(), Value::from(split));
    }
    counts
}

/// Parses `train=0.8,val=0.05,test=0.15` (or counts, `train=2800,val=200,test=500`).
pub fn parse_splits(text: &str) -> Result<Vec<(String, f64)>, String> {
    let mut splits = Vec::new();
    for part in text.split(',').filter(|part| !part.trim().is_empty()) {
        let (name, weight) = part
            .split_once('=')
            .ok_or_else(|| format!("{part:?}: write NAME=WEIGHT, e.g. train=0.8"))?;
        let weight: f64 = weight
            .trim()
            .parse()
            .ok()
            .filter(|weight: &f64| weight.is_finite() && *weight >= 0.0)
            .ok_or_else(|| format!("{part:?}: the weight must be a number of at least 0"))?;
        splits.push((name.trim().to_owned(), weight));
    }
    if splits.is_empty() || splits.iter().all(|(_, weight)| *weight == 0.0) {
        return Err("give at least one split with a positive weight".into());
    }
    Ok(splits)
}

/// Lines shorter than this many non-blank characters are too common to count as overlap.
const CODE_LINE_CHARS: usize = 25;

/// Why an instance overlaps the tasks, if it does: its repository is a task's
/// (`metadata.origin` as `owner/name`, or `metadata.repo` as the name), or a line it changes
/// (or its target holds) is a line a task's gold or test patch adds or removes (at least 25
/// non-blank characters, compared trimmed).
pub struct Decontaminator {
    repos: HashSet<String>,
    names: HashSet<String>,
    lines: std::collections::HashMap<String, String>,
}

impl Decontaminator {
    /// The filter for `tasks`.
    pub fn new(tasks: &[Task]) -> Self {
        let mut repos = HashSet::new();
        let mut names = HashSet::new();
        let mut lines = std::collections::HashMap::new();
        for task in tasks {
            let repo = task.repo.to_ascii_lowercase();
            names.insert(repo.rsplit('/').next().unwrap_or(&repo).to_owned());
            repos.insert(repo);
            for patch in [task.patch.as_deref(), task.test_patch.as_deref()]
                .into_iter()
                .flatten()
            {
                for line in patch.lines() {
                    if line.starts_with("+++") || line.starts_with("---") {
                        continue;
                    }
                    let Some(code) = line.strip_prefix(['+', '-']) else {
                        continue;
                    };
                    let code = code.trim();
                    if code.chars().filter(|c| !c.is_whitespace()).count() >= CODE_LINE_CHARS {
                        lines
                            .entry(code.to_owned())
                            .or_insert_with(|| task.instance_id.clone());
                    }
                }
            }
        }
        Self {
            repos,
            names,
            lines,
        }
    }

    /// Removes from `instances` those that must go; returns one `{"instance_id", "reason"}`
    /// row for each, in order.
    pub fn remove(&self, instances: &mut Vec<EditInstance>) -> Vec<Value> {
        let mut dropped = Vec::new();
        instances.retain(|instance| match self.reason(instance) {
            Some(reason) => {
                dropped.push(serde_json::json!({
                    "instance_id": instance.instance_id,
                    "reason": reason,
                }));
                false
            }
            None => true,
        });
        dropped
    }

    /// Why `instance` must go, or `None`.
    pub fn reason(&self, instance: &EditInstance) -> Option<String> {
        let field = |key: &str| {
            instance
                .metadata
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_ascii_lowercase)
        };
        if let Some(origin) = field("origin").filter(|origin| self.repos.contains(origin)) {
            return Some(format!("repository {origin} is a task repository"));
        }
        if let Some(name) = field("repo").filter(|name| self.names.contains(name)) {
            return Some(format!("repository {name} has a task repository's name"));
        }
        for text in [&instance.target, &instance.original] {
            for line in text.lines() {
                if let Some(task) = self.lines.get(line.trim()) {
                    return Some(format!(
                        "exact code overlap with task {task}: {:?}",
                        line.trim()
                    ));
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn instance(repo: &str, pr: &str, path: &str) -> EditInstance {
        let mut metadata = serde_json::Map::new();
        metadata.insert("repo".into(), repo.into());
        metadata.insert("pr".into(), pr.into());
        EditInstance {
            instance_id: format!("{repo}#{pr}:{path}"),
            path: path.into(),
            original: "a\n".into(),
            target: "b\n".into(),
            instruction: "i".into(),
            metadata,
        }
    }

    #[test]
    fn a_prs_files_share_a_split_and_weights_cut_the_prs() {
        let mut instances: Vec<EditInstance> = (0..40)
            .flat_map(|pr| {
                let pr = pr.to_string();
                [instance("r", &pr, "a.py"), instance("r", &pr, "b.py")]
            })
            .collect();
        let splits = parse_splits("train=0.5,val=0.25,test=0.25").unwrap();
        let counts = split_by_pr(&mut instances, &splits, 7);
        assert_eq!(counts["train"], 20);
        assert_eq!(counts["val"], 10);
        assert_eq!(counts["test"], 10);
        for pair in instances.chunks(2) {
            assert_eq!(pair[0].metadata["split"], pair[1].metadata["split"]);
        }
        assert!(parse_splits("train").is_err());
        assert!(parse_splits("train=-1").is_err());
        assert_eq!(parse_splits("train=2800,val=200").unwrap()[1].1, 200.0);
    }

    #[test]
    fn overlap_by_repository_or_exact_code() {
        let mut task = Task::new("astropy__astropy-1", "astropy/astropy", "abc", "x");
        task.patch = Some(
            "--- a/f.py\n+++ b/f.py\n-    return separability_matrix(transform)\n+    x = 1\n"
                .into(),
        );
        let filter = Decontaminator::new(&[task]);
        let mut same = instance("astropy", "1", "f.py");
        assert!(filter.reason(&same).unwrap().contains("task repository"));
        same.metadata.insert("repo".into(), "other".into());
        assert_eq!(filter.reason(&same), None);
        same.metadata
            .insert("origin".into(), "AstroPy/astropy".into());
        assert!(filter.reason(&same).unwrap().contains("astropy/astropy"));
        let mut code = instance("other", "2", "g.py");
        code.target = "def f():\n        return separability_matrix(transform)\n".into();
        let reason = filter.reason(&code).unwrap();
        assert!(
            reason.contains("exact code overlap with task astropy__astropy-1"),
            "{reason}"
        );
        // Short lines (`x = 1`) are too common to count.
        code.target = "x = 1\n".into();
        assert_eq!(filter.reason(&code), None);
    }
}
