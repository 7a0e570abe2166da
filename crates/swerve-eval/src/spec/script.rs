//! [`eval_script`]: the bash script that applies the test patch and runs the tests, in the
//! shape of SWE-bench's `eval.sh`.

use swerve_core::task::Task;

use super::reinstall::{Reinstall, reinstall};
use super::resolve::TestSpec;
use super::shell::quote;

/// Printed when the test patch does not apply (contains SWE-bench's `>>>>> Tests Errored`).
pub const TEST_PATCH_FAILED: &str = ">>>>> Tests Errored: the test patch does not apply";

/// The heredoc delimiter SWE-bench puts around the test patch.
pub const HEREDOC_DELIMITER: &str = "EOF_114329324912";

/// The eval script for `task` under `spec`, run in the checkout at `repo_dir` after `patch`
/// (the prediction, if any) was applied to it. A task's own SWE-bench 5.x `eval_script`
/// ([`TestSpec::eval_script`]) is returned unchanged.
/// Otherwise, as SWE-bench's `make_eval_script_list` (5.x shape):
///
/// ```text
/// #!/bin/bash
/// set -uxo pipefail
/// cd <repo_dir>
/// export NAME=value                       # the recipe's env, if any
/// git status                              # for the log only
/// git show
/// git -c core.fileMode=false diff <base_commit>
/// <install>                               # the recipe's install command, if any (*)
/// git checkout <base_commit> <test files> # files the test patch changes
/// rm -f <new test files>                  # files the test patch creates
/// git apply -v - <<'EOF_114329324912' || echo '>>>>> Tests Errored: the test patch does not apply'
/// <test patch>
/// EOF_114329324912
/// : '>>>>> Start Test Output'
/// <test_cmd> <directives>
/// SWEBENCH_TEST_EXIT_CODE=$?
/// case … esac                             # the recipe's test_exit_codes, if any, become 0
/// : '>>>>> End Test Output'
/// echo ">>>>> Test Exit Code: $SWEBENCH_TEST_EXIT_CODE"
/// git checkout <base_commit> <test files> # and rm -f <new test files>: leave as found
/// ```
///
/// Differences from SWE-bench, which runs the script as root in its own container: no
/// conda activation (the caller runs the script with the environment first on `PATH`), and
/// no `git config --global --add safe.directory` (it would change the user's git
/// configuration; run the script as the checkout's owner). (*) An editable install that
/// `patch` gives no reason to rebuild is kept instead of re-run (see
/// [`reinstall`](super::reinstall)): the line becomes `: 'swerve: editable install kept …'`.
///
/// There is no `set -e`, as in SWE-bench, so the tests still run if the test patch does not
/// apply; but then the script also prints [`TEST_PATCH_FAILED`], which starts with SWE-bench's
/// `>>>>> Tests Errored` marker, so the instance is an evaluation error (`tests_errored`)
/// instead of silently grading against the old tests. File names and
/// directives are quoted for the shell when they need it; the test command and the recipe's
/// install command are shell text and are written as they are. If the test patch contains a
/// line equal to the heredoc delimiter, `_1`, `_2`, … is appended to the delimiter until it
/// does not.
pub fn eval_script(spec: &TestSpec, task: &Task, repo_dir: &str, patch: Option<&str>) -> String {
    if let Some(script) = &spec.eval_script {
        return script.clone();
    }
    let base = quote(&task.base_commit);
    let mut lines: Vec<String> = vec![
        "#!/bin/bash".into(),
        "set -uxo pipefail".into(),
        format!("cd {}", quote(repo_dir)),
    ];
    if let Some(recipe) = &spec.recipe {
        for (name, value) in &recipe.env {
            lines.push(format!("export {name}={}", quote(value)));
        }
    }
    lines.extend([
        "git status".into(),
        "git show".into(),
        format!("git -c core.fileMode=false diff {base}"),
    ]);
    if let Some(install) = spec
        .recipe
        .as_ref()
        .and_then(|recipe| recipe.install.as_ref())
    {
        lines.push(match reinstall(install, patch) {
            Reinstall::Run(_) => install.clone(),
            Reinstall::Keep => format!(
                ": {}",
                quote(&format!(
                    "swerve: editable install kept (the patch changes no build input): {install}"
                ))
            ),
        });
    }
    let mut reset = Vec::new();
    if !spec.test_files.is_empty() {
        reset.push(format!(
            "git checkout {base} {}",
            quote_all(&spec.test_files)
        ));
    }
    if !spec.new_test_files.is_empty() {
        reset.push(format!("rm -f {}", quote_all(&spec.new_test_files)));
    }
    lines.extend(reset.iter().cloned());
    if let Some(test_patch) = task.test_patch.as_deref().filter(|patch| !patch.is_empty()) {
        let delimiter = delimiter_for(test_patch);
        lines.push(format!(
            "git apply -v - <<'{delimiter}' || echo '{TEST_PATCH_FAILED}'\n{test_patch}\n{delimiter}"
        ));
    }
    lines.extend([
        ": '>>>>> Start Test Output'".into(),
        spec.test_command(),
        "SWEBENCH_TEST_EXIT_CODE=$?".into(),
    ]);
    let expected_codes = spec
        .recipe
        .as_ref()
        .map(|recipe| recipe.test_exit_codes.as_slice())
        .unwrap_or_default();
    if !expected_codes.is_empty() {
        let codes: Vec<String> = expected_codes.iter().map(i32::to_string).collect();
        lines.push(format!(
            "case $SWEBENCH_TEST_EXIT_CODE in {}) echo \"swerve: exit code $SWEBENCH_TEST_EXIT_CODE is one the recipe expects of the test command (test_exit_codes); recorded as 0\"; SWEBENCH_TEST_EXIT_CODE=0 ;; esac",
            codes.join("|")
        ));
    }
    lines.extend([
        ": '>>>>> End Test Output'".into(),
        "echo \">>>>> Test Exit Code: $SWEBENCH_TEST_EXIT_CODE\"".into(),
    ]);
    lines.extend(reset);
    let mut script = lines.join("\n");
    script.push('\n');
    script
}

/// [`HEREDOC_DELIMITER`], or it with the first suffix `_N` that no line of `text` equals.
fn delimiter_for(text: &str) -> String {
    let taken = |candidate: &str| text.lines().any(|line| line == candidate);
    let mut delimiter = HEREDOC_DELIMITER.to_owned();
    let mut suffix = 0;
    while taken(&delimiter) {
        suffix += 1;
        delimiter = format!("{HEREDOC_DELIMITER}_{suffix}");
    }
    delimiter
}

fn quote_all(words: &[String]) -> String {
    words
        .iter()
        .map(|word| quote(word))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quote_leaves_plain_words() {
        assert_eq!(quote("tests/test_x.py"), "tests/test_x.py");
        assert_eq!(quote("queries.tests"), "queries.tests");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("$HOME"), "'$HOME'");
    }

    #[test]
    fn delimiter_avoids_patch_lines() {
        assert_eq!(delimiter_for("x\n"), HEREDOC_DELIMITER);
        let text = format!("a\n{HEREDOC_DELIMITER}\n{HEREDOC_DELIMITER}_1\n");
        assert_eq!(delimiter_for(&text), format!("{HEREDOC_DELIMITER}_2"));
    }
}
