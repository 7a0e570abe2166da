//! What code a command would execute, read from the parsed command: Python scripts and
//! their file arguments, `-m module` (as `module/path.py`), pytest node ids (as their
//! files) and directories, unittest and Django-style dotted labels, shell and other
//! interpreter scripts, programs run by path, and code given inline (`python -c`, a
//! here-document). Paths are made absolute against the sandbox root and any `cd` before.
//!
//! Targets are candidates: the context reads the ones that exist.

use serde::{Deserialize, Serialize};

use crate::invocation::{Invocation, PythonRun, Unit, base_name, is_python, python_run, units};
use crate::shell::{Script, Word};

/// How a target is used, which decides what a directory expands to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    /// A program or script that runs.
    Script,
    /// Tests to collect: a directory expands to its test files.
    Tests,
    /// A file argument (data, configuration).
    Argument,
}

/// One thing the command would run or read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    /// Absolute sandbox paths to try in order; the first that exists is the target (a
    /// dotted label names a module file or package in several ways).
    pub candidates: Vec<String>,
    /// How it is used.
    pub kind: TargetKind,
    /// The (last component of the) path is a glob pattern.
    pub glob: bool,
}

/// A file the command itself writes before running it (`cat > t.py <<EOF … EOF`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WrittenFile {
    /// Absolute sandbox path.
    pub path: String,
    /// The here-document's text.
    pub content: String,
}

/// The code a command would execute.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Targets {
    /// Files and directories, in command order.
    pub targets: Vec<Target>,
    /// Some code is given in the command itself (`python -c`, a here-document, a pipe).
    pub inline_code: bool,
    /// Files written by here-documents on the same line.
    pub written: Vec<WrittenFile>,
}

/// Options of pytest (and its common plugins) that take a value.
#[rustfmt::skip]
const PYTEST_VALUED: [&str; 26] = [
    "-k", "-m", "-p", "-c", "-o", "-W", "-n", "--deselect", "--ignore", "--ignore-glob",
    "--rootdir", "--confcutdir", "--basetemp", "--junitxml", "--junit-xml", "--tb", "--maxfail",
    "--durations", "--log-level", "--log-cli-level", "--import-mode", "--cov", "--cov-report",
    "--timeout", "--override-ini", "--capture",
];

/// Options of `unittest` that take a value (`discover`'s included).
#[rustfmt::skip]
const UNITTEST_VALUED: [&str; 7] = [
    "-k", "-s", "-p", "-t", "--start-directory", "--pattern", "--top-level-directory",
];

/// Interpreters whose first operand is a script and whose `-e` is inline code.
#[rustfmt::skip]
const INTERPRETERS: [&str; 13] = [
    "bash", "sh", "dash", "zsh", "ksh", "node", "ruby", "perl", "php", "Rscript", "julia",
    "deno", "ts-node",
];

/// File extensions that make an argument look like a file.
#[rustfmt::skip]
const FILE_EXTENSIONS: [&str; 17] = [
    "py", "pyi", "txt", "rst", "md", "json", "toml", "cfg", "ini", "yaml", "yml", "csv", "dat",
    "html", "xml", "sh", "js",
];

impl Targets {
    /// The targets of `command` run in the repository at `root` (e.g. `/testbed`). A
    /// command that cannot be parsed has none.
    pub fn extract(command: &str, root: &str) -> Targets {
        let mut targets = Targets::default();
        let Ok(script) = Script::parse(command) else {
            return targets;
        };
        let mut add = Adder {
            root: root.trim_end_matches('/'),
            targets: &mut targets,
        };
        for unit in units(&script) {
            if let Unit::Run(invocation) = unit {
                add.invocation(&invocation);
            }
        }
        targets
    }
}

struct Adder<'a> {
    root: &'a str,
    targets: &'a mut Targets,
}

