//! Canary tests: two tests the grader adds among the task's own tests at evaluation time,
//! one that must pass and one that must fail.
//!
//! Restoring files cannot stop code the patch controls from rewriting the runner's report
//! at run time: the package under test is imported by its tests, so whatever it does at
//! import runs inside pytest, unittest or SymPy's runner. The canaries are how the grader
//! tells: a run that reports the must-fail canary passed (or, in a run otherwise resolved,
//! either canary anything but what it must be, or missing) was tampered with.
//!
//! A patch cannot tell the canaries from the task's tests by name, body or place: both are
//! drawn fresh per evaluation ([`Draws`]), their names from the words of the file's own test
//! names, their bodies from ordinary assertion shapes, their place (Python) before a random
//! top-level definition of a test file the test command runs; they are written after the
//! patch's install step has run and every process it left is gone, and the files that would
//! tell them apart (the test patch, the eval script) are not in the sandbox when the tests
//! run. What they cannot catch is said in docs/security.md.

use crate::parsers::StatusMap;
use crate::status::{EvalType, TestStatus};
use serde::{Deserialize, Serialize};

/// A source of random draws: a seed fresh from the kernel per evaluation (or given, in
/// tests), each draw [`swerve_core::seeded::draw`] of it and the draw's number.
#[derive(Debug, Clone)]
pub struct Draws {
    seed: u64,
    count: u64,
}

impl Draws {
    /// Draws seeded from `/dev/urandom` (or, failing that, the clock and the process id).
    pub fn fresh() -> Draws {
        let mut seed = [0u8; 8];
        let read = std::fs::File::open("/dev/urandom")
            .and_then(|mut file| std::io::Read::read_exact(&mut file, &mut seed));
        let seed = match read {
            Ok(()) => u64::from_le_bytes(seed),
            Err(_) => {
                let nanos = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |elapsed| elapsed.as_nanos() as u64);
                nanos ^ (u64::from(std::process::id()) << 32)
            }
        };
        Draws::seeded(seed)
    }

    /// Draws that depend only on `seed`.
    pub fn seeded(seed: u64) -> Draws {
        Draws { seed, count: 0 }
    }

    /// A number in `0..n` (`n > 0`; at most `u32::MAX`).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        self.count += 1;
        let max = u32::try_from(n.max(1) - 1).unwrap_or(u32::MAX);
        swerve_core::seeded::draw(self.seed, &self.count.to_string(), 0, max) as usize
    }

    /// A number in `low..=high`.
    fn between(&mut self, low: i64, high: i64) -> i64 {
        low + self.below((high - low + 1) as usize) as i64
    }
}

/// How canaries are written for a runner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// Module-level `def test_…():` functions (pytest, SymPy's runner).
    PythonFunctions,
    /// A `unittest.TestCase` class (unittest, Django's runner).
    PythonTestCase,
    /// `#[test] fn …()` (cargo test).
    Rust,
    /// `func Test…(t *testing.T)` (go test).
    Go,
}

impl Form {
    /// The form for a log parser and test command, or why canaries cannot be placed: the
    /// runner has no form here, or the command would stop at the must-fail canary or leave a
    /// canary out (fail-fast, a keyword or name filter).
    pub fn for_runner(log_parser: &str, test_command: &str) -> Result<Form, String> {
        let words: Vec<&str> = test_command.split_whitespace().collect();
        let has = |flag: &str| {
            words
                .iter()
                .any(|word| *word == flag || word.starts_with(&format!("{flag}=")))
        };
        let refuse = |flags: &[&str]| -> Result<(), String> {
            match flags.iter().find(|flag| has(flag)) {
                Some(flag) => Err(format!(
                    "the test command has {flag}, which would stop at the must-fail canary or leave a canary out"
                )),
                None => Ok(()),
            }
        };
        match log_parser {
            "pytest" | "pytest_options" | "pytest_v2" | "matplotlib" | "sympy" | "r2e_gym"
            | "swe_smith" => {
                refuse(&[
                    "-x",
                    "--exitfirst",
                    "--maxfail",
                    "-k",
                    "--lf",
                    "--last-failed",
                    "--deselect",
                    "--sw",
                    "--stepwise",
                    "--first-fail",
                ])?;
                Ok(Form::PythonFunctions)
            }
            "django" | "unittest" => {
                refuse(&["--failfast", "-f", "-k", "--reverse"])?;
                Ok(Form::PythonTestCase)
            }
            "cargo" | "cargo_exact" => {
                if !has("--no-fail-fast") {
                    return Err(
                        "cargo test without --no-fail-fast stops at the first test binary with a failure".into(),
                    );
                }
                if words.contains(&"--")
                    || has("--test")
                    || has("--lib")
                    || has("--bin")
                    || has("--doc")
                {
                    return Err(
                        "the cargo test command selects tests, which may leave a canary out".into(),
                    );
                }
                let positional = words
                    .iter()
                    .skip_while(|word| **word != "test")
                    .skip(1)
                    .any(|word| !word.starts_with('-'));
                if positional {
                    return Err("the cargo test command filters tests by name".into());
                }
                Ok(Form::Rust)
            }
            "gotest" => {
                refuse(&["-run", "-failfast", "-skip"])?;
                Ok(Form::Go)
            }
            other => Err(format!("no canary form for the log parser {other:?}")),
        }
    }

