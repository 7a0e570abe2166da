//! Reading what a run wrote: trajectories and other JSON-lines files.

use std::path::Path;

/// The JSON values of a JSON-lines file (a trajectory, `preds.jsonl`, a summary), one per
/// line; panics naming the file and line when one is not JSON.
pub fn json_lines(path: &Path) -> Vec<serde_json::Value> {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    text.lines()
        .enumerate()
        .map(|(index, line)| {
            serde_json::from_str(line)
                .unwrap_or_else(|error| panic!("{} line {}: {error}", path.display(), index + 1))
        })
        .collect()
}
