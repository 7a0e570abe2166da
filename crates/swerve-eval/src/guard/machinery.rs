//! The test machinery: the files that decide how a task's tests are collected, run and
//! reported, listed once here per runner ([`RULES`]), and what a patch did to them.
//!
//! SWE-bench resets only the files the test patch touches, so a patch that adds a
//! `conftest.py` whose hook marks every test passed is rewarded there. swerve takes a
//! [`Snapshot`] of every machinery file in the untouched workspace (content and kind, read
//! into the grader's memory, out of the sandbox's reach), another after the patch is
//! applied, names what changed ([`changes`]) and writes the first snapshot back
//! ([`restore_script`]) before the test patch is applied. Files mixing test settings with
//! others (`setup.cfg`, `tox.ini`, `pyproject.toml`, `package.json`) count only when their
//! test sections changed, so a patch that adds a dependency is not touched. What the patch
//! wrote under the environment's own directories (`node_modules/`, `site-packages/`), which
//! no snapshot holds, cannot be put back: such a change is always rejected.

use std::collections::BTreeMap;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};

use crate::spec::shell::quote;

/// One kind of machinery file, with the runner it steers.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// How the file is recognised.
    pub matches: Match,
    /// What it steers, for reports and docs.
    pub steers: &'static str,
}

/// How a [`Rule`] recognises its files (paths relative to the repository, `/`-separated).
#[derive(Debug, Clone, Copy)]
pub enum Match {
    /// A file of this name in any directory.
    Name(&'static str),
    /// A file whose name starts with this, in any directory (`jest.config.` for
    /// `jest.config.js`, `.ts`, …).
    NamePrefix(&'static str),
    /// Any file below a directory whose name ends so (`.egg-info`).
    UnderDirSuffix(&'static str),
    /// Any file below a directory of this name (`.cargo`).
    UnderDir(&'static str),
    /// A file of this name whose test sections ([`Sections`]) count, the rest not.
    Sections(&'static str, Sections),
    /// A `_test.go` file that defines `TestMain` or `init` (code that runs before any test).
    GoTestSetup,
}

/// The test sections of a file that mixes them with other settings.
#[derive(Debug, Clone, Copy)]
pub enum Sections {
    /// INI sections by name (`tool:pytest`, `pytest`).
    Ini(&'static [&'static str]),
    /// A TOML table by its dotted path (`tool.pytest`).
    Toml(&'static str),
    /// `package.json`: `jest`, `mocha`, `ava` and the `test`, `pretest`, `posttest` scripts.
    PackageJson,
}

/// Every machinery rule, by runner. The docs' table (docs/security.md) lists the same.
pub const RULES: &[Rule] = &[
    // pytest
    rule(
        Match::Name("conftest.py"),
        "pytest: hooks, fixtures and plugins of its directory",
    ),
    rule(Match::Name("pytest.ini"), "pytest: configuration"),
    rule(Match::Name(".pytest.ini"), "pytest: configuration"),
    rule(Match::Name("pytest.toml"), "pytest 9: configuration"),
    rule(Match::Name(".pytest.toml"), "pytest 9: configuration"),
    rule(
        Match::Sections("setup.cfg", Sections::Ini(&["tool:pytest", "pytest"])),
        "pytest: addopts, -p plugins, python_files",
    ),
    rule(
        Match::Sections("tox.ini", Sections::Ini(&["pytest", "tool:pytest"])),
        "pytest: addopts, -p plugins, python_files",
    ),
    rule(
        Match::Sections("pyproject.toml", Sections::Toml("tool.pytest")),
        "pytest: addopts, -p plugins, python_files",
    ),
    // Python at start-up
    rule(
        Match::Name("sitecustomize.py"),
        "Python: runs at every interpreter's start",
    ),
    rule(
        Match::Name("usercustomize.py"),
        "Python: runs at every interpreter's start",
    ),
    rule(
        Match::UnderDirSuffix(".egg-info"),
        "pytest11 entry points of an editable install",
    ),
    rule(
        Match::UnderDirSuffix(".dist-info"),
        "pytest11 entry points of an installed package",
    ),
    // unittest and Django: `load_tests` in a test package
    rule(
        Match::Name("__init__.py"),
        "unittest: load_tests of a test package (test directories only)",
    ),
    // Rust
    rule(
        Match::UnderDir(".cargo"),
        "cargo: runner, rustflags, aliases",
    ),
    rule(Match::Name("rust-toolchain"), "cargo: the toolchain"),
    rule(Match::Name("rust-toolchain.toml"), "cargo: the toolchain"),
    // Go
    rule(
        Match::GoTestSetup,
        "go test: TestMain or init in a test file",
    ),
    // JavaScript
    rule(
        Match::NamePrefix("jest.config."),
        "jest: configuration, reporters, setup files",
    ),
    rule(Match::NamePrefix("vitest.config."), "vitest: configuration"),
    rule(
        Match::NamePrefix(".mocharc"),
        "mocha: configuration, reporters, requires",
    ),
    rule(Match::NamePrefix("karma.conf."), "karma: configuration"),
    rule(
        Match::Sections("package.json", Sections::PackageJson),
        "npm test: the test scripts, jest's and mocha's settings",
    ),
];

const fn rule(matches: Match, steers: &'static str) -> Rule {
    Rule { matches, steers }
}

/// Directories whose files belong to the task's environment, not its code: a patch that
/// writes there changes the installed runner or its plugins, which no snapshot can put back.
const ENVIRONMENT_DIRS: &[&str] = &[
    "node_modules",
    "site-packages",
    ".venv",
    "venv",
    ".tox",
    ".git",
];

/// Where the machinery of one task lies: [`RULES`] plus the task's own runner files (the
/// programs its test command names in the repository: SymPy's `bin/test`, Django's
/// `tests/runtests.py`, R2E-Gym's `run_tests.sh`) and the test packages' `__init__.py`.
#[derive(Debug, Clone, Default)]
pub struct Machinery {
    /// Repository files the test command runs, each with the reason.
    runner_files: Vec<String>,
    /// Directories holding the test patch's test files (and their test-named ancestors),
    /// whose `__init__.py` is machinery.
    test_dirs: Vec<String>,
}

impl Machinery {
    /// The machinery of a task tested by `test_command`, whose test patch touches
    /// `test_files`.
    pub fn new(test_command: &str, test_files: &[String]) -> Machinery {
        Machinery {
            runner_files: runner_files(test_command),
            test_dirs: test_dirs(test_files),
        }
    }

    /// The rule `path` falls under (`content` for rules that read it), if any.
    pub fn rule_for(&self, path: &str, content: Option<&[u8]>) -> Option<&'static str> {
        let path = path.trim_start_matches("./");
        if self.runner_files.iter().any(|file| file == path) {
            return Some("the repository's own test runner, named by the test command");
        }
        let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
        RULES.iter().find_map(|rule| {
            let hit = match rule.matches {
                Match::Name("__init__.py") => {
                    name == "__init__.py" && self.test_dirs.iter().any(|test_dir| test_dir == dir)
                }
                Match::Name(wanted) => name == wanted,
                Match::NamePrefix(prefix) => name.starts_with(prefix),
                Match::UnderDirSuffix(suffix) => dir.split('/').any(|part| part.ends_with(suffix)),
                Match::UnderDir(wanted) => dir.split('/').any(|part| part == wanted),
                Match::Sections(wanted, _) => name == wanted,
                Match::GoTestSetup => {
                    name.ends_with("_test.go") && content.is_some_and(defines_go_test_setup)
                }
            };
            hit.then_some(rule.steers)
        })
    }

    /// The `find` predicate that selects every candidate file (content-free rules and the
    /// candidates of the others), for the snapshot script.
    fn find_predicate(&self) -> String {
        let mut names: Vec<String> = Vec::new();
        for rule in RULES {
            match rule.matches {
                // Only the test packages' (below), not every package's.
                Match::Name("__init__.py") => {}
                Match::Name(name) | Match::Sections(name, _) => {
                    names.push(format!("-name {}", quote(name)))
                }
                Match::NamePrefix(prefix) => {
                    names.push(format!("-name {}", quote(&format!("{prefix}*"))))
                }
                Match::UnderDirSuffix(suffix) => {
                    names.push(format!("-path {}", quote(&format!("*{suffix}/*"))))
                }
                Match::UnderDir(dir) => {
                    names.push(format!("-path {}", quote(&format!("*/{dir}/*"))))
                }
                // Listed by `grep` in the snapshot script: only those that define it.
                Match::GoTestSetup => {}
            }
        }
        for dir in &self.test_dirs {
            names.push(format!("-path {}", quote(&format!("./{dir}/__init__.py"))));
        }
        for file in &self.runner_files {
            names.push(format!("-path {}", quote(&format!("./{file}"))));
        }
        format!("\\( {} \\)", names.join(" -o "))
    }

    /// A bash script, run in the repository, that prints every machinery candidate as one
    /// line `<kind> <path> <content>`: kind `f` (a file) or `l` (a symbolic link, content its
    /// target), path and content in base64. The `.git` and environment directories are not
    /// walked; of the Go test files, only those defining `TestMain` or `init` are listed.
    pub fn snapshot_script(&self, repo_dir: &str) -> String {
        let prune = ENVIRONMENT_DIRS
            .iter()
            .map(|dir| format!("-name {dir}"))
            .collect::<Vec<_>>()
            .join(" -o ");
        let exclude = ENVIRONMENT_DIRS
            .iter()
            .map(|dir| format!("--exclude-dir={dir}"))
            .collect::<Vec<_>>()
            .join(" ");
        // Every step's failure (a missing `find`, `sort` or `base64`, an unreadable file)
        // stops the script before its completion line: a snapshot is whole or an error,
        // never silently empty. (`grep` finding nothing is no failure.)
        format!(
            "set -o pipefail\n\
             cd {repo} || exit 97\n\
             {{ find . \\( {prune} \\) -prune -o {predicate} \\( -type f -o -type l \\) -print0 || exit 96; \
             grep -rlZ {exclude} --include='*_test.go' -E '^func (TestMain|init)\\(' . 2>/dev/null; \
             [ $? -le 1 ] || exit 95; }} \
             | LC_ALL=C sort -zu | while IFS= read -r -d '' path; do\n\
             \x20 encoded=$(printf '%s' \"$path\" | base64 -w0) || exit 94\n\
             \x20 if [ -L \"$path\" ]; then content=$(readlink -- \"$path\" | tr -d '\\n' | base64 -w0) || exit 93; kind=l;\n\
             \x20 else content=$(base64 -w0 < \"$path\") || exit 92; kind=f; fi\n\
             \x20 printf '%s %s %s\\n' \"$kind\" \"$encoded\" \"$content\"\n\
             done || exit 91\n\
             echo swerve-snapshot-complete\n",
            repo = quote(repo_dir),
            predicate = self.find_predicate(),
        )
    }
}

/// A machinery candidate's kind and content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A regular file and its bytes.
    File(Vec<u8>),
    /// A symbolic link and its target.
    Link(Vec<u8>),
}

/// Every machinery candidate of a workspace at one moment, by path (relative, no `./`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot(pub BTreeMap<String, Entry>);

/// Why a snapshot could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the test machinery could not be listed: {0}")]
pub struct SnapshotError(String);

impl Snapshot {
    /// Reads the output of [`Machinery::snapshot_script`]. An output that does not end with
    /// the script's completion line, or has a line it cannot read, is an error (the listing
    /// was cut short: the machinery's failure, never a verdict).
    pub fn parse(output: &str) -> Result<Snapshot, SnapshotError> {
        let mut lines: Vec<&str> = output.lines().collect();
        if lines.pop() != Some("swerve-snapshot-complete") {
            return Err(SnapshotError(format!(
                "the listing did not complete: {}",
                output.lines().last().unwrap_or("")
            )));
        }
        let mut entries = BTreeMap::new();
        for line in lines {
            let mut fields = line.split(' ');
            let (Some(kind), Some(path), content) = (fields.next(), fields.next(), fields.next())
            else {
                return Err(SnapshotError(format!("an unreadable line: {line}")));
            };
            let path = decode(path)?;
            let path = String::from_utf8_lossy(&path)
                .trim_start_matches("./")
                .to_owned();
            let content = decode(content.unwrap_or(""))?;
            let entry = match kind {
                "f" => Entry::File(content),
                "l" => Entry::Link(content),
                other => return Err(SnapshotError(format!("an unknown kind {other:?}"))),
            };
            entries.insert(path, entry);
        }
        Ok(Snapshot(entries))
    }
}

/// One machinery file the patch changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MachineryChange {
    /// The file, relative to the repository.
    pub path: String,
    /// What the patch did to it.
    pub change: ChangeKind,
    /// The rule it falls under ([`Rule::steers`]).
    pub rule: String,
}

/// What a patch did to a machinery file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// Created it.
    Added,
    /// Changed it (for a mixed file: its test sections).
    Modified,
    /// Deleted it.
    Removed,
    /// Wrote under the environment's own directories (`node_modules/`, …): cannot be put
    /// back, so the instance is rejected whatever the policy.
    Environment,
    /// Left the machinery unlistable, or not restorable (an unreadable directory, say): it
    /// cannot be checked, so the instance is rejected whatever the policy.
    Unverifiable,
}

/// The machinery files that differ between `before` and `after` (the snapshots around the
/// patch), plus every path of `patch` under the environment's directories.
pub fn changes(
    machinery: &Machinery,
    before: &Snapshot,
    after: &Snapshot,
    patch: Option<&str>,
) -> Vec<MachineryChange> {
    let mut found = Vec::new();
    let paths: std::collections::BTreeSet<&String> =
        before.0.keys().chain(after.0.keys()).collect();
    for path in paths {
        let (old, new) = (before.0.get(path), after.0.get(path));
        if old == new {
            continue;
        }
        let content = |entry: Option<&Entry>| match entry {
            Some(Entry::File(bytes)) => Some(bytes.clone()),
            _ => None,
        };
        let (old_content, new_content) = (content(old), content(new));
        let rule = machinery
            .rule_for(path, old_content.as_deref())
            .or_else(|| machinery.rule_for(path, new_content.as_deref()));
        let Some(rule) = rule else {
            continue;
        };
        if let (Some(Entry::File(old)), Some(Entry::File(new))) = (old, new)
            && let Some(sections) = sections_rule(path)
            && test_sections(sections, old) == test_sections(sections, new)
        {
            continue;
        }
        let change = match (old, new) {
            (None, _) => ChangeKind::Added,
            (_, None) => ChangeKind::Removed,
            _ => ChangeKind::Modified,
        };
        found.push(MachineryChange {
            path: path.clone(),
            change,
            rule: rule.to_owned(),
        });
    }
    for path in patch
        .map(|patch| files_adding(patch, "pytest11"))
        .unwrap_or_default()
    {
        if !found.iter().any(|change| change.path == path) {
            found.push(MachineryChange {
                path,
                change: ChangeKind::Modified,
                rule: "pytest11 entry points: a plugin every pytest run loads".into(),
            });
        }
    }
    for path in patch.map(patch_paths).unwrap_or_default() {
        if path.split('/').any(|part| ENVIRONMENT_DIRS.contains(&part))
            && !found.iter().any(|change| change.path == path)
        {
            found.push(MachineryChange {
                path,
                change: ChangeKind::Environment,
                rule: "the environment's installed packages (node_modules, site-packages, .git)"
                    .into(),
            });
        }
    }
    found
}

/// A bash script, run in the repository, that puts every changed path of `changes` back as
/// `before` has it (deleting what the patch added). Paths under the environment's
/// directories are left: they cannot be put back.
pub fn restore_script(repo_dir: &str, before: &Snapshot, changes: &[MachineryChange]) -> String {
    let mut script = format!("set -e\ncd {}\n", quote(repo_dir));
    for change in changes {
        if matches!(
            change.change,
            ChangeKind::Environment | ChangeKind::Unverifiable
        ) {
            continue;
        }
        let path = quote(&change.path);
        script.push_str(&format!("rm -rf -- {path}\n"));
        match before.0.get(&change.path) {
            // Not listed before (a Go test file that gained `TestMain`, say): the base's
            // version if the base has one.
            None => script.push_str(&format!(
                "if git cat-file -e HEAD:{path} 2>/dev/null; then git checkout -q HEAD -- {path}; fi\n"
            )),
            Some(Entry::File(bytes)) => {
                script.push_str(&format!(
                    "mkdir -p -- \"$(dirname -- {path})\"\nprintf '%s' {} | base64 -d > {path}\n",
                    encode(bytes)
                ));
            }
            Some(Entry::Link(target)) => {
                script.push_str(&format!(
                    "mkdir -p -- \"$(dirname -- {path})\"\nln -s -- {} {path}\n",
                    quote(&String::from_utf8_lossy(target))
                ));
            }
        }
    }
    script.push_str("echo swerve-restore-complete\n");
    script
}

/// The sections rule of a mixed file at `path`, if it is one.
fn sections_rule(path: &str) -> Option<Sections> {
    let name = path.rsplit('/').next().unwrap_or(path);
    RULES.iter().find_map(|rule| match rule.matches {
        Match::Sections(wanted, sections) if wanted == name => Some(sections),
        _ => None,
    })
}

/// The test sections of a mixed file's `content`, in a form to compare: equal when the
/// runner would read the same settings. Content that does not parse is its own form (a
/// change to it counts).
fn test_sections(sections: Sections, content: &[u8]) -> String {
    let text = String::from_utf8_lossy(content);
    match sections {
        Sections::Ini(names) => ini_sections(&text, names),
        Sections::Toml(dotted) => match text.parse::<toml::Table>() {
            Ok(table) => {
                let mut value = Some(toml::Value::Table(table));
                for key in dotted.split('.') {
                    value = value.and_then(|value| value.get(key).cloned());
                }
                format!("{value:?}")
            }
            Err(_) => format!("unparsed:{text}"),
        },
        Sections::PackageJson => match serde_json::from_str::<serde_json::Value>(&text) {
            Ok(value) => {
                let scripts: Vec<(String, String)> = value
                    .get("scripts")
                    .and_then(|scripts| scripts.as_object())
                    .map(|scripts| {
                        scripts
                            .iter()
                            .filter(|(name, _)| {
                                ["test", "pretest", "posttest"]
                                    .iter()
                                    .any(|prefix| name.starts_with(prefix))
                            })
                            .map(|(name, script)| (name.clone(), script.to_string()))
                            .collect()
                    })
                    .unwrap_or_default();
                let settings: Vec<String> = ["jest", "mocha", "ava"]
                    .iter()
                    .map(|key| value.get(*key).map(ToString::to_string).unwrap_or_default())
                    .collect();
                format!("{scripts:?}{settings:?}")
            }
            Err(_) => format!("unparsed:{text}"),
        },
    }
}

/// The lines of every INI section named in `names` (all of them, if a name repeats), trimmed,
/// without blank lines and comments.
fn ini_sections(text: &str, names: &[&str]) -> String {
    let mut inside = false;
    let mut kept = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some(header) = trimmed
            .strip_prefix('[')
            .and_then(|rest| rest.strip_suffix(']'))
        {
            inside = names.contains(&header.trim());
            if inside {
                kept.push_str(&format!("[{}]\n", header.trim()));
            }
            continue;
        }
        if inside && !trimmed.is_empty() && !trimmed.starts_with('#') && !trimmed.starts_with(';') {
            kept.push_str(trimmed);
            kept.push('\n');
        }
    }
    kept
}

