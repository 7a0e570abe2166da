//! Pinned command output, as uv's `uv_snapshot!` pins it: exit code, stdout and stderr in
//! one [insta](https://insta.rs) snapshot, with what changes from run to run replaced by a
//! placeholder ([`FILTERS`]): the repository root, temporary directories, timings and hashes.
//!
//! `assert_cmd_snapshot!("name", output)` writes or compares
//! `snapshots/<module>__<name>.snap` beside the test file. A mismatch fails the test; in CI
//! (`CI=true`) nothing is written. To accept new output without `cargo insta`, run the test
//! with `INSTA_UPDATE=always` and review the `.snap` files' diff with git.

use std::process::Output;

/// Replacements applied to a snapshot before it is compared, as (regex, placeholder), in
/// order: the repository root first (it may itself lie under a temporary directory), then
/// temporary directories (`tempfile`'s, under `$TMPDIR` or `/tmp`), hashes and timings.
pub fn filters() -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let root = root.canonicalize().unwrap_or(root);
    let temp = std::env::temp_dir();
    let temp = temp.to_string_lossy();
    let temp = temp.trim_end_matches('/');
    vec![
        (regex::escape(&root.display().to_string()), "[ROOT]".into()),
        (
            format!(r"{}/\.tmp[A-Za-z0-9]+", regex::escape(temp)),
            "[TEMP]".into(),
        ),
        (r"(/var)?/tmp/\.tmp[A-Za-z0-9]+".into(), "[TEMP]".into()),
        (r"\b[0-9a-f]{64}\b".into(), "[SHA256]".into()),
        (r"\b[0-9a-f]{40}\b".into(), "[HASH]".into()),
        (r"\b\d+(\.\d+)?\s?(ms|µs|s)\b".into(), "[TIME]".into()),
    ]
}

/// The insta settings with [`FILTERS`](filters) added to the current ones.
pub fn settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    for (pattern, replacement) in filters() {
        settings.add_filter(&pattern, replacement);
    }
    settings
}

/// A command's exit code, stdout and stderr as one text.
pub fn render(output: &Output) -> String {
    format!(
        "success: {}\nexit_code: {}\n----- stdout -----\n{}\n----- stderr -----\n{}",
        output.status.success(),
        output.status.code().map_or_else(
            || "none (killed by a signal)".to_owned(),
            |code| code.to_string()
        ),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    )
}

/// Pins a command's [`Output`] (exit code, stdout, stderr) as the snapshot `name`, with the
/// [`filters`] applied: `assert_cmd_snapshot!("run_help", output)`.
#[macro_export]
macro_rules! assert_cmd_snapshot {
    ($name:expr, $output:expr $(,)?) => {{
        let rendered = $crate::snapshot::render(&$output);
        $crate::snapshot::settings().bind(|| {
            $crate::insta::assert_snapshot!($name, rendered);
        });
    }};
}
