//! The guard: grading judges the code, not the test machinery.
//!
//! The policy's patch is hostile too: it may touch any file, including the ones that decide
//! how the tests are collected, run and reported. Around the patch, the evaluation
//! ([`crate::evaluate`]) goes through a [`Guard`]:
//!
//! 1. **before the patch**, in the untouched workspace, a [`machinery::Snapshot`] of every
//!    test-machinery file ([`machinery::RULES`]), read into the grader's memory;
//! 2. **after the patch**, another; every machinery file the patch changed is written back
//!    as it was ([`machinery::restore_script`]) and named in the report, so the tests always
//!    run with the base's machinery plus the test patch; the reward then follows
//!    `reward.test_machinery_change` ([`TestMachineryChange`]): `reject` (the default, and
//!    every training preset's) or `flag`;
//! 3. **before the tests**, after the eval script's first part (the install step, the test
//!    files' reset and the test patch) ran and every process it left was killed, two
//!    [`canary`] tests are written among the task's own tests: one must pass, one must
//!    fail;
//! 4. **after the tests**, the log is checked: the harness's markers appear as often as the
//!    script prints them ([`forged_markers`]: a test that prints `>>>>> End Test Output`
//!    cuts the graded output short) and the canaries come out as they must
//!    ([`canary::tampering`]).
//!
//! A run that fails step 4 is `tampered`: not resolved, reward 0, and not infra (the
//! model did it). docs/security.md has the threat model and the adversarial corpus.

pub mod canary;
pub mod machinery;

use std::time::Duration;

use serde::{Deserialize, Serialize};
use swerve_core::Shell;
use swerve_core::grading::TestMachineryChange;

use crate::apply::write_file;
use crate::parsers::{END_TEST_OUTPUT, START_TEST_OUTPUT, StatusMap};
use crate::spec::shell::quote;
use crate::status::EvalType;
use canary::{Canaries, CanaryStatus, Draws, Form, Planned};
use machinery::{ChangeKind, Machinery, MachineryChange, Snapshot};

/// What the guard found, in the instance's report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuardReport {
    /// The guard's verdict.
    pub verdict: GuardVerdict,
    /// Why the verdict is not `clean`, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The policy in force for machinery changes.
    pub test_machinery_change: TestMachineryChange,
    /// The machinery files the patch changed (put back before the tests ran), each with the
    /// rule it falls under.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub test_machinery: Vec<MachineryChange>,
    /// The canaries, where they were placed and what the log said of them.
    pub canaries: Canaries,
}

/// The guard's verdict on one evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GuardVerdict {
    /// Nothing found: the grade stands (a flagged machinery change is named in the report).
    Clean,
    /// The patch changed the test machinery under `reject`, or wrote into the environment's
    /// installed packages: not resolved.
    TestMachineryRejected,
    /// The run's report was rewritten or forged: not resolved.
    Tampered,
}

impl GuardVerdict {
    /// The name in reports (`clean`, `test_machinery_rejected`, `tampered`).
    pub fn as_str(self) -> &'static str {
        match self {
            GuardVerdict::Clean => "clean",
            GuardVerdict::TestMachineryRejected => "test_machinery_rejected",
            GuardVerdict::Tampered => "tampered",
        }
    }
}

/// How a task's tests run, as the guard needs it (from its test spec).
#[derive(Debug, Clone, Default)]
pub struct TestRun {
    /// The test command with its directives.
    pub command: String,
    /// The log parser's name.
    pub log_parser: String,
    /// The test directives (the arguments naming what to run).
    pub directives: Vec<String>,
    /// The files the test patch changes or creates.
    pub test_files: Vec<String>,
}

/// The guard of one evaluation, carried through its phases.
pub struct Guard {
    run: TestRun,
    machinery: Machinery,
    policy: TestMachineryChange,
    repo_dir: String,
    before: Option<Snapshot>,
    changes: Vec<MachineryChange>,
    planned: Result<Planned, String>,
}

/// Where the guard's scripts are written inside the sandbox.
const SCRIPT_PATH: &str = "/tmp/swerve-guard.sh";

impl Guard {
    /// The guard for a task whose tests run as `run` says, in the repository at `repo_dir`.
    pub fn new(run: TestRun, policy: TestMachineryChange, repo_dir: &str) -> Guard {
        Guard {
            machinery: Machinery::new(&run.command, &run.test_files),
            run,
            policy,
            repo_dir: repo_dir.to_owned(),
            before: None,
            changes: Vec::new(),
            planned: Err(
                "the eval script has no test-output start marker to place them before".into(),
            ),
        }
    }