/// Whether Go test source defines `TestMain` or a package `init`.
fn defines_go_test_setup(content: &[u8]) -> bool {
    let text = String::from_utf8_lossy(content);
    text.lines().any(|line| {
        let line = line.trim_start();
        line.starts_with("func TestMain(") || line.starts_with("func init(")
    })
}

/// The repository files `test_command` runs as programs or scripts: words that are relative
/// paths (`./tests/runtests.py`, `bin/test`, `run_tests.sh`), and `Makefile` under `make`.
fn runner_files(test_command: &str) -> Vec<String> {
    let mut files = Vec::new();
    let words: Vec<&str> = test_command.split_whitespace().collect();
    for (index, word) in words.iter().enumerate() {
        let word = word.trim_matches(|c| c == '"' || c == '\'' || c == ';');
        if word.starts_with('-')
            || word.starts_with('/')
            || word.contains('=')
            || word.contains("::")
        {
            continue;
        }
        let program =
            index == 0 || matches!(words[index - 1], "python" | "python3" | "bash" | "sh");
        let scriptish = [".py", ".sh"].iter().any(|suffix| word.ends_with(suffix));
        if word.starts_with("./") || (program && (word.contains('/') || scriptish)) {
            files.push(word.trim_start_matches("./").to_owned());
        }
    }
    if words.first() == Some(&"make") {
        files.push("Makefile".into());
    }
    files
}

