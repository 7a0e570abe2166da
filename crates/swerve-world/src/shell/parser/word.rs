//! Words: quotes (`'…'`, `"…"`, `$'…'`, `$"…"`), backslash escapes, line continuations,
//! parameter and arithmetic expansions, and the command substitutions (`$(…)`,
//! `` `…` ``, `<(…)`, `>(…)`) whose commands are read into the script as well.

use super::{Parser, is_metachar};
use crate::shell::{Script, ShellError, Word};

/// One word as read, and whether it has the form `NAME=value` (an assignment when it comes
/// before the program name).
#[derive(Debug, Default)]
pub(super) struct WordRead {
    pub(super) word: Word,
    pub(super) assignment: bool,
}

impl WordRead {
    fn push(&mut self, c: char) {
        self.word.text.push(c);
    }

    fn push_str(&mut self, text: &str) {
        self.word.text.push_str(text);
    }

    /// An unquoted `=` after a valid name (or `name+`) makes the word an assignment.
    fn equals_sign(&mut self) {
        if !self.assignment && !self.word.quoted && !self.word.expanded {
            let name = self.word.text.strip_suffix('+').unwrap_or(&self.word.text);
            self.assignment = is_name(name);
        }
    }
}

/// A shell variable name.
fn is_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl Parser<'_> {
    /// Reads one word (the caller has checked that a non-metacharacter comes next, or a
    /// process substitution).
    pub(super) fn word(&mut self) -> Result<WordRead, ShellError> {
        let mut read = WordRead::default();
        while let Some(c) = self.peek() {
            match c {
                '<' | '>' if self.peek_at(1) == Some('(') => {
                    let start = self.pos;
                    let open = if c == '<' { "<(" } else { ">(" };
                    self.pos += 2;
                    self.nested(|parser| parser.list(Some((start, open))))?;
                    read.push_str(&self.source(start));
                    read.word.expanded = true;
                }
                c if is_metachar(c) => break,
                '\\' => {
                    match self.peek_at(1) {
                        Some('\n') => {}
                        Some(next) => {
                            read.push(next);
                            read.word.quoted = true;
                        }
                        None => read.push('\\'),
                    }
                    self.advance(2);
                }
                '\'' => {
                    let start = self.pos;
                    self.pos += 1;
                    let text = self.until_quote('\'').ok_or(ShellError::UnclosedQuote {
                        quote: "'",
                        offset: start,
                    })?;
                    read.push_str(&text);
                    read.word.quoted = true;
                }
                '"' => self.double_quoted(&mut read)?,
                '$' => self.dollar(&mut read, false)?,
                '`' => self.backtick(&mut read)?,
                '*' | '?' | '[' => {
                    read.word.glob = true;
                    read.push(c);
                    self.pos += 1;
                }
                '~' if read.word.text.is_empty() && !read.word.quoted => {
                    read.word.expanded = true;
                    read.push(c);
                    self.pos += 1;
                }
                '=' => {
                    read.equals_sign();
                    read.push(c);
                    self.pos += 1;
                }
                _ => {
                    read.push(c);
                    self.pos += 1;
                }
            }
        }
        Ok(read)
    }

    /// The text up to the closing `quote` (consumed), or `None` at the end of the input.
    fn until_quote(&mut self, quote: char) -> Option<String> {
        let start = self.pos;
        while let Some(c) = self.peek() {
            if c == quote {
                let text = self.source(start);
                self.pos += 1;
                return Some(text);
            }
            self.pos += 1;
        }
        None
    }

    /// `"…"`: backslash escapes only `$`, `` ` ``, `"`, `\` and newline; expansions and
    /// substitutions still happen.
    fn double_quoted(&mut self, read: &mut WordRead) -> Result<(), ShellError> {
        let start = self.pos;
        self.pos += 1;
        read.word.quoted = true;
        loop {
            let Some(c) = self.peek() else {
                return Err(ShellError::UnclosedQuote {
                    quote: "\"",
                    offset: start,
                });
            };
            match c {
                '"' => {
                    self.pos += 1;
                    return Ok(());
                }
                '\\' => match self.peek_at(1) {
                    Some('\n') => self.pos += 2,
                    Some(next @ ('$' | '`' | '"' | '\\')) => {
                        read.push(next);
                        self.pos += 2;
                    }
                    _ => {
                        read.push('\\');
                        self.pos += 1;
                    }
                },
                '$' => self.dollar(read, true)?,
                '`' => self.backtick(read)?,
                _ => {
                    read.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    /// Something starting with `$`: a substitution, an expansion, an ANSI-C or locale
    /// string, or a literal dollar sign.
    pub(super) fn dollar(
        &mut self,
        read: &mut WordRead,
        in_double_quotes: bool,
    ) -> Result<(), ShellError> {
        let start = self.pos;
        match (self.peek_at(1), self.peek_at(2)) {
            (Some('('), Some('(')) => {
                self.pos += 3;
                self.skip_balanced('(', ')', 2, start, "$((")?;
                read.word.expanded = true;
            }
            (Some('('), _) => {
                self.pos += 2;
                self.nested(|parser| parser.list(Some((start, "$("))))?;
                read.word.expanded = true;
            }
            (Some('{'), _) => {
                self.pos += 2;
                self.skip_balanced('{', '}', 1, start, "${")?;
                read.word.expanded = true;
            }
            (Some('\''), _) if !in_double_quotes => {
                self.pos += 2;
                let text = self.ansi_c_string(start)?;
                read.push_str(&text);
                read.word.quoted = true;
                return Ok(());
            }
            (Some('"'), _) if !in_double_quotes => {
                self.pos += 1;
                return self.double_quoted(read);
            }
            (Some(c), _) if c.is_ascii_alphabetic() || c == '_' => {
                self.pos += 2;
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                {
                    self.pos += 1;
                }
                read.word.expanded = true;
            }
            (Some(c), _) if c.is_ascii_digit() || "@*#?-$!".contains(c) => {
                self.pos += 2;
                read.word.expanded = true;
            }
            _ => self.pos += 1,
        }
        read.push_str(&self.source(start));
        Ok(())
    }

    /// Skips to the `close` that balances `depth` already-open `open`s, reading any
    /// command substitutions inside (as in `${x:-$(cmd)}`).
    fn skip_balanced(
        &mut self,
        open: char,
        close: char,
        mut depth: usize,
        start: usize,
        name: &'static str,
    ) -> Result<(), ShellError> {
        let mut sink = WordRead::default();
        while let Some(c) = self.peek() {
            match c {
                '\\' => self.advance(2),
                '$' if self.peek_at(1) == Some('(') && open == '{' => {
                    self.dollar(&mut sink, true)?;
                }
                '`' => self.backtick(&mut sink)?,
                '\'' if open == '{' => {
                    let quote = self.pos;
                    self.pos += 1;
                    self.until_quote('\'').ok_or(ShellError::UnclosedQuote {
                        quote: "'",
                        offset: quote,
                    })?;
                }
                _ => {
                    self.pos += 1;
                    if c == open {
                        depth += 1;
                    } else if c == close {
                        depth -= 1;
                        if depth == 0 {
                            return Ok(());
                        }
                    }
                }
            }
        }
        Err(ShellError::Unclosed {
            open: name,
            offset: start,
        })
    }

    /// `$'…'` after the opening quote: the common escapes decoded.
    fn ansi_c_string(&mut self, start: usize) -> Result<String, ShellError> {
        let mut text = String::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(ShellError::UnclosedQuote {
                    quote: "$'",
                    offset: start,
                });
            };
            self.pos += 1;
            match c {
                '\'' => return Ok(text),
                '\\' => {
                    let Some(next) = self.peek() else { continue };
                    self.pos += 1;
                    match next {
                        'n' => text.push('\n'),
                        't' => text.push('\t'),
                        'r' => text.push('\r'),
                        'a' => text.push('\x07'),
                        'b' => text.push('\x08'),
                        'e' | 'E' => text.push('\x1b'),
                        'f' => text.push('\x0c'),
                        'v' => text.push('\x0b'),
                        '\\' | '\'' | '"' | '?' => text.push(next),
                        other => {
                            text.push('\\');
                            text.push(other);
                        }
                    }
                }
                _ => text.push(c),
            }
        }
    }

    /// `` `…` ``: the text between the backticks (with `` \` ``, `\\` and `\$` unescaped)
    /// is itself a command line.
    pub(super) fn backtick(&mut self, read: &mut WordRead) -> Result<(), ShellError> {
        let start = self.pos;
        self.pos += 1;
        let mut inner = String::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(ShellError::UnclosedQuote {
                    quote: "`",
                    offset: start,
                });
            };
            match c {
                '`' => {
                    self.pos += 1;
                    break;
                }
                '\\' => match self.peek_at(1) {
                    Some(next @ ('`' | '\\' | '$')) => {
                        inner.push(next);
                        self.pos += 2;
                    }
                    _ => {
                        inner.push('\\');
                        self.pos += 1;
                    }
                },
                _ => {
                    inner.push(c);
                    self.pos += 1;
                }
            }
        }
        read.push_str(&self.source(start));
        read.word.expanded = true;
        let nested = Script::parse_nested(&inner, self.cwd.clone(), self.depth + 1)
            .map_err(|err| err.at(start))?;
        self.script.commands.extend(nested.commands);
        self.script.functions.extend(nested.functions);
        Ok(())
    }
}