    /// Whether `file` is a test file of this form.
    fn takes(self, file: &str) -> bool {
        let name = file.rsplit('/').next().unwrap_or(file);
        match self {
            Form::PythonFunctions | Form::PythonTestCase => {
                name.ends_with(".py") && name != "conftest.py" && name != "__init__.py"
            }
            Form::Rust => name.ends_with(".rs") && name != "build.rs" && name != "main.rs",
            Form::Go => name.ends_with("_test.go"),
        }
    }
}

/// Whether `file`'s name is a test module's by the runners' own conventions: `test_*.py`,
/// `*_test.py`, `tests.py` (Django), `*_test.go`, and any Rust file under `tests/` or named
/// `tests.rs`.
pub fn test_named(file: &str) -> bool {
    let name = file.rsplit('/').next().unwrap_or(file);
    (name.starts_with("test") && name.ends_with(".py"))
        || name.ends_with("_test.py")
        || name.ends_with("_test.go")
        || (name.ends_with(".rs")
            && (name == "tests.rs" || file.starts_with("tests/") || file.contains("/tests/")))
}

/// Whether the test command with `directives` runs the test file `file` (`directives`
/// empty: the command runs the whole suite, `test_command` says where for Go).
pub fn runs_file(form: Form, test_command: &str, directives: &[String], file: &str) -> bool {
    if form == Form::Go {
        let dir = file.rsplit_once('/').map_or(".", |(dir, _)| dir);
        return test_command.contains("./...")
            || test_command.split_whitespace().any(|word| {
                let word = word.trim_start_matches("./").trim_end_matches('/');
                word == dir || (dir == "." && word == ".")
            });
    }
    if directives.is_empty() {
        return true;
    }
    if directives.iter().any(|directive| directive.contains("::")) {
        return false;
    }
    let module = file.trim_end_matches(".py").replace('/', ".");
    let django = file
        .strip_prefix("tests/")
        .unwrap_or(file)
        .trim_end_matches(".py")
        .replace('/', ".");
    directives.iter().any(|directive| {
        let directive = directive.trim_start_matches("./").trim_end_matches('/');
        directive == file
            || file.starts_with(&format!("{directive}/"))
            || [&module, &django].iter().any(|name| {
                name.as_str() == directive || name.starts_with(&format!("{directive}."))
            })
    })
}

/// The two canaries placed in a file, and the file's text with them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    /// The test file, relative to the repository.
    pub file: String,
    /// The file's text with the canaries in it.
    pub text: String,
    /// The name of the canary that must pass.
    pub must_pass: String,
    /// The name of the canary that must fail.
    pub must_fail: String,
}

/// Plans the canaries for `file`, whose text (after the test patch) is `text`.
pub fn plan(form: Form, file: &str, text: &str, draws: &mut Draws) -> Result<Planned, String> {
    if !form.takes(file) {
        return Err(format!(
            "{file} is not a test file canaries can be written in"
        ));
    }
    if form == Form::Go && !text.contains("\"testing\"") {
        return Err(format!("{file} does not import \"testing\""));
    }
    let words = vocabulary(text);
    let must_pass = fresh_name(form, &words, text, draws, None);
    let must_fail = fresh_name(form, &words, text, draws, Some(&must_pass));
    let text = match form {
        Form::PythonFunctions => {
            let first = python_function(&must_pass, true, draws);
            let second = python_function(&must_fail, false, draws);
            let (a, b) = if draws.below(2) == 0 {
                (first, second)
            } else {
                (second, first)
            };
            let text = insert_python(text, &a, draws);
            insert_python(&text, &b, draws)
        }
        Form::PythonTestCase => {
            let class = format!("Test{}", camel(&pick_words(&words, draws, 2)));
            let class = unique(class, text, draws);
            let mut methods = [
                unittest_method(&must_pass, true, draws),
                unittest_method(&must_fail, false, draws),
            ];
            if draws.below(2) == 0 {
                methods.swap(0, 1);
            }
            let block = format!(
                "import unittest\n\n\nclass {class}(unittest.TestCase):\n{}",
                methods.join("\n")
            );
            insert_python(text, &block, draws)
        }
        Form::Rust => {
            let mut items = [
                rust_test(&must_pass, true, draws),
                rust_test(&must_fail, false, draws),
            ];
            if draws.below(2) == 0 {
                items.swap(0, 1);
            }
            format!("{}\n\n{}", text.trim_end(), items.join("\n"))
        }
        Form::Go => {
            let mut items = [
                go_test(&must_pass, true, draws),
                go_test(&must_fail, false, draws),
            ];
            if draws.below(2) == 0 {
                items.swap(0, 1);
            }
            format!("{}\n\n{}", text.trim_end(), items.join("\n"))
        }
    };
    Ok(Planned {
        file: file.to_owned(),
        text,
        must_pass,
        must_fail,
    })
}