    /// Step 1: the machinery of the untouched workspace. `Err`: the sandbox could not list
    /// it (the machinery's failure).
    pub fn before_patch(&mut self, shell: &dyn Shell, timeout: Duration) -> Result<(), String> {
        self.before = Some(self.snapshot(shell, timeout)??);
        Ok(())
    }

    /// Step 2: names what `patch` changed of the machinery and puts it back. `Err`: the
    /// sandbox failed (the machinery's failure). The same listing failing after the patch
    /// where it worked before it, or the restore not completing, is the patch's doing (a
    /// directory made unreadable, say): recorded as an unverifiable change, which rejects
    /// the instance whatever the policy.
    pub fn after_patch(
        &mut self,
        shell: &dyn Shell,
        patch: Option<&str>,
        timeout: Duration,
    ) -> Result<(), String> {
        let before = self.before.take().unwrap_or_default();
        let after = match self.snapshot(shell, timeout)? {
            Ok(after) => after,
            Err(why) => {
                self.changes = vec![unverifiable(format!(
                    "the test machinery could not be listed after the patch: {why}"
                ))];
                return Ok(());
            }
        };
        self.changes = machinery::changes(&self.machinery, &before, &after, patch);
        if self.changes.is_empty() {
            return Ok(());
        }
        let script = machinery::restore_script(&self.repo_dir, &before, &self.changes);
        let outcome = write_file(shell, SCRIPT_PATH, &script, timeout)
            .and_then(|()| shell.run(&format!("bash {SCRIPT_PATH} 2>&1"), timeout))
            .map_err(|error| format!("restoring the test machinery: {error}"))?;
        if outcome.timed_out {
            return Err(format!(
                "restoring the test machinery took longer than {timeout:?}"
            ));
        }
        if !outcome.stdout_text().contains("swerve-restore-complete") {
            self.changes.push(unverifiable(format!(
                "the test machinery could not be put back: {}",
                outcome.stdout_text().trim()
            )));
        }
        Ok(())
    }

    /// Lists the machinery. `Err`: the sandbox could not run the listing (or it timed out);
    /// `Ok(Err)`: the listing ran and failed (a missing tool, an unreadable file).
    fn snapshot(
        &self,
        shell: &dyn Shell,
        timeout: Duration,
    ) -> Result<Result<Snapshot, String>, String> {
        let script = self.machinery.snapshot_script(&self.repo_dir);
        let outcome = write_file(shell, SCRIPT_PATH, &script, timeout)
            .and_then(|()| shell.run(&format!("bash {SCRIPT_PATH}"), timeout))
            .map_err(|error| format!("listing the test machinery: {error}"))?;
        if outcome.timed_out {
            return Err(format!(
                "listing the test machinery took longer than {timeout:?}"
            ));
        }
        Ok(Snapshot::parse(&outcome.stdout_text()).map_err(|error| {
            format!(
                "{error} (exit {:?}): {}",
                outcome.exit_code,
                outcome.stderr_text().trim()
            )
        }))
    }

