//! From simple commands to the programs they start: wrappers (`timeout`, `env`, `nice`,
//! `xargs`, `uv run`, …) start their inner command too; `bash -c`, `sh -c`, `eval` and a
//! shell reading a here-document run a nested command line; `find -exec` starts its
//! command. Shells with a command string are transparent: only what they run counts.

use serde::{Deserialize, Serialize};

use crate::shell::{MAX_DEPTH, RedirectOp, Script, ShellError, SimpleCommand, Word};

/// One program a command line starts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Invocation {
    /// The program as written (`python3`, `/usr/bin/env`, `./run.sh`).
    pub program: Word,
    /// Its arguments.
    pub args: Vec<Word>,
    /// What a here-document or here-string feeds to its standard input.
    pub stdin: Option<String>,
    /// Files its redirections read (`< file`).
    pub reads: Vec<Word>,
    /// Files its redirections write (`> file`, `>> file`).
    pub writes: Vec<Word>,
    /// The directory it runs in, relative to the start unless absolute (`None`: unchanged).
    pub cwd: Option<String>,
}

impl Invocation {
    /// The program's file name: `python3` for `/usr/bin/python3`.
    pub fn name(&self) -> &str {
        base_name(&self.program.text)
    }

    /// The program is a file given by a path that is not a system directory
    /// (`./run.sh`, `tests/runtests.py`, `/testbed/manage.py`).
    pub fn is_path_program(&self) -> bool {
        let text = &self.program.text;
        text.contains('/') && !SYSTEM_DIRS.iter().any(|dir| text.starts_with(dir))
    }

    /// Name forms to look up, most specific first: as written, without a version suffix
    /// (`python3.11` → `python`, `pip3` → `pip`), and before the first dot
    /// (`mkfs.ext4` → `mkfs`).
    pub fn name_forms(&self) -> Vec<String> {
        name_forms(self.name())
    }
}

/// Directories whose programs are looked up by file name.
const SYSTEM_DIRS: [&str; 5] = ["/usr/", "/bin/", "/sbin/", "/opt/", "/nix/"];

/// The last path component.
pub(crate) fn base_name(text: &str) -> &str {
    text.rsplit('/').next().unwrap_or(text)
}

/// See [`Invocation::name_forms`].
pub(crate) fn name_forms(name: &str) -> Vec<String> {
    let mut forms = vec![name.to_owned()];
    let unversioned = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let unversioned = unversioned.strip_suffix('-').unwrap_or(unversioned);
    for form in [unversioned, name.split('.').next().unwrap_or(name)] {
        if !form.is_empty() && !forms.iter().any(|known| known == form) {
            forms.push(form.to_owned());
        }
    }
    forms
}

/// One thing found on a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unit {
    /// A program that runs.
    Run(Invocation),
    /// A program whose name is only known at run time (`$PY x.py`).
    Computed(Invocation),
    /// A nested command string (`bash -c '…'`) that cannot be read.
    Unreadable {
        /// The command string.
        text: String,
        /// Why.
        error: ShellError,
    },
}

/// Every program `script` starts, in order. Calls of functions the script defines are
/// left out (their bodies are in the script).
pub fn units(script: &Script) -> Vec<Unit> {
    let mut units = Vec::new();
    collect_script(script, 0, &mut units);
    units
}

fn collect_script(script: &Script, depth: usize, units: &mut Vec<Unit>) {
    for command in &script.commands {
        let Some(program) = command.program() else {
            continue;
        };
        if program.is_literal() && script.functions.contains(&program.text) {
            continue;
        }
        let invocation = from_command(command);
        collect(invocation, depth, units);
    }
}

fn from_command(command: &SimpleCommand) -> Invocation {
    let files = |write: bool| {
        command
            .redirects
            .iter()
            .filter(|r| {
                if write {
                    r.op.writes_file()
                } else {
                    r.op == RedirectOp::Read
                }
            })
            .map(|r| r.target.clone())
            .collect()
    };
    Invocation {
        program: command.words[0].clone(),
        args: command.words[1..].to_vec(),
        stdin: command.stdin_text().map(str::to_owned),
        reads: files(false),
        writes: files(true),
        cwd: command.cwd.clone(),
    }
}