impl Adder<'_> {
    fn invocation(&mut self, invocation: &Invocation) {
        let cwd = invocation.cwd.as_deref();
        self.heredoc_writes(invocation);
        let forms = invocation.name_forms();
        let is = |names: &[&str]| forms.iter().any(|form| names.contains(&form.as_str()));
        if invocation.is_path_program() {
            self.path(&invocation.program, cwd, TargetKind::Script);
            let dir = parent(&invocation.program.text);
            self.script_args(&invocation.args, cwd, Some(dir));
        } else if is_python(&forms) {
            self.python(invocation, cwd);
        } else if is(&["pytest", "py.test"]) {
            self.pytest(&invocation.args, cwd);
        } else if is(&["nosetests", "nose2", "trial"]) {
            let operands = operands(&invocation.args, &[]);
            self.labels(&operands, cwd, None, TargetKind::Tests);
        } else if is(&INTERPRETERS) {
            self.interpreter(invocation, cwd);
        }
        for read in &invocation.reads {
            self.path(read, cwd, TargetKind::Argument);
        }
    }

    fn python(&mut self, invocation: &Invocation, cwd: Option<&str>) {
        match python_run(&invocation.args) {
            PythonRun::Code(_) => self.targets.inline_code = true,
            PythonRun::Stdin => self.targets.inline_code |= invocation.stdin.is_some(),
            PythonRun::Script(script, args) => {
                self.path(script, cwd, TargetKind::Script);
                let dir = parent(&script.text);
                self.script_args(args, cwd, Some(dir));
            }
            PythonRun::Module(module, args) => match module {
                "pytest" | "py.test" => self.pytest(args, cwd),
                "unittest" => self.unittest(args, cwd),
                "" => {}
                module => {
                    if is_dotted(module) {
                        let mut candidates = module_candidates(module);
                        let main = format!("{}/__main__.py", module.replace('.', "/"));
                        candidates.insert(1, main);
                        self.candidates(&candidates, cwd, TargetKind::Script);
                    }
                    self.script_args(args, cwd, None);
                }
            },
        }
    }

    fn pytest(&mut self, args: &[Word], cwd: Option<&str>) {
        for word in operands(args, &PYTEST_VALUED) {
            let file = word.text.split("::").next().unwrap_or_default();
            let file = file.split('[').next().unwrap_or_default();
            if !file.is_empty() {
                let word = Word {
                    text: file.to_owned(),
                    ..word.clone()
                };
                self.path(&word, cwd, TargetKind::Tests);
            }
        }
    }

    fn unittest(&mut self, args: &[Word], cwd: Option<&str>) {
        let operands = operands(args, &UNITTEST_VALUED);
        if operands.first().is_some_and(|word| word.text == "discover") {
            let start = args
                .windows(2)
                .find(|pair| matches!(pair[0].text.as_str(), "-s" | "--start-directory"))
                .map(|pair| &pair[1])
                .or_else(|| operands.get(1).copied());
            let default = Word::plain(".");
            self.path(start.unwrap_or(&default), cwd, TargetKind::Tests);
            return;
        }
        self.labels(&operands, cwd, None, TargetKind::Tests);
    }

    /// A script's arguments: files, and dotted labels (Django's `runtests.py`,
    /// `manage.py test`) as module paths near the script or the working directory.
    fn script_args(&mut self, args: &[Word], cwd: Option<&str>, script_dir: Option<&str>) {
        let operands = operands(args, &[]);
        self.labels(&operands, cwd, script_dir, TargetKind::Argument);
        for word in args.iter().filter(|word| word.text.starts_with('-')) {
            if let Some((_, value)) = word.text.split_once('=')
                && looks_like_file(value)
            {
                let value = Word {
                    text: value.to_owned(),
                    ..word.clone()
                };
                self.path(&value, cwd, TargetKind::Argument);
            }
        }
    }

    /// Operands that are files (of `kind`) or dotted labels (tests, looked up next to the
    /// script first).
    fn labels(
        &mut self,
        operands: &[&Word],
        cwd: Option<&str>,
        script_dir: Option<&str>,
        kind: TargetKind,
    ) {
        for word in operands {
            let text = word.text.as_str();
            if looks_like_file(text) || text.contains('/') {
                let file = text.split("::").next().unwrap_or(text);
                let word = Word {
                    text: file.to_owned(),
                    ..(*word).clone()
                };
                self.path(&word, cwd, kind);
            } else if is_dotted(text) && text.contains('.') && word.is_literal() {
                let mut candidates = Vec::new();
                let script_dir = script_dir.filter(|dir| !dir.is_empty());
                for base in script_dir.into_iter().chain([""]) {
                    for candidate in module_candidates(text) {
                        candidates.push(join(base, &candidate));
                    }
                }
                self.candidates(&candidates, cwd, TargetKind::Tests);
            }
        }
    }

    fn interpreter(&mut self, invocation: &Invocation, cwd: Option<&str>) {
        let inline = invocation
            .args
            .iter()
            .any(|word| matches!(word.text.as_str(), "-e" | "-c" | "--eval"));
        if inline || invocation.args.is_empty() && invocation.stdin.is_some() {
            self.targets.inline_code = true;
            return;
        }
        let operands = operands(&invocation.args, &["-o", "-O", "--rcfile", "--init-file"]);
        if let Some((script, rest)) = operands.split_first() {
            self.path(script, cwd, TargetKind::Script);
            for word in rest.iter().filter(|word| looks_like_file(&word.text)) {
                self.path(word, cwd, TargetKind::Argument);
            }
        }
    }

    /// `cat > file <<EOF` and `tee file <<EOF`: the file's content is the here-document.
    fn heredoc_writes(&mut self, invocation: &Invocation) {
        let Some(content) = &invocation.stdin else {
            return;
        };
        let files: Vec<&Word> = match invocation.name() {
            "cat" => invocation.writes.iter().collect(),
            "tee" => operands(&invocation.args, &[]),
            _ => return,
        };
        for file in files.into_iter().filter(|word| word.is_literal()) {
            let path = resolve(self.root, invocation.cwd.as_deref(), &file.text);
            self.targets.written.push(WrittenFile {
                path,
                content: content.clone(),
            });
        }
    }

    fn path(&mut self, word: &Word, cwd: Option<&str>, kind: TargetKind) {
        if word.expanded || word.text.is_empty() {
            return;
        }
        self.push(Target {
            candidates: vec![resolve(self.root, cwd, &word.text)],
            kind,
            glob: word.glob,
        });
    }

    fn candidates(&mut self, relative: &[String], cwd: Option<&str>, kind: TargetKind) {
        let candidates = relative
            .iter()
            .map(|path| resolve(self.root, cwd, path))
            .collect();
        self.push(Target {
            candidates,
            kind,
            glob: false,
        });
    }

    fn push(&mut self, target: Target) {
        if !self.targets.targets.contains(&target) {
            self.targets.targets.push(target);
        }
    }
}