/// The directories of `test_files` and their ancestors while they have a test-named part
/// (`tests`, `test`, `testing`): where an `__init__.py` is the test package's.
fn test_dirs(test_files: &[String]) -> Vec<String> {
    let mut dirs: Vec<String> = Vec::new();
    for file in test_files {
        let mut dir = file.rsplit_once('/').map_or("", |(dir, _)| dir);
        while dir.split('/').any(|part| part.starts_with("test")) {
            if !dirs.iter().any(|known| known == dir) {
                dirs.push(dir.to_owned());
            }
            dir = dir.rsplit_once('/').map_or("", |(parent, _)| parent);
        }
    }
    dirs
}

/// The paths a unified or git diff names (both sides of each file header), relative to the
/// repository.
pub fn patch_paths(patch: &str) -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    for line in patch.lines() {
        let named = if let Some(rest) = line.strip_prefix("diff --git ") {
            rest.split_whitespace()
                .map(|side| strip_side(side).to_owned())
                .collect::<Vec<_>>()
        } else if let Some(rest) = line
            .strip_prefix("+++ ")
            .or_else(|| line.strip_prefix("--- "))
        {
            let side = rest.split('\t').next().unwrap_or(rest).trim();
            if side == "/dev/null" {
                continue;
            }
            vec![strip_side(side).to_owned()]
        } else if let Some(rest) = line
            .strip_prefix("rename to ")
            .or_else(|| line.strip_prefix("rename from "))
            .or_else(|| line.strip_prefix("copy to "))
        {
            vec![rest.trim().to_owned()]
        } else {
            continue;
        };
        for path in named {
            if !path.is_empty() && !paths.contains(&path) {
                paths.push(path);
            }
        }
    }
    paths
}