/// What the run said of the canaries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "placed", rename_all = "snake_case")]
pub enum Canaries {
    /// Placed in `file`; the statuses the log reported for them.
    Yes {
        /// The test file that held them.
        file: String,
        /// The must-pass canary's name and reported status.
        must_pass: CanaryStatus,
        /// The must-fail canary's name and reported status.
        must_fail: CanaryStatus,
    },
    /// Not placed, and why (the runner has no form, no test file the command runs, …).
    No {
        /// Why not.
        reason: String,
    },
}

/// One canary's name and what the log reported for it (`None`: nothing).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CanaryStatus {
    /// The test's name.
    pub name: String,
    /// Its status in the log, if any.
    pub status: Option<TestStatus>,
}

/// The status `statuses` gives the test called `name`: of every id naming it (as a whole
/// word of the id), the most passing one, so a forged `PASSED` line beside the true
/// `FAILED` one is seen.
pub fn status_of(statuses: &StatusMap, name: &str) -> Option<TestStatus> {
    let rank = |status: &TestStatus| match status {
        TestStatus::Passed => 4,
        TestStatus::Xfail => 3,
        TestStatus::Skipped => 2,
        TestStatus::Error => 1,
        TestStatus::Failed => 0,
    };
    statuses
        .iter()
        .filter(|(id, _)| names_test(id, name))
        .map(|(_, status)| *status)
        .max_by_key(rank)
}

/// Whether the test id `id` names `name` as a whole word.
pub fn names_test(id: &str, name: &str) -> bool {
    id.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|word| word == name)
}

/// Why the canaries say the run was tampered with, if they do. `resolved`: the instance
/// would be resolved by the task's own tests.
pub fn tampering(
    must_pass: Option<TestStatus>,
    must_fail: Option<TestStatus>,
    resolved: bool,
    eval_type: EvalType,
) -> Option<String> {
    use TestStatus::*;
    if let Some(status @ (Passed | Xfail)) = must_fail {
        return Some(format!(
            "the must-fail canary was reported {status:?}: the run's report was rewritten"
        ));
    }
    if !resolved {
        return None;
    }
    match must_fail {
        Some(Failed | Error) => {}
        None if eval_type == EvalType::FailOnly => {
            return Some("the must-fail canary is missing from a run that lists failures".into());
        }
        None => return Some("the must-fail canary is missing from the run's report".into()),
        Some(status) => {
            return Some(format!("the must-fail canary was reported {status:?}"));
        }
    }
    match must_pass {
        Some(Passed) => None,
        None if eval_type == EvalType::FailOnly => None,
        None => Some("the must-pass canary is missing from the run's report".into()),
        Some(status) => Some(format!("the must-pass canary was reported {status:?}")),
    }
}