/// The non-option words, skipping the values of options in `valued`.
fn operands<'a>(args: &'a [Word], valued: &[&str]) -> Vec<&'a Word> {
    let mut operands = Vec::new();
    let mut words = args.iter();
    let mut options_done = false;
    while let Some(word) = words.next() {
        let text = word.text.as_str();
        if options_done || !text.starts_with('-') || text == "-" {
            operands.push(word);
        } else if text == "--" {
            options_done = true;
        } else if valued.contains(&text) {
            words.next();
        }
    }
    operands
}

/// A dotted Python name: `a.b.c`, each part an identifier.
fn is_dotted(text: &str) -> bool {
    text.split('.').all(|part| {
        let mut chars = part.chars();
        chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
            && chars.all(|c| c.is_alphanumeric() || c == '_')
    })
}

/// Where the module (or the class or function) a dotted label names may live, most
/// specific first: `a/b/c.py`, `a/b/c/__init__.py`, `a/b.py`, `a.py`.
fn module_candidates(label: &str) -> Vec<String> {
    let parts: Vec<&str> = label.split('.').collect();
    let mut candidates = Vec::new();
    for end in (1..=parts.len()).rev() {
        let path = parts[..end].join("/");
        candidates.push(format!("{path}.py"));
        if end == parts.len() {
            candidates.push(format!("{path}/__init__.py"));
        }
    }
    candidates
}

/// Ends with a known file extension.
fn looks_like_file(text: &str) -> bool {
    base_name(text)
        .rsplit_once('.')
        .is_some_and(|(stem, extension)| !stem.is_empty() && FILE_EXTENSIONS.contains(&extension))
}

/// The directory part of a path as written (`""` for none).
fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

fn join(base: &str, path: &str) -> String {
    if base.is_empty() || path.starts_with('/') {
        path.to_owned()
    } else {
        format!("{base}/{path}")
    }
}

