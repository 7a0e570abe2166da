//! The command-level grammar: lists (`;`, `&&`, `||`, `|`, `&`, newlines), subshells,
//! compound-command keywords, `case` patterns, function definitions, redirections and
//! here-document bodies. Words are read by its child module [`word`]: the two call each
//! other (a word may hold a command substitution, whose commands are a script), so word
//! reading is part of the parser.

mod word;

use std::mem;

use self::word::WordRead;
use super::{MAX_DEPTH, Redirect, RedirectOp, Script, ShellError, SimpleCommand};

/// Keywords that may precede a command and are skipped (`if`, `then`, `do`, `{`, `!`, …).
const PREFIX_KEYWORDS: [&str; 12] = [
    "if", "then", "elif", "else", "fi", "do", "done", "while", "until", "{", "}", "!",
];

/// How a here-document ends and whether its body expands.
struct HeredocSpec {
    delimiter: String,
    strip_tabs: bool,
    expand: bool,
}

/// A here-document waiting for its body (which starts on the next line).
struct PendingHeredoc {
    command: usize,
    redirect: usize,
    spec: HeredocSpec,
}

/// What one call of [`Parser::command`] found.
enum Parsed {
    Command,
    Nothing,
    CaseStart,
    CaseEnd,
}

/// Reads one text into a [`Script`].
pub(crate) struct Parser<'s> {
    pub(super) chars: Vec<char>,
    pub(super) pos: usize,
    pub(super) depth: usize,
    pub(super) cwd: Option<String>,
    pub(super) script: &'s mut Script,
    pending: Vec<PendingHeredoc>,
}

impl<'s> Parser<'s> {
    pub(crate) fn new(
        text: &str,
        cwd: Option<String>,
        depth: usize,
        script: &'s mut Script,
    ) -> Self {
        Self {
            chars: text.chars().collect(),
            pos: 0,
            depth,
            cwd,
            script,
            pending: Vec::new(),
        }
    }

    /// Reads the whole text.
    pub(crate) fn run(mut self) -> Result<(), ShellError> {
        if self.depth > MAX_DEPTH {
            return Err(ShellError::TooDeep);
        }
        self.list(None)?;
        self.read_heredocs()
    }

    /// Reads the expansions of an unquoted here-document body (nothing else is a command).
    pub(crate) fn run_expansions(mut self) -> Result<(), ShellError> {
        if self.depth > MAX_DEPTH {
            return Err(ShellError::TooDeep);
        }
        let mut sink = WordRead::default();
        while let Some(c) = self.peek() {
            match c {
                '\\' => self.advance(2),
                '$' => self.dollar(&mut sink, true)?,
                '`' => self.backtick(&mut sink)?,
                _ => self.pos += 1,
            }
        }
        Ok(())
    }

    pub(super) fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    pub(super) fn peek_at(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    /// Moves `n` characters on, stopping at the end.
    pub(super) fn advance(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.chars.len());
    }

    /// The characters `from..self.pos` as a string.
    pub(super) fn source(&self, from: usize) -> String {
        let end = self.pos.min(self.chars.len());
        self.chars[from.min(end)..end].iter().collect()
    }

    /// Whether `word` comes next, followed by a separator or the end.
    fn at_keyword(&self, word: &str) -> bool {
        let mut i = self.pos;
        for expected in word.chars() {
            if self.chars.get(i) != Some(&expected) {
                return false;
            }
            i += 1;
        }
        self.chars.get(i).is_none_or(|&c| is_metachar(c))
    }