    /// Step 3: writes the canaries into a test file the command runs (drawn among the test
    /// patch's), after the eval script's first part. Not placing them is no error (the
    /// report says why); `Err` only when the sandbox failed writing them.
    pub fn place_canaries(
        &mut self,
        shell: &dyn Shell,
        draws: &mut Draws,
        timeout: Duration,
    ) -> Result<(), String> {
        let TestRun {
            command,
            log_parser,
            directives,
            test_files,
        } = &self.run;
        let form = match Form::for_runner(log_parser, command) {
            Ok(form) => form,
            Err(reason) => {
                self.planned = Err(reason);
                return Ok(());
            }
        };
        let mut files: Vec<String> = test_files
            .iter()
            .filter(|file| canary::runs_file(form, command, directives, file))
            .cloned()
            .collect();
        files.sort();
        files.dedup();
        // Test-named files first: the runner surely collects tests from them (a test patch
        // also touches data files and helpers the command names: pylint's lint fixtures,
        // SymPy's quality checks). SymPy's runner collects `test_*.py` alone.
        let (named, other): (Vec<String>, Vec<String>) =
            files.into_iter().partition(|file| canary::test_named(file));
        let mut files = match (named.is_empty(), log_parser.as_str()) {
            (false, _) => named,
            (true, "sympy") => Vec::new(),
            (true, _) => other,
        };
        let mut reason = "the test patch names no test file the test command runs".to_owned();
        while !files.is_empty() {
            let file = files.remove(draws.below(files.len()));
            let path = format!("{}/{file}", self.repo_dir.trim_end_matches('/'));
            let outcome = shell
                .run(&format!("cat -- {}", quote(&path)), timeout)
                .map_err(|error| format!("reading {file} for the canaries: {error}"))?;
            if !outcome.success() {
                reason = format!("{file} is not in the workspace after the test patch");
                continue;
            }
            let Ok(text) = String::from_utf8(outcome.stdout.clone()) else {
                reason = format!("{file} is not UTF-8");
                continue;
            };
            match canary::plan(form, &file, &text, draws) {
                Ok(planned) => {
                    write_file(shell, &quote(&path), &planned.text, timeout)
                        .map_err(|error| format!("writing the canaries into {file}: {error}"))?;
                    self.planned = Ok(planned);
                    return Ok(());
                }
                Err(why) => reason = why,
            }
        }
        self.planned = Err(reason);
        Ok(())
    }

    /// The guard's findings before the tests' log is judged: the machinery changes, the
    /// canaries placed (their statuses not yet read), the verdict `clean` until
    /// [`GuardReport::judge`].
    pub fn into_report(self) -> GuardReport {
        let canaries = match self.planned {
            Ok(planned) => Canaries::Yes {
                file: planned.file,
                must_pass: CanaryStatus {
                    name: planned.must_pass,
                    status: None,
                },
                must_fail: CanaryStatus {
                    name: planned.must_fail,
                    status: None,
                },
            },
            Err(reason) => Canaries::No { reason },
        };
        GuardReport {
            verdict: GuardVerdict::Clean,
            reason: None,
            test_machinery_change: self.policy,
            test_machinery: self.changes,
            canaries,
        }
    }
}

impl GuardReport {
    /// The names of the placed canaries (none when not placed), to leave out of the grade.
    pub fn canary_names(&self) -> Vec<String> {
        match &self.canaries {
            Canaries::Yes {
                must_pass,
                must_fail,
                ..
            } => vec![must_pass.name.clone(), must_fail.name.clone()],
            Canaries::No { .. } => Vec::new(),
        }
    }

    /// Whether a machinery change stops the instance from being resolved whatever the tests
    /// say (`reject`, or a change no snapshot can put back).
    pub fn rejects(&self) -> bool {
        !self.test_machinery.is_empty()
            && (self.test_machinery_change == TestMachineryChange::Reject
                || self.test_machinery.iter().any(|change| {
                    matches!(
                        change.change,
                        ChangeKind::Environment | ChangeKind::Unverifiable
                    )
                }))
    }

    /// Step 4: judges a run whose log is `log`, printed by `script` (`None`: not known, as
    /// for a saved log without its script; the markers are then not checked): reads the
    /// canaries' statuses from `statuses` (the log's parse, canaries in) and sets the
    /// verdict; `resolved`: whether the task's own tests resolve the instance.
    pub fn judge(
        &mut self,
        log: &str,
        script: Option<&str>,
        statuses: Option<&StatusMap>,
        resolved: bool,
        eval_type: EvalType,
    ) {
        if let Canaries::Yes {
            must_pass,
            must_fail,
            ..
        } = &mut self.canaries
        {
            for canary in [must_pass, must_fail] {
                canary.status =
                    statuses.and_then(|statuses| canary::status_of(statuses, &canary.name));
            }
        }
        let tampered = script
            .and_then(|script| forged_markers(log, script))
            .or_else(|| match &self.canaries {
                Canaries::Yes {
                    must_pass,
                    must_fail,
                    ..
                } if statuses.is_some() => {
                    canary::tampering(must_pass.status, must_fail.status, resolved, eval_type)
                }
                _ => None,
            });
        (self.verdict, self.reason) = if let Some(reason) = tampered {
            (GuardVerdict::Tampered, Some(reason))
        } else if self.rejects() {
            let files: Vec<&str> = self
                .test_machinery
                .iter()
                .map(|change| change.path.as_str())
                .collect();
            (
                GuardVerdict::TestMachineryRejected,
                Some(format!(
                    "the patch changed the test machinery ({}); reward.test_machinery_change = \"{}\"",
                    files.join(", "),
                    self.test_machinery_change.as_str()
                )),
            )
        } else {
            (GuardVerdict::Clean, None)
        };
    }
}

