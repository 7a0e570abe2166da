//! What a test command needs in order to start, and the probe script that checks it on the
//! unpatched workspace ([`probe_script`]).
//!
//! A test command that cannot start (the runner or its interpreter missing from the task's
//! environment) is the machinery's failure, not the model's: grading it as unresolved would
//! give a correct patch a reward of 0. But a patch can also break the runner (delete the
//! test file, shadow `unittest`, replace the runner script), and that must stay the model's
//! failure, or a policy could dodge a 0 by breaking the runner. So the decision is made
//! from what the harness controls: before the patch is applied, in the fresh workspace the
//! tests will run in, the probe checks that each program the test command starts is on
//! `PATH` and executable, that a script's `#!` interpreter exists, and that `python -m
//! MODULE` finds its module. A probe that fails is an `infra` error; a command that fails
//! to start after a passing probe is the patch's doing.
//!
//! Only programs outside the repository are checked: a relative path (`./tests/runtests.py`,
//! `bin/test`) or a path under the repository is the repository's own file, which the test
//! patch may create and the model's patch may change.

use super::resolve::TestSpec;
use super::shell::quote;

/// One thing the test command needs to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunnerNeed {
    /// A program, found on `PATH` (or at its absolute path), executable, with its `#!`
    /// interpreter present.
    Program(String),
    /// A module that `python -m` runs: (the Python program, the module).
    PythonModule(String, String),
}

/// What `test_cmd` needs to start, for a repository checked out at `repo_dir`: the program
/// of each simple command (after leading `NAME=value` words, `env` and `timeout`), and the
/// module of each `python… -m MODULE`.
pub fn runner_needs(test_cmd: &str, repo_dir: &str) -> Vec<RunnerNeed> {
    let mut needs = Vec::new();
    for words in simple_commands(test_cmd) {
        let mut words = words.iter().map(String::as_str).peekable();
        while words.peek().is_some_and(|word| is_assignment(word)) {
            words.next();
        }
        let mut program = words.next();
        while let Some(wrapper @ ("env" | "timeout")) = program {
            // The options that take the next word as their argument.
            let with_argument: &[&str] = match wrapper {
                "env" => &["-u", "--unset", "-C", "--chdir", "-S", "--split-string"],
                _ => &["-s", "--signal", "-k", "--kill-after"],
            };
            while let Some(word) =
                words.next_if(|word| word.starts_with('-') || is_assignment(word))
            {
                if with_argument.contains(&word) {
                    words.next();
                }
            }
            if wrapper == "timeout" {
                words.next();
            }
            program = words.next();
        }
        let Some(program) = program else { continue };
        let outside_repository = !program.contains('/')
            || (program.starts_with('/') && !program.starts_with(&format!("{repo_dir}/")));
        if !outside_repository {
            continue;
        }
        needs.push(RunnerNeed::Program(program.to_owned()));
        let name = program.rsplit('/').next().unwrap_or(program);
        if name.starts_with("python") {
            let rest: Vec<&str> = words.collect();
            if let Some(module) = rest
                .iter()
                .position(|word| *word == "-m")
                .and_then(|at| rest.get(at + 1))
            {
                needs.push(RunnerNeed::PythonModule(
                    program.to_owned(),
                    (*module).to_owned(),
                ));
            }
        }
    }
    needs.dedup();
    needs
}

/// The probe for `spec` in the repository at `repo_dir`: a bash script that checks what
/// its test command needs ([`runner_needs`]) with the recipe's variables exported, as the
/// eval script exports them; `None` when there is nothing to check, or when the task brings
/// its own eval script (the harness cannot tell its test command apart). It prints what is
/// missing and exits with 127 (not found) or 126 (found but cannot run), like a shell whose
/// command cannot start; 0 when everything is there.
pub fn probe_script(spec: &TestSpec, repo_dir: &str) -> Option<String> {
    if spec.eval_script.is_some() {
        return None;
    }
    let needs = runner_needs(&spec.test_cmd, repo_dir);
    if needs.is_empty() {
        return None;
    }
    let mut lines = vec![
        PROBE_FUNCTIONS.to_owned(),
        format!("cd {}", quote(repo_dir)),
    ];
    for (name, value) in spec.recipe.iter().flat_map(|recipe| &recipe.env) {
        lines.push(format!("export {name}={}", quote(value)));
    }
    for need in needs {
        lines.push(match need {
            RunnerNeed::Program(program) => format!("swerve_needs_program {}", quote(&program)),
            RunnerNeed::PythonModule(python, module) => {
                format!("swerve_needs_module {} {}", quote(&python), quote(&module))
            }
        });
    }
    lines.push("exit 0".into());
    Some(lines.join("\n") + "\n")
}

