//! The per-trajectory results of a replay directory, so a replay of hundreds of trajectories
//! resumes: `results/<name>.json` ([`TrajectoryResult`]: the trajectory's report, its
//! throughput and the task row it was replayed against), written atomically as each
//! trajectory ends. A trajectory whose result is there is done; the final report is built
//! from the results of every trajectory ([`collect`]), in the order given, whatever order
//! they ended in.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use swerve_core::atomic::write_json_atomically;

use crate::report::{ReplayReport, Throughput, TrajectoryReport};

/// The directory of the results, under a replay's output directory.
pub const RESULTS_DIR: &str = "results";

/// What replaying one trajectory gave, as kept in `results/<name>.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrajectoryResult {
    /// The task row it was replayed against, as JSON text (compared as text, so that no
    /// number read back differs in its last digit): a resumed replay whose task file gives
    /// another row for it would mix two set-ups.
    pub task: String,
    /// Its report.
    pub report: TrajectoryReport,
    /// Its share of the replay's throughput.
    pub throughput: Throughput,
}

/// The file name (without extension) of the trajectory `id`: `/` written `__`.
pub fn file_name(id: &str) -> String {
    id.replace('/', "__")
}

/// Where the result of the trajectory named `name` ([`file_name`]) goes under `out`.
pub fn path(out: &Path, name: &str) -> PathBuf {
    out.join(RESULTS_DIR).join(format!("{name}.json"))
}

/// Writes `result` for the trajectory named `name` under `out`, atomically (a temporary
/// file renamed), so a replay killed meanwhile leaves either the whole result or none.
pub fn write(out: &Path, name: &str, result: &TrajectoryResult) -> std::io::Result<()> {
    write_json_atomically(&path(out, name), result)
}

/// The result of the trajectory named `name` under `out`; `None` when there is none (or it
/// cannot be read: the trajectory is then replayed again).
pub fn read(out: &Path, name: &str) -> Option<TrajectoryResult> {
    let bytes = std::fs::read(path(out, name)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Removes the result of the trajectory named `name` under `out`, if there is one (before
/// replaying it again, so a failure now does not leave an earlier success standing).
pub fn remove(out: &Path, name: &str) -> std::io::Result<()> {
    match std::fs::remove_file(path(out, name)) {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err(error),
        _ => Ok(()),
    }
}

/// The report and the summed throughput of `entries` (each a trajectory's name and the
/// report this invocation gave it, if it ran), in their order: each one's result under `out`
/// when there is one, else the report given (a trajectory that failed, whose result is not
/// kept, so that the next replay retries it).
pub fn collect(
    out: &Path,
    entries: impl IntoIterator<Item = (String, Option<TrajectoryReport>)>,
) -> (ReplayReport, Throughput) {
    let mut reports = Vec::new();
    let mut throughput = Throughput::default();
    for (name, failed) in entries {
        match (read(out, &name), failed) {
            (Some(result), _) => {
                throughput.add(&result.throughput);
                reports.push(result.report);
            }
            (None, Some(report)) => reports.push(report),
            (None, None) => {}
        }
    }
    (ReplayReport::of(reports), throughput)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(id: &str, steps: usize, seconds: f64) -> TrajectoryResult {
        let mut report = TrajectoryReport::failed(id, "task-1", "owner/repo", "swerve", "x".into());
        report.error = None;
        TrajectoryResult {
            task: r#"{"instance_id":"task-1"}"#.into(),
            report,
            throughput: Throughput {
                steps,
                replay_env_seconds: seconds,
                recorded_env_seconds: Some(seconds * 2.0),
                recorded_steps: steps,
            },
        }
    }

    #[test]
    fn a_written_result_reads_back_and_a_removed_one_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(RESULTS_DIR)).unwrap();
        let name = file_name("run/a");
        assert_eq!(name, "run__a");
        assert_eq!(read(dir.path(), &name), None);
        let written = result("run/a", 3, 0.1);
        write(dir.path(), &name, &written).unwrap();
        assert_eq!(read(dir.path(), &name), Some(written));
        remove(dir.path(), &name).unwrap();
        assert_eq!(read(dir.path(), &name), None);
        // Removing what is not there is not an error.
        remove(dir.path(), &name).unwrap();
    }

    #[test]
    fn an_unreadable_result_counts_as_none() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(RESULTS_DIR)).unwrap();
        std::fs::write(path(dir.path(), "cut"), "{\"task\": ").unwrap();
        assert_eq!(read(dir.path(), "cut"), None);
    }

    #[test]
    fn the_report_follows_the_order_given_and_sums_every_throughput() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(RESULTS_DIR)).unwrap();
        // Written in another order than they are given.
        write(dir.path(), "b", &result("b", 2, 1.5)).unwrap();
        write(dir.path(), "a", &result("a", 3, 0.5)).unwrap();
        let failed = TrajectoryReport::failed("c", "", "", "", "no task".into());
        let (report, throughput) = collect(
            dir.path(),
            [
                ("a".to_owned(), None),
                ("c".to_owned(), Some(failed)),
                ("b".to_owned(), None),
                // Neither a result nor a failure: not in the report.
                ("d".to_owned(), None),
            ],
        );
        let ids: Vec<&str> = report.trajectories.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["a", "c", "b"]);
        assert_eq!(report.total.failed, 1);
        assert_eq!(throughput.steps, 5);
        assert_eq!(throughput.replay_env_seconds, 2.0);
        assert_eq!(throughput.recorded_env_seconds, Some(4.0));
        assert_eq!(throughput.recorded_steps, 5);
    }
}