/// A machinery change that cannot be checked or put back, with why.
fn unverifiable(why: String) -> MachineryChange {
    MachineryChange {
        path: ".".into(),
        change: ChangeKind::Unverifiable,
        rule: why,
    }
}

/// Why the log's test-output markers cannot be the harness's, if they cannot: a start or
/// end marker appears more often than `script` prints it (a test printed one, to cut the
/// graded output short or to start it on forged lines).
pub fn forged_markers(log: &str, script: &str) -> Option<String> {
    for marker in [START_TEST_OUTPUT, END_TEST_OUTPUT] {
        let printed = log.matches(marker).count();
        let expected = marker_prints(script, marker);
        if printed > expected {
            return Some(format!(
                "the log has {printed} \"{marker}\" markers where the eval script prints {expected}: the tests printed the harness's markers"
            ));
        }
    }
    None
}

/// How many times `script` prints `marker`: once per line holding it (`:` under `set -x`
/// traces it, `echo` prints it), twice for an `echo` under `set -x` (trace and output).
fn marker_prints(script: &str, marker: &str) -> usize {
    let lines: Vec<&str> = script.lines().collect();
    let commands: Vec<&str> = command_lines(&lines)
        .into_iter()
        .map(|index| lines[index])
        .collect();
    let traced = commands.iter().any(|line| {
        let line = line.trim();
        line.starts_with("set -")
            && line
                .split_whitespace()
                .any(|word| word.starts_with('-') && word.contains('x'))
    });
    commands
        .iter()
        .filter(|line| line.contains(marker))
        .map(|line| {
            let line = line.trim_start();
            match (
                line.starts_with("echo") || line.starts_with("printf"),
                traced,
            ) {
                (true, true) => 2,
                (true, false) | (false, true) => 1,
                (false, false) => 0,
            }
        })
        .sum()
}

/// The eval script cut where the tests start: the part that prepares them (up to the start
/// marker: the install step, the test files' reset, the test patch) and the part that runs
/// them, which repeats the first part's set-up lines (`#!`, `set`, `cd`, `export`,
/// `source`, `conda activate`, at the start of a line). Heredoc bodies (the test patch) are
/// never taken for commands: not for set-up lines, not for the marker. `None` when the
/// script has no start marker line.
pub fn split_eval_script(script: &str) -> Option<(String, String)> {
    let lines: Vec<&str> = script.lines().collect();
    let commands = command_lines(&lines);
    let start = commands
        .iter()
        .copied()
        .find(|&index| lines[index].contains(START_TEST_OUTPUT))?;
    let setup: Vec<&str> = commands
        .iter()
        .take_while(|&&index| index < start)
        .map(|&index| lines[index])
        .filter(|line| {
            [
                "#!",
                "set ",
                "cd ",
                "export ",
                "source ",
                ". ",
                "conda activate",
                "if [ -f /opt/miniconda3/bin/activate ]",
            ]
            .iter()
            .any(|prefix| line.starts_with(prefix))
        })
        .collect();
    let prepare = format!("{}\n", lines[..start].join("\n"));
    let run = format!("{}\n{}\n", setup.join("\n"), lines[start..].join("\n"));
    Some((prepare, run))
}