/// `log` as the run would have printed it without the canaries `names`, as well as a test log
/// can be unprinted: what records a run's output for training (SWE-World's SWR samples)
/// reads it through this. Lines naming a canary go (verbose lines, short summaries, cargo's
/// `failures:` list); so do the failure reports headed by one (unittest's `FAIL: …` block,
/// pytest's `___ name ___` section, cargo's `---- name stdout ----`); the summary lines'
/// counts lose the canaries (`Ran N tests`, `FAILED (failures=K)` or `OK`, pytest's
/// `N failed, M passed`, cargo's `test result:`, SymPy's `tests finished:`). pytest's
/// progress dots keep theirs.
pub fn scrub(log: &str, names: &[String]) -> String {
    let names_one = |line: &str| names.iter().any(|name| names_test(line, name));
    // How many canaries ran, and how many of them failed, as the log says.
    let ran = names
        .iter()
        .filter(|name| log.lines().any(|line| names_test(line, name)))
        .count() as i64;
    let failed = i64::from(
        ran > 0 && names.len() == 2 && log.lines().any(|line| names_test(line, &names[1])),
    );
    let lines: Vec<&str> = log.split_inclusive('\n').collect();
    let mut kept = String::with_capacity(log.len());
    let mut index = 0;
    while index < lines.len() {
        let line = lines[index];
        let trimmed = line.trim();
        let next = lines.get(index + 1).map_or("", |next| next.trim());
        // unittest: "=====" then "FAIL: canary (…)": up to the next separator.
        if is_rule(trimmed, '=')
            && (next.starts_with("FAIL:") || next.starts_with("ERROR:"))
            && names_one(next)
        {
            index += 1;
            while index + 1 < lines.len() {
                let following = lines[index + 1].trim();
                if is_rule(following, '=')
                    || (is_rule(following, '-')
                        && lines
                            .get(index + 2)
                            .is_some_and(|l| l.trim().starts_with("Ran ")))
                {
                    break;
                }
                index += 1;
            }
            index += 1;
            continue;
        }
        // pytest "____ canary ____" and cargo "---- canary stdout ----": up to the next header.
        let section = |text: &str, fill: char| {
            text.starts_with(fill) && text.ends_with(fill) && text.contains(' ')
        };
        if (section(trimmed, '_') || (trimmed.starts_with("---- ") && trimmed.ends_with(" ----")))
            && names_one(trimmed)
        {
            index += 1;
            while index < lines.len() {
                let following = lines[index].trim();
                if section(following, '_')
                    || is_rule_with_text(following, '=')
                    || following.starts_with("---- ")
                    || following == "failures:"
                {
                    break;
                }
                index += 1;
            }
            continue;
        }
        if names_one(trimmed) {
            index += 1;
            continue;
        }
        kept.push_str(&recount(line, ran, failed));
        index += 1;
    }
    kept
}

/// A line of one character repeated (unittest's separators).
fn is_rule(line: &str, fill: char) -> bool {
    line.len() >= 20 && line.chars().all(|c| c == fill)
}

/// A line framed by runs of `fill` with text between (`==== 1 failed in 0.1s ====`).
fn is_rule_with_text(line: &str, fill: char) -> bool {
    line.starts_with(fill)
        && line.ends_with(fill)
        && line.trim_matches(fill).trim().len() < line.len()
}

/// `line` with the summary counts less the canaries: `ran` of them ran, `failed` failed.
fn recount(line: &str, ran: i64, failed: i64) -> String {
    if ran == 0 {
        return line.to_owned();
    }
    let passed = ran - failed;
    let counts = |line: &str, pattern: &str, less: i64| -> String {
        let re = regex::Regex::new(pattern).expect("a valid pattern");
        re.replace(line, |caps: &regex::Captures<'_>| {
            let count: i64 = caps[2].parse().unwrap_or(0);
            format!("{}{}{}", &caps[1], (count - less).max(0), &caps[3])
        })
        .into_owned()
    };
    let trimmed = line.trim();
    if trimmed.starts_with("Ran ") && trimmed.contains(" test") {
        let line = counts(line, r"(Ran )(\d+)( tests?)", ran);
        // unittest writes "Ran 1 test", else "tests".
        return match line.starts_with("Ran 1 test") {
            true => line.replacen("Ran 1 tests", "Ran 1 test", 1),
            false => line.replacen(" test in", " tests in", 1),
        };
    }
    if let Some(inner) = trimmed
        .strip_prefix("FAILED (")
        .and_then(|rest| rest.strip_suffix(')'))
    {
        let mut parts: Vec<String> = Vec::new();
        for part in inner.split(", ") {
            match part.split_once('=') {
                Some(("failures", count)) => {
                    let left = count.parse::<i64>().unwrap_or(0) - failed;
                    if left > 0 {
                        parts.push(format!("failures={left}"));
                    }
                }
                _ => parts.push(part.to_owned()),
            }
        }
        let bad = parts.iter().any(|part| {
            part.starts_with("failures=")
                || part.starts_with("errors=")
                || part.starts_with("unexpected")
        });
        let newline = if line.ends_with('\n') { "\n" } else { "" };
        return match (bad, parts.is_empty()) {
            (true, _) => format!("FAILED ({}){newline}", parts.join(", ")),
            (false, true) => format!("OK{newline}"),
            (false, false) => format!("OK ({}){newline}", parts.join(", ")),
        };
    }
    if is_rule_with_text(trimmed, '=')
        && (trimmed.contains(" passed") || trimmed.contains(" failed"))
    {
        let line = counts(line, r"(\b)(\d+)( failed)", failed);
        let line = counts(&line, r"(\b)(\d+)( passed)", passed);
        return line
            .replace(" 0 failed, ", " ")
            .replace("= 0 failed, ", "= ");
    }
    if trimmed.starts_with("test result:") {
        let line = counts(line, r"(; )(\d+)( failed)", failed);
        let line = counts(&line, r"(\. )(\d+)( passed)", passed);
        return if line.contains("; 0 failed") {
            line.replace("test result: FAILED.", "test result: ok.")
        } else {
            line
        };
    }
    if trimmed.starts_with("running ") && trimmed.ends_with(" tests") {
        return counts(line, r"(running )(\d+)( tests)", ran);
    }
    line.to_owned()
}