/// The files to which `patch` adds a line containing `needle`.
fn files_adding(patch: &str, needle: &str) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    let mut current: Option<String> = None;
    for line in patch.lines() {
        if let Some(side) = line.strip_prefix("+++ ") {
            let side = side.split('\t').next().unwrap_or(side).trim();
            current = (side != "/dev/null").then(|| strip_side(side).to_owned());
        } else if line.starts_with('+')
            && line.contains(needle)
            && let Some(file) = &current
            && !files.contains(file)
        {
            files.push(file.clone());
        }
    }
    files
}

fn strip_side(side: &str) -> &str {
    let side = side.trim_matches('"');
    side.strip_prefix("a/")
        .or_else(|| side.strip_prefix("b/"))
        .unwrap_or(side)
}

/// Standard base64 with padding (as coreutils' `base64` writes it).
fn encode(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

/// The inverse of [`encode`].
fn decode(text: &str) -> Result<Vec<u8>, SnapshotError> {
    STANDARD
        .decode(text)
        .map_err(|error| SnapshotError(format!("not base64 ({error}): {text:.40}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn machinery() -> Machinery {
        Machinery::new(
            "./tests/runtests.py --verbosity 2",
            &[
                "tests/queries/tests.py".into(),
                "src/pkg/tests/test_x.py".into(),
            ],
        )
    }

    #[test]
    fn rules_name_the_machinery_and_leave_code() {
        let m = machinery();
        for path in [
            "conftest.py",
            "src/pkg/conftest.py",
            "pytest.ini",
            "sitecustomize.py",
            "pkg.egg-info/entry_points.txt",
            "tests/runtests.py",
            "tests/queries/__init__.py",
            "tests/__init__.py",
            "src/pkg/tests/__init__.py",
            ".cargo/config.toml",
            "jest.config.js",
        ] {
            assert!(m.rule_for(path, None).is_some(), "{path}");
        }
        for path in [
            "src/pkg/__init__.py",
            "pkg/core.py",
            "setup.py",
            "src/lib.rs",
            "x_test.go",
        ] {
            assert!(m.rule_for(path, None).is_none(), "{path}");
        }
        assert!(
            m.rule_for(
                "x_test.go",
                Some(b"package x\nfunc TestMain(m *testing.M) {}\n")
            )
            .is_some()
        );
        assert!(
            m.rule_for(
                "x_test.go",
                Some(b"package x\nfunc TestX(t *testing.T) {}\n")
            )
            .is_none()
        );
    }

    #[test]
    fn runner_files_come_from_the_test_command() {
        assert_eq!(runner_files("bin/test -C --verbose"), ["bin/test"]);
        assert_eq!(
            runner_files("./tests/runtests.py --settings=x"),
            ["tests/runtests.py"]
        );
        assert_eq!(runner_files("bash run_tests.sh"), ["run_tests.sh"]);
        assert_eq!(
            runner_files("pytest -rA tests/test_x.py::test_y"),
            Vec::<String>::new()
        );
        assert_eq!(runner_files("make test"), ["Makefile"]);
    }

    #[test]
    fn mixed_files_count_only_their_test_sections() {
        let before = "[metadata]\nname = x\n\n[tool:pytest]\naddopts = -rA\n";
        let dependency =
            "[metadata]\nname = x\ninstall_requires = appdirs\n\n[tool:pytest]\naddopts = -rA\n";
        let plugin = "[metadata]\nname = x\n\n[tool:pytest]\naddopts = -rA -p evil\n";
        let again = format!("{before}[tool:pytest]\naddopts = -p evil\n");
        let ini = Sections::Ini(&["tool:pytest", "pytest"]);
        let form = |text: &str| test_sections(ini, text.as_bytes());
        assert_eq!(form(before), form(dependency));
        assert_ne!(form(before), form(plugin));
        assert_ne!(form(before), form(&again));
        let toml = Sections::Toml("tool.pytest");
        let tform = |text: &str| test_sections(toml, text.as_bytes());
        assert_eq!(
            tform("[project]\nname='x'\n[tool.pytest.ini_options]\naddopts='-rA'\n"),
            tform(
                "[project]\nname='x'\ndependencies=['y']\n[tool.pytest.ini_options]\naddopts='-rA'\n"
            )
        );
        assert_ne!(
            tform("[tool.pytest.ini_options]\naddopts='-rA'\n"),
            tform("tool.pytest.ini_options.addopts='-p evil'\n")
        );
    }

    #[test]
    fn snapshots_round_trip_and_name_changes() {
        let m = machinery();
        let line = |kind: &str, path: &str, content: &[u8]| {
            format!("{kind} {} {}\n", encode(path.as_bytes()), encode(content))
        };
        let before = Snapshot::parse(&format!(
            "{}{}swerve-snapshot-complete\n",
            line("f", "./tests/conftest.py", b"import pytest\n"),
            line("f", "./setup.cfg", b"[metadata]\nname = x\n"),
        ))
        .unwrap();
        let after = Snapshot::parse(&format!(
            "{}{}{}swerve-snapshot-complete\n",
            line("f", "./conftest.py", b"hook"),
            line("l", "./tests/conftest.py", b"/tmp/x"),
            line("f", "./setup.cfg", b"[metadata]\nname = y\n"),
        ))
        .unwrap();
        let found = changes(
            &m,
            &before,
            &after,
            Some("diff --git a/node_modules/jest/x.js b/node_modules/jest/x.js\n"),
        );
        let kinds: Vec<(&str, ChangeKind)> =
            found.iter().map(|c| (c.path.as_str(), c.change)).collect();
        assert_eq!(
            kinds,
            [
                ("conftest.py", ChangeKind::Added),
                ("tests/conftest.py", ChangeKind::Modified),
                ("node_modules/jest/x.js", ChangeKind::Environment)
            ]
        );
        let script = restore_script("/testbed", &before, &found);
        assert!(script.contains("rm -rf -- conftest.py\n"));
        assert!(script.contains(&encode(b"import pytest\n")));
        assert!(!script.contains("node_modules"));
        assert!(
            Snapshot::parse("f eA== eA==\n").is_err(),
            "a cut listing is an error"
        );
    }

    #[test]
    fn a_pytest11_entry_point_is_machinery_wherever_it_is_added() {
        let patch = "--- a/setup.cfg\n+++ b/setup.cfg\n@@ -1 +1,3 @@\n+[options.entry_points]\n+pytest11 =\n+    x = pkg.plugin\n--- a/pkg/core.py\n+++ b/pkg/core.py\n@@ -1 +1 @@\n+# an added line naming pytest11 counts, even in a comment\n";
        let found = changes(
            &machinery(),
            &Snapshot::default(),
            &Snapshot::default(),
            Some(patch),
        );
        let paths: Vec<&str> = found.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(paths, ["setup.cfg", "pkg/core.py"]);
        let script = restore_script("/testbed", &Snapshot::default(), &found);
        assert!(
            script.contains("git checkout -q HEAD -- setup.cfg"),
            "{script}"
        );
    }

    #[test]
    fn patch_paths_read_every_header() {
        let patch = "diff --git a/x.py b/y.py\nrename from x.py\nrename to y.py\n--- a/z.py\n+++ b/z.py\n--- /dev/null\n+++ b/new.py\t2020\n";
        assert_eq!(patch_paths(patch), ["x.py", "y.py", "z.py", "new.py"]);
    }

    proptest! {
        #[test]
        fn base64_round_trips(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            prop_assert_eq!(decode(&encode(&bytes)).unwrap(), bytes);
        }

        #[test]
        fn snapshot_parsing_never_panics(text in ".{0,400}") {
            let _ = Snapshot::parse(&text);
        }

        #[test]
        fn patch_paths_never_panic(text in ".{0,400}") {
            let _ = patch_paths(&text);
        }
    }
}