/// Adds `invocation` and whatever it starts in turn.
fn collect(invocation: Invocation, depth: usize, units: &mut Vec<Unit>) {
    if depth > MAX_DEPTH {
        units.push(Unit::Unreadable {
            text: invocation.program.text.clone(),
            error: ShellError::TooDeep,
        });
        return;
    }
    if invocation.program.expanded {
        units.push(Unit::Computed(invocation));
        return;
    }
    let name = invocation.name().to_owned();
    let forms = name_forms(&name);
    let is = |names: &[&str]| forms.iter().any(|form| names.contains(&form.as_str()));
    if is(&SHELLS) && !invocation.is_path_program() {
        return shell(invocation, depth, units);
    }
    if name == "eval" {
        let text = join_words(&invocation.args);
        return nested(&text, invocation.cwd.clone(), depth, units);
    }
    let inner = if name == "find" {
        find_exec(&invocation)
    } else if name == "command"
        && invocation
            .args
            .first()
            .is_some_and(|w| w.text.starts_with("-v") || w.text.starts_with("-V"))
    {
        None
    } else {
        wrapped(&invocation)
    };
    units.push(Unit::Run(invocation.clone()));
    if let Some(args) = inner.filter(|args| !args.is_empty()) {
        let inner = Invocation {
            program: args[0].clone(),
            args: args[1..].to_vec(),
            ..invocation
        };
        collect(inner, depth + 1, units);
    }
}

/// Shells: a command string (`-c`) or a here-document is a nested command line; a script
/// file or standard input is the shell itself running.
const SHELLS: [&str; 6] = ["bash", "sh", "dash", "zsh", "ksh", "ash"];

fn shell(invocation: Invocation, depth: usize, units: &mut Vec<Unit>) {
    let mut command_string = false;
    let mut args = invocation.args.iter();
    let mut operand = None;
    while let Some(arg) = args.next() {
        let text = arg.text.as_str();
        if text == "--" || text == "-" {
            operand = args.next();
            break;
        }
        if let Some(flags) = text.strip_prefix('-').or_else(|| text.strip_prefix('+')) {
            if flags.starts_with('-') {
                if matches!(text, "--rcfile" | "--init-file") {
                    args.next();
                }
                continue;
            }
            command_string |= text.starts_with('-') && flags.contains('c');
            if flags.contains('o') || flags.contains('O') {
                args.next();
            }
            continue;
        }
        operand = Some(arg);
        break;
    }
    match (command_string, operand, &invocation.stdin) {
        (true, Some(text), _) => nested(&text.text, invocation.cwd.clone(), depth, units),
        (false, None, Some(stdin)) => nested(stdin, invocation.cwd.clone(), depth, units),
        _ => units.push(Unit::Run(invocation)),
    }
}

fn nested(text: &str, cwd: Option<String>, depth: usize, units: &mut Vec<Unit>) {
    match Script::parse_nested(text, cwd, depth + 1) {
        Ok(script) => collect_script(&script, depth + 1, units),
        Err(error) => units.push(Unit::Unreadable {
            text: text.to_owned(),
            error,
        }),
    }
}