/// The indices of `lines` that are the shell's to read as commands: all but heredoc bodies
/// and their closing delimiters (`<<EOF`, `<<'EOF'`, `<<"EOF"`, `<<-EOF`, several per line).
fn command_lines(lines: &[&str]) -> Vec<usize> {
    let opener = regex::Regex::new(r#"<<(-?)\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)(['"]?)"#)
        .expect("a valid pattern");
    let mut commands = Vec::new();
    let mut pending: std::collections::VecDeque<(bool, String)> = Default::default();
    for (index, line) in lines.iter().enumerate() {
        if let Some((strip_tabs, delimiter)) = pending.front() {
            let body = if *strip_tabs {
                line.trim_start_matches('\t')
            } else {
                line
            };
            if body == delimiter {
                pending.pop_front();
            }
            continue;
        }
        commands.push(index);
        for captures in opener.captures_iter(line) {
            pending.push_back((&captures[1] == "-", captures[3].to_owned()));
        }
    }
    commands
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A shell whose guard listings print, in turn, what `listings` holds (`None`: the
    /// listing fails), and whose other commands succeed.
    struct Listings(Mutex<Vec<Option<String>>>);

    impl Shell for Listings {
        fn run(&self, command: &str, _: Duration) -> std::io::Result<swerve_core::ExecOutcome> {
            let mut outcome = swerve_core::ExecOutcome {
                exit_code: Some(0),
                ..Default::default()
            };
            if command.starts_with("bash ") {
                match self.0.lock().unwrap().remove(0) {
                    Some(listing) => outcome.stdout = listing.into_bytes(),
                    None => outcome.exit_code = Some(96),
                }
            }
            Ok(outcome)
        }
    }

    #[test]
    fn a_listing_that_fails_only_after_the_patch_rejects_and_one_that_fails_before_is_infra() {
        let run = TestRun {
            command: "python -m pytest -rA".into(),
            log_parser: "pytest".into(),
            ..TestRun::default()
        };
        let complete = Some("swerve-snapshot-complete\n".to_owned());
        let shell = Listings(Mutex::new(vec![complete, None]));
        let mut guard = Guard::new(run.clone(), TestMachineryChange::Flag, "/testbed");
        guard.before_patch(&shell, Duration::from_secs(1)).unwrap();
        guard
            .after_patch(&shell, None, Duration::from_secs(1))
            .unwrap();
        let report = guard.into_report();
        assert!(report.rejects(), "{report:?}");
        assert_eq!(report.test_machinery[0].change, ChangeKind::Unverifiable);
        let shell = Listings(Mutex::new(vec![None]));
        let mut guard = Guard::new(run, TestMachineryChange::Flag, "/testbed");
        assert!(guard.before_patch(&shell, Duration::from_secs(1)).is_err());
    }

    #[test]
    fn the_script_splits_at_the_start_marker_and_repeats_its_setup() {
        let script = "#!/bin/bash\nset -uxo pipefail\ncd /testbed\nexport A=1\ngit status\npip install -e .\ngit apply -v - <<'EOF'\npatch\nEOF\n: '>>>>> Start Test Output'\npytest -rA\n: '>>>>> End Test Output'\n";
        let (prepare, run) = split_eval_script(script).unwrap();
        assert!(prepare.contains("pip install -e .") && prepare.contains("git apply"));
        assert!(!prepare.contains("Start Test Output"));
        assert_eq!(
            run,
            "#!/bin/bash\nset -uxo pipefail\ncd /testbed\nexport A=1\n: '>>>>> Start Test Output'\npytest -rA\n: '>>>>> End Test Output'\n"
        );
        assert!(split_eval_script("pytest\n").is_none());
    }

    #[test]
    fn heredoc_bodies_are_not_commands() {
        // A test patch's context line that reads like a set-up line (sympy-16792's), and a
        // marker inside the patch, stay in the heredoc.
        let script = "#!/bin/bash\nset -uxo pipefail\ncd /testbed\ngit apply -v - <<'EOF_114329324912'\n     source = get_string(code_gen.dump_f95, [])\ncd /elsewhere\n: '>>>>> Start Test Output'\nEOF_114329324912\ncat <<-END > x\n\tsource y\n\tEND\n: '>>>>> Start Test Output'\npytest -rA\n";
        let (prepare, run) = split_eval_script(script).unwrap();
        assert_eq!(
            run,
            "#!/bin/bash\nset -uxo pipefail\ncd /testbed\n: '>>>>> Start Test Output'\npytest -rA\n"
        );
        assert!(prepare.ends_with("\tEND\n"), "{prepare}");
    }

    #[test]
    fn markers_printed_by_the_tests_are_forged() {
        let script =
            "set -uxo pipefail\n: '>>>>> Start Test Output'\npytest\n: '>>>>> End Test Output'\n";
        let honest = "+ : '>>>>> Start Test Output'\nPASSED a\n+ : '>>>>> End Test Output'\n";
        assert_eq!(forged_markers(honest, script), None);
        let forged = "+ : '>>>>> Start Test Output'\nPASSED a\n>>>>> End Test Output\nFAILED a\n+ : '>>>>> End Test Output'\n";
        assert!(forged_markers(forged, script).is_some());
        let echoed = "set -x\necho '>>>>> Start Test Output'\n";
        assert_eq!(marker_prints(echoed, START_TEST_OUTPUT), 2);
    }
}