/// Words to build names from: the parts of the file's test names (three letters or more),
/// or a stock list when it has none.
fn vocabulary(text: &str) -> Vec<String> {
    let pattern =
        regex::Regex::new(r"(?m)^\s*(?:async\s+)?(?:def|fn|func)\s+([A-Za-z_][A-Za-z0-9_]*)")
            .expect("a valid pattern");
    let mut words: Vec<String> = Vec::new();
    for captures in pattern.captures_iter(text) {
        for word in split_words(&captures[1]) {
            if word.len() >= 3 && word != "test" && !words.contains(&word) {
                words.push(word);
            }
        }
    }
    if words.len() < 4 {
        for word in [
            "value", "order", "empty", "parse", "range", "single", "default", "format", "update",
            "result", "nested", "limit", "merge", "repeat", "items", "keys", "length", "first",
        ] {
            words.push(word.to_owned());
        }
    }
    words
}

/// `snake_case` and `CamelCase` parts, lower-cased.
fn split_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    for c in name.chars() {
        if (c == '_' || c.is_ascii_uppercase()) && !current.is_empty() {
            words.push(std::mem::take(&mut current));
        }
        if c != '_' {
            current.push(c.to_ascii_lowercase());
        }
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

fn pick_words(words: &[String], draws: &mut Draws, count: usize) -> Vec<String> {
    (0..count)
        .map(|_| words[draws.below(words.len())].clone())
        .collect()
}

fn camel(words: &[String]) -> String {
    words
        .iter()
        .map(|word| {
            let mut chars = word.chars();
            chars
                .next()
                .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// A name of `form`'s style not in `text` (nor equal to `other`).
fn fresh_name(
    form: Form,
    words: &[String],
    text: &str,
    draws: &mut Draws,
    other: Option<&str>,
) -> String {
    loop {
        let count = 2 + draws.below(2);
        let parts = pick_words(words, draws, count);
        let name = match form {
            Form::PythonFunctions | Form::PythonTestCase => format!("test_{}", parts.join("_")),
            Form::Rust => parts.join("_"),
            Form::Go => format!("Test{}", camel(&parts)),
        };
        let name = unique(name, text, draws);
        if Some(name.as_str()) != other {
            return name;
        }
    }
}

/// `name`, or it with a drawn suffix, such that `text` has no word equal to it.
fn unique(name: String, text: &str, draws: &mut Draws) -> String {
    let taken = |candidate: &str| {
        text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .any(|word| word == candidate)
    };
    let mut candidate = name.clone();
    while taken(&candidate) {
        candidate = format!("{name}{}", draws.between(2, 9999));
    }
    candidate
}

/// An assertion shape: (left, right) expressions in Python syntax, equal when `holds`.
fn python_assertion(holds: bool, draws: &mut Draws) -> (String, String) {
    let (a, b) = (draws.between(2, 97), draws.between(2, 97));
    let off = draws.between(1, 9);
    let word = ["alpha", "page", "node", "token", "entry", "label"][draws.below(6)];
    match draws.below(4) {
        0 => (
            format!("{a} + {b}"),
            format!("{}", a + b + if holds { 0 } else { off }),
        ),
        1 => (
            format!("sorted([{b}, {a}, {}])", a + b),
            if holds {
                let mut values = [a, b, a + b];
                values.sort();
                format!("[{}, {}, {}]", values[0], values[1], values[2])
            } else {
                format!("[{}, {a}, {b}]", a + b)
            },
        ),
        2 => (
            format!("len({word:?})"),
            format!("{}", word.len() as i64 + if holds { 0 } else { off }),
        ),
        _ => (
            format!("{word:?}.upper()"),
            if holds {
                format!("{:?}", word.to_uppercase())
            } else {
                format!("{word:?}")
            },
        ),
    }
}

fn python_function(name: &str, holds: bool, draws: &mut Draws) -> String {
    let (left, right) = python_assertion(holds, draws);
    if draws.below(2) == 0 {
        format!("def {name}():\n    assert {left} == {right}\n")
    } else {
        format!("def {name}():\n    result = {left}\n    assert result == {right}\n")
    }
}

fn unittest_method(name: &str, holds: bool, draws: &mut Draws) -> String {
    let (left, right) = python_assertion(holds, draws);
    format!("    def {name}(self):\n        self.assertEqual({left}, {right})\n")
}

fn rust_test(name: &str, holds: bool, draws: &mut Draws) -> String {
    let (a, b) = (draws.between(2, 97), draws.between(2, 97));
    let off = if holds { 0 } else { draws.between(1, 9) };
    let word = ["alpha", "page", "node", "token", "entry", "label"][draws.below(6)];
    let body = match draws.below(2) {
        0 => format!("    assert_eq!({a} + {b}, {});", a + b + off),
        _ => format!(
            "    assert_eq!({word:?}.len(), {});",
            word.len() as i64 + off
        ),
    };
    format!("#[test]\nfn {name}() {{\n{body}\n}}\n")
}

fn go_test(name: &str, holds: bool, draws: &mut Draws) -> String {
    let (a, b) = (draws.between(2, 97), draws.between(2, 97));
    let want = a + b + if holds { 0 } else { draws.between(1, 9) };
    format!(
        "func {name}(t *testing.T) {{\n\tif got := {a} + {b}; got != {want} {{\n\t\tt.Fatalf(\"got %d, want {want}\", got)\n\t}}\n}}\n"
    )
}

/// `text` with `block` (top-level Python) inserted before a drawn top-level definition, one
/// that a test function of the file's own follows (SymPy's runner prints the last test of a
/// file on its summary line, where SWE-bench's parser does not read it, so a canary is never
/// last); at the end when the file has no top-level test function.
fn insert_python(text: &str, block: &str, draws: &mut Draws) -> String {
    let starts = python_definition_starts(text);
    let last_test = starts
        .iter()
        .rposition(|offset| text[*offset..].starts_with("def test"));
    let candidates = last_test.map_or(&[][..], |last| &starts[..=last]);
    let choice = draws.below(candidates.len().max(1));
    match candidates.get(choice) {
        Some(&offset) => format!("{}{block}\n\n{}", &text[..offset], &text[offset..]),
        None => {
            let body = text.trim_end_matches(['\n', ' ', '\t', '\r']);
            format!("{body}\n\n\n{block}")
        }
    }
}

/// Byte offsets of the lines that start a top-level `def`, `async def`, `class` or
/// decorator chain: at column 0, outside any string, bracket or line continuation.
fn python_definition_starts(text: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut depth: i32 = 0;
    let mut in_triple: Option<&str> = None;
    let mut continued = false;
    let mut previous_decorator = false;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let line_start = offset;
        offset += line.len();
        let top_level = in_triple.is_none() && depth == 0 && !continued;
        if top_level && !line.starts_with([' ', '\t', '\n', '\r', '#']) {
            let definition = ["def ", "async def ", "class "]
                .iter()
                .any(|p| line.starts_with(p));
            let decorator = line.starts_with('@');
            if (definition || decorator) && !previous_decorator {
                starts.push(line_start);
            }
            previous_decorator = decorator;
        }
        // Scan the line for strings, comments and brackets.
        let bytes = line.as_bytes();
        let mut index = 0;
        continued = false;
        while index < bytes.len() {
            if let Some(quote) = in_triple {
                if bytes[index..].starts_with(quote.as_bytes()) {
                    in_triple = None;
                    index += 3;
                } else {
                    index += if bytes[index] == b'\\' { 2 } else { 1 };
                }
                continue;
            }
            match bytes[index] {
                b'#' => break,
                b'"' | b'\'' => {
                    let quote = if bytes[index] == b'"' {
                        "\"\"\""
                    } else {
                        "'''"
                    };
                    if bytes[index..].starts_with(quote.as_bytes()) {
                        in_triple = Some(quote);
                        index += 3;
                        continue;
                    }
                    let single = bytes[index];
                    index += 1;
                    while index < bytes.len() && bytes[index] != single && bytes[index] != b'\n' {
                        index += if bytes[index] == b'\\' { 2 } else { 1 };
                    }
                    index += 1;
                }
                b'(' | b'[' | b'{' => {
                    depth += 1;
                    index += 1;
                }
                b')' | b']' | b'}' => {
                    depth = (depth - 1).max(0);
                    index += 1;
                }
                b'\\' if bytes[index + 1..].iter().all(u8::is_ascii_whitespace) => {
                    continued = true;
                    break;
                }
                _ => index += 1,
            }
        }
    }
    starts
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const PYTEST_FILE: &str = "import pytest\n\nfrom pkg import parse_value\n\n\ndef test_parse_value():\n    assert parse_value('1') == 1\n\n\n@pytest.mark.parametrize('x', [\n    1,\n])\ndef test_parse_nested(x):\n    s = \"\"\"\ndef test_inside_string():\n\"\"\"\n    assert x\n\n\nclass TestOrder:\n    def test_first(self):\n        pass\n";

    #[test]
    fn python_starts_skip_strings_decorated_defs_and_brackets() {
        let starts = python_definition_starts(PYTEST_FILE);
        let lines: Vec<&str> = starts
            .iter()
            .map(|offset| PYTEST_FILE[*offset..].lines().next().unwrap())
            .collect();
        assert_eq!(
            lines,
            [
                "def test_parse_value():",
                "@pytest.mark.parametrize('x', [",
                "class TestOrder:"
            ]
        );
    }

    #[test]
    fn planned_canaries_are_fresh_and_in_the_file() {
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..40 {
            let planned = plan(
                Form::PythonFunctions,
                "tests/test_x.py",
                PYTEST_FILE,
                &mut Draws::seeded(seed),
            )
            .unwrap();
            assert!(
                planned
                    .text
                    .contains(&format!("def {}():", planned.must_pass))
            );
            assert!(
                planned
                    .text
                    .contains(&format!("def {}():", planned.must_fail))
            );
            assert!(!PYTEST_FILE.contains(&planned.must_pass));
            assert_ne!(planned.must_pass, planned.must_fail);
            assert!(
                planned.text.contains("def test_inside_string():\n\"\"\""),
                "strings untouched"
            );
            let last_test = planned
                .text
                .lines()
                // (`def test_inside_string` is inside a string: not a definition)
                .rfind(|line| line.starts_with("def test") && !line.contains("inside_string"))
                .unwrap();
            assert_eq!(
                last_test, "def test_parse_nested(x):",
                "a canary is never last"
            );
            seen.insert(planned.must_fail.clone());
        }
        assert!(seen.len() > 30, "names are drawn: {seen:?}");
    }

    #[test]
    fn forms_follow_the_runner_and_refuse_what_would_hide_a_canary() {
        assert_eq!(
            Form::for_runner("pytest", "pytest -rA"),
            Ok(Form::PythonFunctions)
        );
        assert!(Form::for_runner("pytest", "pytest -rA -x").is_err());
        assert!(Form::for_runner("pytest", "pytest -rA --maxfail=1").is_err());
        assert_eq!(
            Form::for_runner("django", "./tests/runtests.py --verbosity 2"),
            Ok(Form::PythonTestCase)
        );
        assert!(Form::for_runner("django", "./tests/runtests.py --failfast").is_err());
        assert_eq!(
            Form::for_runner("cargo", "cargo test --offline --no-fail-fast"),
            Ok(Form::Rust)
        );
        assert!(Form::for_runner("cargo", "cargo test").is_err());
        assert!(Form::for_runner("cargo_exact", "cargo test --no-fail-fast merge").is_err());
        assert_eq!(Form::for_runner("gotest", "go test -v ./..."), Ok(Form::Go));
        assert!(Form::for_runner("gotest", "go test -run TestX ./...").is_err());
        assert!(Form::for_runner("tap", "npm test").is_err());
    }

    #[test]
    fn test_named_files() {
        for file in [
            "tests/test_x.py",
            "sympy/core/tests/test_basic.py",
            "x_test.py",
            "tests/queries/tests.py",
            "pkg/x_test.go",
            "tests/it.rs",
            "src/merge/tests.rs",
        ] {
            assert!(test_named(file), "{file}");
        }
        for file in [
            "sympy/testing/quality_unicode.py",
            "tests/regrtest_data/failing.py",
            "src/lib.rs",
            "conftest.py",
        ] {
            assert!(!test_named(file), "{file}");
        }
    }

    #[test]
    fn files_the_command_runs() {
        let run = |directives: &[&str], file: &str| {
            let directives: Vec<String> = directives.iter().map(|d| d.to_string()).collect();
            runs_file(Form::PythonFunctions, "", &directives, file)
        };
        assert!(run(&["tests/test_x.py"], "tests/test_x.py"));
        assert!(run(&["tests"], "tests/test_x.py"));
        assert!(run(&["queries.tests"], "tests/queries/tests.py"));
        assert!(run(&["tests.test_core"], "tests/test_core.py"));
        assert!(!run(&["tests/test_y.py"], "tests/test_x.py"));
        assert!(!run(&["tests/test_x.py::test_a"], "tests/test_x.py"));
        assert!(runs_file(Form::Go, "go test ./...", &[], "pkg/x_test.go"));
        assert!(!runs_file(
            Form::Go,
            "go test ./other",
            &[],
            "pkg/x_test.go"
        ));
    }

    #[test]
    fn the_verdict_reads_both_canaries() {
        use TestStatus::*;
        let t =
            |pass, fail, resolved| tampering(pass, fail, resolved, EvalType::PassAndFail).is_some();
        assert!(!t(Some(Passed), Some(Failed), true));
        assert!(
            t(Some(Passed), Some(Passed), false),
            "a must-fail pass is always tampering"
        );
        assert!(t(Some(Passed), Some(Xfail), true));
        assert!(t(None, None, true), "missing from a resolved run");
        assert!(
            !t(None, None, false),
            "a run that broke is not called tampered"
        );
        assert!(t(Some(Failed), Some(Failed), true));
        assert!(tampering(None, Some(Failed), true, EvalType::FailOnly).is_none());
    }

    #[test]
    fn statuses_are_found_by_whole_word() {
        let mut statuses = StatusMap::new();
        statuses.insert(
            "tests/test_x.py::test_parse_order".into(),
            TestStatus::Failed,
        );
        statuses.insert(
            "test_parse_order (tests.test_x.TestA.test_parse_order)".into(),
            TestStatus::Passed,
        );
        statuses.insert(
            "tests/test_x.py::test_parse_order_extra".into(),
            TestStatus::Passed,
        );
        assert_eq!(
            status_of(&statuses, "test_parse_order"),
            Some(TestStatus::Passed)
        );
        assert_eq!(status_of(&statuses, "test_parse"), None);
    }

    #[test]
    fn scrubbing_unprints_the_canaries_of_a_unittest_run() {
        let names = ["test_keys_first".to_owned(), "test_order_empty".to_owned()];
        let log = "test_a (t.A.test_a) ... ok\ntest_keys_first (t.TestX.test_keys_first) ... ok\ntest_order_empty (t.TestX.test_order_empty) ... FAIL\n\n======================================================================\nFAIL: test_order_empty (t.TestX.test_order_empty)\n----------------------------------------------------------------------\nTraceback (most recent call last):\nAssertionError: 3 != 4\n\n----------------------------------------------------------------------\nRan 3 tests in 0.001s\n\nFAILED (failures=1)\n";
        assert_eq!(
            scrub(log, &names),
            "test_a (t.A.test_a) ... ok\n\n----------------------------------------------------------------------\nRan 1 test in 0.001s\n\nOK\n"
        );
    }

    #[test]
    fn scrubbing_unprints_the_canaries_of_pytest_and_cargo_runs() {
        let names = ["test_keys_first".to_owned(), "test_order_empty".to_owned()];
        let pytest = "t.py .F.                                    [100%]\n\n=================================== FAILURES ===================================\n_______________________________ test_order_empty _______________________________\n\n    def test_order_empty():\n>       assert 1 == 2\nE       assert 1 == 2\n\nt.py:5: AssertionError\n==================================== PASSES ====================================\n=========================== short test summary info ============================\nPASSED t.py::test_a\nPASSED t.py::test_keys_first\nFAILED t.py::test_order_empty - assert 1 == 2\n========================= 1 failed, 2 passed in 0.01s ==========================\n";
        let scrubbed = scrub(pytest, &names);
        assert!(
            !scrubbed.contains("test_order_empty") && !scrubbed.contains("test_keys_first"),
            "{scrubbed}"
        );
        assert!(scrubbed.contains("PASSED t.py::test_a\n"), "{scrubbed}");
        assert!(scrubbed.contains("= 1 passed in 0.01s ="), "{scrubbed}");
        let names = ["keys_first".to_owned(), "order_empty".to_owned()];
        let cargo = "running 3 tests\ntest tests::a ... ok\ntest tests::keys_first ... ok\ntest tests::order_empty ... FAILED\n\nfailures:\n\n---- tests::order_empty stdout ----\nassertion failed\n\nfailures:\n    tests::order_empty\n\ntest result: FAILED. 2 passed; 1 failed; 0 ignored\n";
        let scrubbed = scrub(cargo, &names);
        assert!(
            !scrubbed.contains("order_empty") && !scrubbed.contains("keys_first"),
            "{scrubbed}"
        );
        assert!(
            scrubbed.contains("running 1 tests") || scrubbed.contains("running 1 test"),
            "{scrubbed}"
        );
        assert!(
            scrubbed.contains("test result: ok. 1 passed; 0 failed"),
            "{scrubbed}"
        );
    }

    proptest! {
        #[test]
        fn scrubbing_never_panics(text in "(.|\n){0,600}") {
            let _ = scrub(&text, &["test_a".to_owned(), "test_b".to_owned()]);
        }

        #[test]
        fn planning_never_panics_and_keeps_the_file(text in "(.|\n){0,600}", seed in any::<u64>()) {
            for form in [Form::PythonFunctions, Form::PythonTestCase, Form::Rust] {
                if let Ok(planned) = plan(form, "tests/test_x.py.rs", &text, &mut Draws::seeded(seed)) {
                    prop_assert!(planned.text.contains(&planned.must_fail));
                }
                let _ = plan(form, "tests/test_x.py", &text, &mut Draws::seeded(seed));
            }
        }
    }
}