    /// Skips blanks, line continuations and comments (not newlines).
    pub(super) fn skip_blanks(&mut self) {
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\r' => self.pos += 1,
                '\\' if self.peek_at(1) == Some('\n') => self.pos += 2,
                '#' => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                _ => break,
            }
        }
    }

    /// Runs `inner` one nesting level deeper, restoring the directory afterwards (a
    /// subshell's `cd` does not leak out).
    pub(super) fn nested<T>(
        &mut self,
        inner: impl FnOnce(&mut Self) -> Result<T, ShellError>,
    ) -> Result<T, ShellError> {
        if self.depth >= MAX_DEPTH {
            return Err(ShellError::TooDeep);
        }
        self.depth += 1;
        let cwd = self.cwd.clone();
        let result = inner(self);
        self.cwd = cwd;
        self.depth -= 1;
        result
    }

    /// Reads commands up to the end, or up to the `)` closing the `(` at `open`.
    pub(super) fn list(&mut self, open: Option<(usize, &'static str)>) -> Result<(), ShellError> {
        let mut case_depth = 0usize;
        let mut expect_pattern = false;
        loop {
            self.skip_blanks();
            let Some(c) = self.peek() else {
                return match open {
                    Some((offset, open)) => Err(ShellError::Unclosed { open, offset }),
                    None => Ok(()),
                };
            };
            match c {
                '\n' => {
                    self.pos += 1;
                    self.read_heredocs()?;
                }
                ';' | '&' | '|' if !(c == '&' && self.peek_at(1) == Some('>')) => {
                    let start = self.pos;
                    while self.peek().is_some_and(|c| matches!(c, ';' | '&' | '|')) {
                        self.pos += 1;
                    }
                    let op = self.source(start);
                    if case_depth > 0 && (op.starts_with(";;") || op.starts_with(";&")) {
                        expect_pattern = true;
                    }
                }
                _ if expect_pattern => {
                    if self.at_keyword("esac") {
                        self.pos += 4;
                        case_depth = case_depth.saturating_sub(1);
                    } else {
                        self.case_pattern()?;
                    }
                    expect_pattern = false;
                }
                ')' => {
                    if open.is_some() {
                        self.pos += 1;
                        return Ok(());
                    }
                    return Err(ShellError::StrayParen { offset: self.pos });
                }
                '(' if self.peek_at(1) == Some('(') => self.arithmetic()?,
                '(' => {
                    let start = self.pos;
                    self.pos += 1;
                    self.nested(|parser| parser.list(Some((start, "("))))?;
                }
                _ => match self.command()? {
                    Parsed::CaseStart => {
                        case_depth += 1;
                        expect_pattern = true;
                    }
                    Parsed::CaseEnd => case_depth = case_depth.saturating_sub(1),
                    Parsed::Command | Parsed::Nothing => {}
                },
            }
        }
    }

    /// Skips `((…))` (arithmetic: no commands inside).
    fn arithmetic(&mut self) -> Result<(), ShellError> {
        let start = self.pos;
        self.pos += 2;
        let mut depth = 2usize;
        while let Some(c) = self.peek() {
            self.pos += 1;
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                _ => {}
            }
        }
        Err(ShellError::Unclosed {
            open: "((",
            offset: start,
        })
    }

    /// Skips one `case` pattern list up to its `)`.
    fn case_pattern(&mut self) -> Result<(), ShellError> {
        if self.peek() == Some('(') {
            self.pos += 1;
        }
        loop {
            self.skip_blanks();
            match self.peek() {
                None => return Ok(()),
                Some(')') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(c) if is_metachar(c) => self.pos += 1,
                Some(_) => {
                    self.word()?;
                }
            }
        }
    }

    /// Reads one simple command (or a keyword that opens or closes a compound command).
    fn command(&mut self) -> Result<Parsed, ShellError> {
        let mut command = SimpleCommand::default();
        let mut heredocs: Vec<(usize, HeredocSpec)> = Vec::new();
        loop {
            self.skip_blanks();
            let Some(c) = self.peek() else { break };
            if matches!(c, '\n' | ';' | '|' | ')') || c == '&' && self.peek_at(1) != Some('>') {
                break;
            }
            if c == '(' {
                if command.words.len() == 1 && self.function_parens() {
                    let name = command.words.remove(0).text;
                    self.script.functions.push(name);
                    return Ok(Parsed::Nothing);
                }
                break;
            }
            if let Some((redirect, heredoc)) = self.redirect()? {
                if let Some(spec) = heredoc {
                    heredocs.push((command.redirects.len(), spec));
                }
                command.redirects.push(redirect);
                continue;
            }
            let start = self.pos;
            let read = self.word()?;
            if command.words.is_empty() {
                if read.assignment {
                    command.assignments.push(read.word);
                    continue;
                }
                let source = self.source(start);
                match source.as_str() {
                    "case" if command.assignments.is_empty() => {
                        self.case_header()?;
                        return Ok(Parsed::CaseStart);
                    }
                    "esac" => return Ok(Parsed::CaseEnd),
                    "for" | "select" => {
                        self.loop_header()?;
                        return Ok(Parsed::Nothing);
                    }
                    "function" => {
                        self.skip_blanks();
                        if self.peek().is_some_and(|c| !is_metachar(c)) {
                            let name = self.word()?.word.text;
                            self.script.functions.push(name);
                        }
                        self.skip_blanks();
                        self.function_parens();
                        return Ok(Parsed::Nothing);
                    }
                    "[[" => {
                        command.words.push(read.word);
                        self.conditional()?;
                        continue;
                    }
                    keyword if PREFIX_KEYWORDS.contains(&keyword) => continue,
                    _ => {}
                }
            }
            command.words.push(read.word);
        }
        if command.words.is_empty()
            && command.assignments.is_empty()
            && command.redirects.is_empty()
        {
            return Ok(Parsed::Nothing);
        }
        command.cwd = self.cwd.clone();
        let index = self.script.commands.len();
        for (redirect, spec) in heredocs {
            self.pending.push(PendingHeredoc {
                command: index,
                redirect,
                spec,
            });
        }
        self.change_directory(&command);
        self.script.commands.push(command);
        Ok(Parsed::Command)
    }

    /// Follows `cd DIR` / `pushd DIR` with a literal directory.
    fn change_directory(&mut self, command: &SimpleCommand) {
        let Some(program) = command.program() else {
            return;
        };
        if !matches!(program.text.as_str(), "cd" | "pushd") {
            return;
        }
        let target = command.words[1..]
            .iter()
            .find(|word| !word.text.starts_with('-') || word.text == "-");
        let Some(target) = target.filter(|word| word.is_literal() && word.text != "-") else {
            return;
        };
        let dir = target.text.trim_end_matches('/');
        let dir = if dir.is_empty() { "/" } else { dir };
        self.cwd = Some(match &self.cwd {
            _ if dir.starts_with('/') => dir.to_owned(),
            Some(current) => format!("{current}/{dir}"),
            None => dir.to_owned(),
        });
    }

    /// Consumes `( )` after a function name, if that is what follows.
    fn function_parens(&mut self) -> bool {
        let save = self.pos;
        if self.peek() == Some('(') {
            self.pos += 1;
            self.skip_blanks();
            if self.peek() == Some(')') {
                self.pos += 1;
                return true;
            }
        }
        self.pos = save;
        false
    }

    /// After `case`: the subject word and `in`.
    fn case_header(&mut self) -> Result<(), ShellError> {
        self.skip_blanks();
        if self.peek().is_some_and(|c| !is_metachar(c)) {
            self.word()?;
        }
        loop {
            self.skip_blanks();
            match self.peek() {
                Some('\n') => self.pos += 1,
                Some(c) if !is_metachar(c) => {
                    self.word()?;
                    return Ok(());
                }
                _ => return Ok(()),
            }
        }
    }

    /// After `for`/`select`: the variable and its `in` list, or `((…))`, up to the
    /// separator. Substitutions in the list are commands and are kept.
    fn loop_header(&mut self) -> Result<(), ShellError> {
        self.skip_blanks();
        if self.peek() == Some('(') && self.peek_at(1) == Some('(') {
            return self.arithmetic();
        }
        loop {
            self.skip_blanks();
            match self.peek() {
                Some(c) if !is_metachar(c) => {
                    self.word()?;
                }
                _ => return Ok(()),
            }
        }
    }

    /// After `[[`: the expression up to `]]`, whose `&&`, `||`, `(`, `<`, … are operators
    /// of the test, not of the command line.
    fn conditional(&mut self) -> Result<(), ShellError> {
        loop {
            self.skip_blanks();
            match self.peek() {
                None => return Ok(()),
                Some(c) if is_metachar(c) => self.pos += 1,
                Some(_) => {
                    let start = self.pos;
                    self.word()?;
                    if self.source(start) == "]]" {
                        return Ok(());
                    }
                }
            }
        }
    }

    /// Reads a redirection if one starts here (`2>`, `>>`, `<<-`, `&>`, …), with the
    /// here-document it opens, if any.
    fn redirect(&mut self) -> Result<Option<(Redirect, Option<HeredocSpec>)>, ShellError> {
        let start = self.pos;
        let digits = self.chars[self.pos..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        let after = self.chars.get(self.pos + digits).copied();
        let fd = if digits > 0 && matches!(after, Some('<' | '>')) {
            let text: String = self.chars[self.pos..self.pos + digits].iter().collect();
            self.pos += digits;
            text.parse().ok()
        } else {
            None
        };
        let operator = match (self.peek(), self.peek_at(1), self.peek_at(2)) {
            (Some('<' | '>'), Some('('), _) => None,
            (Some('<'), Some('<'), Some('<')) => Some((RedirectOp::HereString, 3, false)),
            (Some('<'), Some('<'), Some('-')) => Some((RedirectOp::HereDoc, 3, true)),
            (Some('<'), Some('<'), _) => Some((RedirectOp::HereDoc, 2, false)),
            (Some('<'), Some('&'), _) => Some((RedirectOp::DupRead, 2, false)),
            (Some('<'), Some('>'), _) => Some((RedirectOp::ReadWrite, 2, false)),
            (Some('<'), _, _) => Some((RedirectOp::Read, 1, false)),
            (Some('>'), Some('>'), _) => Some((RedirectOp::Append, 2, false)),
            (Some('>'), Some('&'), _) => Some((RedirectOp::DupWrite, 2, false)),
            (Some('>'), Some('|'), _) => Some((RedirectOp::Write, 2, false)),
            (Some('>'), _, _) => Some((RedirectOp::Write, 1, false)),
            (Some('&'), Some('>'), Some('>')) if fd.is_none() => {
                Some((RedirectOp::AppendAll, 3, false))
            }
            (Some('&'), Some('>'), _) if fd.is_none() => Some((RedirectOp::WriteAll, 2, false)),
            _ => None,
        };
        let Some((op, len, strip_tabs)) = operator else {
            self.pos = start;
            return Ok(None);
        };
        self.pos += len;
        self.skip_blanks();
        if self.peek().is_none_or(is_metachar) {
            return Err(ShellError::MissingTarget { offset: start });
        }
        let target = self.word()?.word;
        let (body, heredoc) = match op {
            RedirectOp::HereDoc => {
                let spec = HeredocSpec {
                    delimiter: target.text.clone(),
                    strip_tabs,
                    expand: !target.quoted,
                };
                (None, Some(spec))
            }
            RedirectOp::HereString => (Some(format!("{}\n", target.text)), None),
            _ => (None, None),
        };
        let redirect = Redirect {
            fd,
            op,
            target,
            body,
        };
        Ok(Some((redirect, heredoc)))
    }

    /// At a newline: reads the bodies of the here-documents opened on the line just ended.
    fn read_heredocs(&mut self) -> Result<(), ShellError> {
        for heredoc in mem::take(&mut self.pending) {
            let start = self.pos;
            let mut body = String::new();
            while self.pos < self.chars.len() {
                let line_start = self.pos;
                while self.peek().is_some_and(|c| c != '\n') {
                    self.pos += 1;
                }
                let line = self.source(line_start);
                if self.peek() == Some('\n') {
                    self.pos += 1;
                }
                let line = if heredoc.spec.strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    &line
                };
                if line == heredoc.spec.delimiter {
                    break;
                }
                body.push_str(line);
                body.push('\n');
            }
            if heredoc.spec.expand {
                let cwd = self.cwd.clone();
                Parser::new(&body, cwd, self.depth + 1, self.script)
                    .run_expansions()
                    .map_err(|err| err.at(start))?;
            }
            if let Some(redirect) = self
                .script
                .commands
                .get_mut(heredoc.command)
                .and_then(|command| command.redirects.get_mut(heredoc.redirect))
            {
                redirect.body = Some(body);
            }
        }
        Ok(())
    }
}

/// Characters that end a word: blanks and the operator characters.
pub(super) fn is_metachar(c: char) -> bool {
    matches!(
        c,
        ' ' | '\t' | '\r' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>'
    )
}
