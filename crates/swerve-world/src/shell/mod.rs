//! A shell-command reader for routing: it splits a command line the way bash would into
//! simple commands (argument words after quote removal, `NAME=value` assignments,
//! redirections with their here-document bodies), including the commands hidden in
//! `$(…)`, backticks, `<(…)`, subshells, `if`/`for`/`while`/`case` bodies and the
//! expansions of unquoted here-documents.
//!
//! It does not expand anything: a word keeps `$VAR`, `$(…)` or a glob as written and says
//! so ([`Word::expanded`], [`Word::glob`]). Malformed input (an unclosed quote, `$(` or
//! `(`, a stray `)`, nesting deeper than [`MAX_DEPTH`]) is a [`ShellError`], never a panic.

mod parser;

use serde::{Deserialize, Serialize};

/// How deeply substitutions, subshells and nested command strings may nest.
pub const MAX_DEPTH: usize = 24;

/// The simple commands of one command line, in the order bash starts them (a command's
/// substitutions before the command itself), except that the substitutions of a
/// here-document body come after its command (the body follows the line).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Script {
    /// Every simple command, nested ones included.
    pub commands: Vec<SimpleCommand>,
    /// Names of the shell functions the line defines (`name() { … }`, `function name`).
    pub functions: Vec<String>,
}

impl Script {
    /// Reads `text` as bash would.
    pub fn parse(text: &str) -> Result<Script, ShellError> {
        Script::parse_nested(text, None, 0)
    }

    /// Reads `text`, a command string found inside another command (`bash -c`, `eval`),
    /// running in directory `cwd` at nesting `depth`.
    pub(crate) fn parse_nested(
        text: &str,
        cwd: Option<String>,
        depth: usize,
    ) -> Result<Script, ShellError> {
        let mut script = Script::default();
        parser::Parser::new(text, cwd, depth, &mut script).run()?;
        Ok(script)
    }
}

/// One simple command: assignments, words and redirections.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SimpleCommand {
    /// `NAME=value` words before the program name.
    pub assignments: Vec<Word>,
    /// The program and its arguments.
    pub words: Vec<Word>,
    /// Redirections, in order.
    pub redirects: Vec<Redirect>,
    /// The directory the command runs in, as changed by earlier `cd`s on the line
    /// (relative to the starting directory unless absolute); `None` when unchanged.
    pub cwd: Option<String>,
}

impl SimpleCommand {
    /// The program name, if the command has one.
    pub fn program(&self) -> Option<&Word> {
        self.words.first()
    }

    /// The text fed to the command's standard input by a here-document or here-string
    /// (the last one, as bash uses).
    pub fn stdin_text(&self) -> Option<&str> {
        self.redirects
            .iter()
            .rev()
            .find_map(|redirect| redirect.body.as_deref())
    }
}

/// One word after quote removal.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Word {
    /// The word with quotes and escapes removed; expansions (`$HOME`, `$(…)`, `` `…` ``,
    /// `~`) are kept as written.
    pub text: String,
    /// Some part of the word was quoted or escaped.
    pub quoted: bool,
    /// The word holds an expansion, so its run-time value is not `text`.
    pub expanded: bool,
    /// The word holds an unquoted glob character (`*`, `?`, `[`).
    pub glob: bool,
}

impl Word {
    /// An unquoted word without expansions.
    pub fn plain(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            ..Self::default()
        }
    }

    /// The word's value is exactly [`Word::text`] (no expansion, no glob).
    pub fn is_literal(&self) -> bool {
        !self.expanded && !self.glob
    }
}

/// One redirection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Redirect {
    /// The file descriptor written before the operator (`2>`), if any.
    pub fd: Option<u32>,
    /// The operator.
    pub op: RedirectOp,
    /// The target file, descriptor, here-string or here-document delimiter.
    pub target: Word,
    /// What a here-document or here-string feeds to standard input.
    pub body: Option<String>,
}

/// A redirection operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RedirectOp {
    /// `<`
    Read,
    /// `>` (and `>|`)
    Write,
    /// `>>`
    Append,
    /// `<>`
    ReadWrite,
    /// `<&`
    DupRead,
    /// `>&`
    DupWrite,
    /// `&>`: standard output and error to a file.
    WriteAll,
    /// `&>>`
    AppendAll,
    /// `<<` or `<<-`
    HereDoc,
    /// `<<<`
    HereString,
}

impl RedirectOp {
    /// The operator writes its target file.
    pub fn writes_file(self) -> bool {
        matches!(
            self,
            RedirectOp::Write | RedirectOp::Append | RedirectOp::WriteAll | RedirectOp::AppendAll
        )
    }
}

/// Why a command line cannot be read. Offsets count characters from the start of the
/// line (for text nested in backticks or here-documents: where that text starts).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShellError {
    /// A quote (`'`, `"`, `` ` ``, `$'`) never closes.
    #[error("unclosed {quote} quote starting at character {offset}")]
    UnclosedQuote {
        /// The opening quote as written.
        quote: &'static str,
        /// Where it opens.
        offset: usize,
    },
    /// A `(`, `$(`, `$((`, `${`, `<(` or `>(` never closes.
    #[error("unclosed `{open}` starting at character {offset}")]
    Unclosed {
        /// The opening token.
        open: &'static str,
        /// Where it opens.
        offset: usize,
    },
    /// A `)` with nothing to close.
    #[error("unexpected `)` at character {offset}")]
    StrayParen {
        /// Where it is.
        offset: usize,
    },
    /// A redirection operator without a target.
    #[error("redirection at character {offset} has no target")]
    MissingTarget {
        /// Where the operator is.
        offset: usize,
    },
    /// Substitutions or command strings nest deeper than [`MAX_DEPTH`].
    #[error("commands nest more than {MAX_DEPTH} levels deep")]
    TooDeep,
}

impl ShellError {
    /// The same error, reported at `offset` (where nested text starts in its parent).
    pub(crate) fn at(self, offset: usize) -> Self {
        match self {
            ShellError::UnclosedQuote { quote, .. } => ShellError::UnclosedQuote { quote, offset },
            ShellError::Unclosed { open, .. } => ShellError::Unclosed { open, offset },
            ShellError::StrayParen { .. } => ShellError::StrayParen { offset },
            ShellError::MissingTarget { .. } => ShellError::MissingTarget { offset },
            ShellError::TooDeep => ShellError::TooDeep,
        }
    }
}