/// `path` as an absolute, lexically normalized sandbox path: relative paths start at
/// `cwd` (itself relative to `root` unless absolute).
pub(crate) fn resolve(root: &str, cwd: Option<&str>, path: &str) -> String {
    let base = match cwd {
        Some(cwd) if cwd.starts_with('/') => cwd.to_owned(),
        Some(cwd) => join(root, cwd),
        None => root.to_owned(),
    };
    let joined = if path.starts_with('/') {
        path.to_owned()
    } else {
        format!("{base}/{path}")
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in joined.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    format!("/{}", parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(command: &str) -> Vec<Vec<String>> {
        Targets::extract(command, "/testbed")
            .targets
            .into_iter()
            .map(|target| target.candidates)
            .collect()
    }

    fn one(path: &str) -> Vec<String> {
        vec![path.to_owned()]
    }

    #[test]
    fn finds_scripts_modules_and_test_files() {
        assert_eq!(files("python reproduce.py"), [one("/testbed/reproduce.py")]);
        assert_eq!(
            files("cd src && python -u ../run.py data/in.json --out=o.txt"),
            [
                one("/testbed/run.py"),
                one("/testbed/src/data/in.json"),
                one("/testbed/src/o.txt")
            ]
        );
        assert_eq!(
            files("pytest -k 'a or b' tests/test_x.py::TestY::test_z[1] tests/unit -q"),
            [one("/testbed/tests/test_x.py"), one("/testbed/tests/unit")]
        );
        assert_eq!(
            files("python -m pytest /testbed/t/test_a.py"),
            [one("/testbed/t/test_a.py")]
        );
        assert_eq!(
            files("timeout 60 python -m mypkg.tool --flag"),
            [vec![
                "/testbed/mypkg/tool.py".to_owned(),
                "/testbed/mypkg/tool/__main__.py".to_owned(),
                "/testbed/mypkg/tool/__init__.py".to_owned(),
                "/testbed/mypkg.py".to_owned(),
            ]]
        );
        assert_eq!(
            files("./tests/runtests.py --settings=test_sqlite model_fields.test_x"),
            [
                one("/testbed/tests/runtests.py"),
                vec![
                    "/testbed/tests/model_fields/test_x.py".to_owned(),
                    "/testbed/tests/model_fields/test_x/__init__.py".to_owned(),
                    "/testbed/tests/model_fields.py".to_owned(),
                    "/testbed/model_fields/test_x.py".to_owned(),
                    "/testbed/model_fields/test_x/__init__.py".to_owned(),
                    "/testbed/model_fields.py".to_owned(),
                ]
            ]
        );
        assert_eq!(
            files("python -m unittest tests.test_a.TestB")[0][..2],
            [
                "/testbed/tests/test_a/TestB.py".to_owned(),
                "/testbed/tests/test_a/TestB/__init__.py".to_owned()
            ]
        );
        assert_eq!(
            files("python -m unittest discover -s tests -p 'test_*.py'"),
            [one("/testbed/tests")]
        );
        assert_eq!(files("bash run_tests.sh"), [one("/testbed/run_tests.sh")]);
        assert_eq!(files("python $SCRIPT"), Vec::<Vec<String>>::new());
        assert_eq!(files("cat a.py && grep x b.py"), Vec::<Vec<String>>::new());
        assert_eq!(
            files("python x.py < input.txt"),
            [one("/testbed/x.py"), one("/testbed/input.txt")]
        );
        assert_eq!(files("python 'unclosed"), Vec::<Vec<String>>::new());
    }

    #[test]
    fn notes_inline_code_and_heredoc_files() {
        let targets = Targets::extract("python -c 'print(1)'", "/testbed");
        assert!(targets.inline_code);
        assert!(targets.targets.is_empty());
        let targets = Targets::extract("python - <<'EOF'\nprint(1)\nEOF", "/testbed");
        assert!(targets.inline_code);
        let targets = Targets::extract("python x.py", "/testbed");
        assert!(!targets.inline_code);
        let targets = Targets::extract(
            "cat > /tmp/t.py <<'EOF'\nprint(2)\nEOF\npython /tmp/t.py",
            "/testbed",
        );
        assert_eq!(
            targets.written,
            [WrittenFile {
                path: "/tmp/t.py".to_owned(),
                content: "print(2)\n".to_owned()
            }]
        );
        assert_eq!(targets.targets[0].candidates, ["/tmp/t.py"]);
        let glob = Targets::extract("pytest tests/test_*.py", "/testbed");
        assert!(glob.targets[0].glob);
    }

    #[test]
    fn resolves_paths_lexically() {
        assert_eq!(
            resolve("/testbed", None, "a/./b/../c.py"),
            "/testbed/a/c.py"
        );
        assert_eq!(
            resolve("/testbed", Some("src"), "x.py"),
            "/testbed/src/x.py"
        );
        assert_eq!(resolve("/testbed", Some("/tmp"), "x.py"), "/tmp/x.py");
        assert_eq!(resolve("/testbed", None, "/../../x"), "/x");
    }
}