fn join_words(words: &[Word]) -> String {
    words
        .iter()
        .map(|word| word.text.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `find … -exec CMD … ;` (or `+`, `-execdir`, `-ok`, `-okdir`): the command.
fn find_exec(invocation: &Invocation) -> Option<Vec<Word>> {
    let args = &invocation.args;
    let start = args
        .iter()
        .position(|w| matches!(w.text.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir"))?;
    let command: Vec<Word> = args[start + 1..]
        .iter()
        .take_while(|w| !matches!(w.text.as_str(), ";" | "+"))
        .cloned()
        .collect();
    Some(command)
}

/// A program that runs another: which options take a value, how many operands come
/// before the command, whether `NAME=value` words may come first, and the subcommand that
/// makes it a wrapper (`uv run`).
struct Wrapper {
    name: &'static str,
    subcommand: Option<&'static str>,
    valued: &'static [&'static str],
    operands: usize,
    assignments: bool,
}

const fn wrapper(name: &'static str, valued: &'static [&'static str]) -> Wrapper {
    Wrapper {
        name,
        subcommand: None,
        valued,
        operands: 0,
        assignments: false,
    }
}

const fn runner(name: &'static str, valued: &'static [&'static str]) -> Wrapper {
    Wrapper {
        subcommand: Some("run"),
        ..wrapper(name, valued)
    }
}

const WRAPPERS: [Wrapper; 17] = [
    Wrapper {
        operands: 1,
        ..wrapper("timeout", &["-s", "--signal", "-k", "--kill-after"])
    },
    Wrapper {
        assignments: true,
        ..wrapper(
            "env",
            &["-u", "--unset", "-C", "--chdir", "-S", "--split-string"],
        )
    },
    wrapper("nice", &["-n", "--adjustment"]),
    wrapper("nohup", &[]),
    wrapper("time", &["-f", "--format", "-o", "--output"]),
    wrapper("command", &[]),
    wrapper("exec", &["-a"]),
    wrapper(
        "stdbuf",
        &["-i", "-o", "-e", "--input", "--output", "--error"],
    ),
    wrapper("setsid", &[]),
    wrapper("ionice", &["-c", "-n", "-p", "--class", "--classdata"]),
    wrapper("strace", &["-o", "-e", "-s", "-p"]),
    wrapper(
        "xargs",
        &[
            "-a",
            "-d",
            "-E",
            "-I",
            "-L",
            "-n",
            "-P",
            "-s",
            "--arg-file",
            "--delimiter",
            "--eof",
            "--replace",
            "--max-lines",
            "--max-args",
            "--max-procs",
            "--max-chars",
        ],
    ),
    runner(
        "uv",
        &["--with", "--python", "-p", "--project", "--directory"],
    ),
    runner("poetry", &["-C", "--directory"]),
    runner("pipenv", &[]),
    runner("conda", &["-n", "--name", "-p", "--prefix"]),
    runner("pdm", &[]),
];

/// The command a wrapper runs, if `invocation` is one.
fn wrapped(invocation: &Invocation) -> Option<Vec<Word>> {
    let forms = invocation.name_forms();
    let spec = WRAPPERS
        .iter()
        .find(|spec| forms.iter().any(|form| form == spec.name))?;
    let mut args = invocation.args.as_slice();
    if let Some(subcommand) = spec.subcommand {
        let position = args.iter().position(|w| !w.text.starts_with('-'))?;
        if args[position].text != subcommand {
            return None;
        }
        args = &args[position + 1..];
    }
    let mut operands = spec.operands;
    while let Some((first, rest)) = args.split_first() {
        let text = first.text.as_str();
        if text == "--" {
            args = rest;
            break;
        }
        if text.starts_with('-') && text.len() > 1 {
            let takes_value = spec.valued.contains(&text);
            args = if takes_value {
                rest.get(1..).unwrap_or_default()
            } else {
                rest
            };
            continue;
        }
        if spec.assignments && text.contains('=') {
            args = rest;
            continue;
        }
        if operands > 0 {
            operands -= 1;
            args = rest;
            continue;
        }
        break;
    }
    if operands > 0 {
        return None;
    }
    if spec.name == "xargs" && args.is_empty() {
        return Some(vec![Word::plain("echo")]);
    }
    Some(args.to_vec())
}

/// `python` (any version), `pypy`: interpreters whose `-m`, `-c` and script arguments are
/// understood.
pub(crate) fn is_python(forms: &[String]) -> bool {
    forms
        .iter()
        .any(|form| matches!(form.as_str(), "python" | "pypy"))
}

/// What a Python interpreter was asked to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PythonRun<'a> {
    /// `-c CODE`.
    Code(&'a str),
    /// `-m MODULE ARGS…`.
    Module(&'a str, &'a [Word]),
    /// `SCRIPT ARGS…`.
    Script(&'a Word, &'a [Word]),
    /// Code read from standard input (`python -`, `python` with a here-document or pipe).
    Stdin,
}

/// Reads a Python command line's options (`-u`, `-W arg`, `-X opt`, combined `-uc`).
pub fn python_run(args: &[Word]) -> PythonRun<'_> {
    let mut index = 0;
    while let Some(word) = args.get(index) {
        let text = word.text.as_str();
        if text == "-" {
            return PythonRun::Stdin;
        }
        if text == "--" {
            return match args.get(index + 1) {
                Some(script) => PythonRun::Script(script, &args[index + 2..]),
                None => PythonRun::Stdin,
            };
        }
        let Some(flags) = text.strip_prefix('-') else {
            return PythonRun::Script(word, &args[index + 1..]);
        };
        if flags.starts_with('-') {
            index += 1;
            continue;
        }
        for (at, flag) in flags.char_indices() {
            if matches!(flag, 'c' | 'm' | 'W' | 'X') {
                let attached = &flags[at + flag.len_utf8()..];
                let (value, rest_from) = if attached.is_empty() {
                    (args.get(index + 1).map(|w| w.text.as_str()), index + 2)
                } else {
                    (Some(attached), index + 1)
                };
                match flag {
                    'c' => return PythonRun::Code(value.unwrap_or_default()),
                    'm' => {
                        let rest = args.get(rest_from..).unwrap_or_default();
                        return PythonRun::Module(value.unwrap_or_default(), rest);
                    }
                    _ => {
                        index = rest_from - 1;
                        break;
                    }
                }
            }
        }
        index += 1;
    }
    PythonRun::Stdin
}