/// The probe's shell functions. Each returns from the script with 127 or 126 when what it
/// checks is missing. A module check that fails for another reason than "not found" (an old
/// Python without `importlib.util`, an import error in a parent package) passes: only a
/// clear absence is the environment's fault.
const PROBE_FUNCTIONS: &str = r#"#!/bin/bash
swerve_needs_program() {
  local path line interpreter argument
  path=$(command -v -- "$1") || { echo "swerve probe: the test runner '$1' is not on PATH ($PATH)"; exit 127; }
  case $path in /*) ;; *) return 0 ;; esac
  [ -x "$path" ] || { echo "swerve probe: the test runner $path is not executable"; exit 126; }
  line=$(head -c 256 -- "$path" 2>/dev/null | head -n 1 | tr -d '\0')
  case $line in
    '#!'*)
      read -r interpreter argument _ <<<"${line#'#!'}"
      [ -x "$interpreter" ] || { echo "swerve probe: $path needs the interpreter $interpreter, which is missing"; exit 126; }
      if [ "${interpreter##*/}" = env ] && [ -n "$argument" ] && [ "${argument#-}" = "$argument" ]; then
        command -v -- "$argument" >/dev/null || { echo "swerve probe: $path runs $argument, which is not on PATH ($PATH)"; exit 127; }
      fi ;;
  esac
}
swerve_needs_module() {
  "$1" -c 'import importlib.util, sys; sys.exit(0 if importlib.util.find_spec(sys.argv[1]) else 3)' "$2" >/dev/null 2>&1
  if [ $? = 3 ]; then echo "swerve probe: $1 cannot find the module $2"; exit 127; fi
}"#;

/// Whether `word` is a `NAME=value` assignment.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// The words of each simple command of `text`: split at unquoted `;`, `&`, `|`, newlines
/// and parentheses, words at unquoted blanks, with quotes and backslashes removed.
fn simple_commands(text: &str) -> Vec<Vec<String>> {
    let mut commands = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                let word = word.get_or_insert_with(String::new);
                word.extend(chars.by_ref().take_while(|&c| c != '\''));
            }
            '"' => {
                let word = word.get_or_insert_with(String::new);
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => word.extend(chars.next()),
                        c => word.push(c),
                    }
                }
            }
            '\\' => word.get_or_insert_with(String::new).extend(chars.next()),
            ';' | '&' | '|' | '\n' | '(' | ')' => {
                words.extend(word.take());
                if !words.is_empty() {
                    commands.push(std::mem::take(&mut words));
                }
            }
            c if c.is_whitespace() => words.extend(word.take()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    if !words.is_empty() {
        commands.push(words);
    }
    commands
}

#[cfg(test)]
mod tests {
    use super::*;

    fn programs(test_cmd: &str) -> Vec<RunnerNeed> {
        runner_needs(test_cmd, "/testbed")
    }

    #[test]
    fn finds_the_programs_and_modules_a_command_starts() {
        use RunnerNeed::{Program, PythonModule};
        assert_eq!(
            programs("cargo test --offline --no-fail-fast"),
            [Program("cargo".into())]
        );
        assert_eq!(
            programs("PYTHONWARNINGS=ignore python3 -W ignore -m pytest -rA"),
            [
                Program("python3".into()),
                PythonModule("python3".into(), "pytest".into())
            ]
        );
        assert_eq!(
            programs("env -u X A=1 timeout -s KILL 300 go test -v ./... && npm test"),
            [Program("go".into()), Program("npm".into())]
        );
        assert_eq!(
            programs("source /opt/venv/bin/activate; '/opt/py 3/bin/python' -m \"unittest\""),
            [
                Program("source".into()),
                Program("/opt/py 3/bin/python".into()),
                PythonModule("/opt/py 3/bin/python".into(), "unittest".into())
            ]
        );
    }

    #[test]
    fn leaves_the_repositorys_own_files_unchecked() {
        assert!(programs("./tests/runtests.py --verbosity 2").is_empty());
        assert!(programs("bin/test -C --verbose").is_empty());
        assert!(programs("/testbed/run.sh").is_empty());
        assert_eq!(
            programs("bash run_tests.sh"),
            [RunnerNeed::Program("bash".into())]
        );
    }

    #[test]
    fn names_of_programs_and_modules_are_quoted_in_the_script() {
        let needs = runner_needs("'/opt/my python/bin/python' -m pytest", "/testbed");
        let script: Vec<String> = needs
            .iter()
            .map(|need| match need {
                RunnerNeed::Program(program) => quote(program),
                RunnerNeed::PythonModule(_, module) => quote(module),
            })
            .collect();
        assert_eq!(script, ["'/opt/my python/bin/python'", "pytest"]);
    }
}
