//! Reading a Dockerfile into instructions, as BuildKit's parser does.
//!
//! - Parser directives (`# escape=`, `# syntax=`, `# check=`) only at the top, before any
//!   comment, blank line or instruction; `escape` is `\` (the default) or `` ` ``, the others
//!   are ignored.
//! - A line ending in the escape character (optionally followed by spaces or tabs) continues
//!   on the next; comment lines and blank lines inside a continuation are dropped, and the
//!   continued line is appended as written (its leading whitespace kept).
//! - A line whose first non-blank character is `#` is a comment; elsewhere `#` is text.
//! - Keywords are case-insensitive; leading `--name[=value]` flags are split off.
//! - `RUN`, `COPY` and `ADD` may name heredocs (`<<EOF`, `<<-EOF`, `<<"EOF"`, several per
//!   line): the lines after the instruction up to the terminator are their bodies.
//!
//! Nothing here panics on any input (property-tested); every error names the file, the
//! line and the instruction.

use std::fmt;

/// An error in a Dockerfile: the file, the line (1-based), the instruction and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DockerfileError {
    /// The Dockerfile's path, as given.
    pub file: String,
    /// The line of the instruction (1-based; 0 for the file as a whole).
    pub line: usize,
    /// The instruction's keyword, upper case (empty for the file as a whole).
    pub instruction: String,
    /// What is wrong, and what to do about it.
    pub message: String,
}

impl fmt::Display for DockerfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.instruction.is_empty()) {
            (0, _) => write!(f, "{}: {}", self.file, self.message),
            (line, true) => write!(f, "{}:{line}: {}", self.file, self.message),
            (line, false) => write!(
                f,
                "{}:{line}: {}: {}",
                self.file, self.instruction, self.message
            ),
        }
    }
}

impl std::error::Error for DockerfileError {}

/// A `--name[=value]` flag of an instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flag {
    /// The name, without the dashes, e.g. `from`.
    pub name: String,
    /// The value after `=`, `None` for a bare `--name`.
    pub value: Option<String>,
}

/// A heredoc's body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heredoc {
    /// Its name (the terminator), e.g. `EOF`.
    pub name: String,
    /// The lines up to the terminator, each ending in a newline (tabs stripped for `<<-`).
    pub content: String,
    /// Whether variables in the body are expanded (the name was not quoted).
    pub expand: bool,
}

/// One instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instruction {
    /// The line its keyword is on (1-based).
    pub line: usize,
    /// The keyword, upper case, e.g. `RUN`.
    pub keyword: String,
    /// Its leading flags, in order.
    pub flags: Vec<Flag>,
    /// The rest of the (continued) line after the keyword and flags, trimmed.
    pub args: String,
    /// The heredocs the line names, in order.
    pub heredocs: Vec<Heredoc>,
}

/// A parsed Dockerfile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dockerfile {
    /// Its path, as given (for errors).
    pub file: String,
    /// The escape character (`\` or `` ` ``).
    pub escape: char,
    /// The instructions, in order.
    pub instructions: Vec<Instruction>,
}

/// Instructions that may have heredocs.
const HEREDOC_INSTRUCTIONS: &[&str] = &["RUN", "COPY", "ADD"];

impl Dockerfile {
    /// An error about `instruction`.
    pub fn error(&self, instruction: &Instruction, message: impl Into<String>) -> DockerfileError {
        DockerfileError {
            file: self.file.clone(),
            line: instruction.line,
            instruction: instruction.keyword.clone(),
            message: message.into(),
        }
    }

    /// Parses `text`, the Dockerfile at `file`.
    pub fn parse(file: &str, text: &str) -> Result<Self, DockerfileError> {
        let error = |line: usize, instruction: &str, message: String| DockerfileError {
            file: file.to_owned(),
            line,
            instruction: instruction.to_owned(),
            message,
        };
        let lines: Vec<&str> = text.split('\n').collect();
        let mut escape = '\\';
        let mut index = 0;
        // Parser directives: only at the very top.
        while index < lines.len() {
            let Some((name, value)) = directive(lines[index]) else {
                break;
            };
            if name == "escape" {
                escape = match value.as_str() {
                    "\\" => '\\',
                    "`" => '`',
                    other => {
                        return Err(error(
                            index + 1,
                            "",
                            format!(
                                "invalid escape directive \"{other}\": the escape character must be \\ or `"
                            ),
                        ));
                    }
                };
            }
            index += 1;
        }
        let mut instructions = Vec::new();
        while index < lines.len() {
            let first = trim_newline(lines[index]);
            let start = index;
            index += 1;
            let stripped = first.trim_start();
            if stripped.is_empty() || stripped.starts_with('#') {
                continue;
            }
            let (mut logical, mut ended) = trim_continuation(stripped, escape);
            while !ended && index < lines.len() {
                let next = trim_newline(lines[index]);
                index += 1;
                let trimmed = next.trim_start();
                if trimmed.starts_with('#') || trimmed.trim().is_empty() {
                    continue;
                }
                let (part, end) = trim_continuation(next, escape);
                logical.push_str(&part);
                ended = end;
            }
            let (word, rest) = split_word(&logical);
            let keyword = word.to_ascii_uppercase();
            if !keyword.chars().all(|c| c.is_ascii_alphabetic() || c == '_') {
                return Err(error(
                    start + 1,
                    "",
                    format!(
                        "\"{word}\" is not an instruction (a line must start with an instruction such as FROM, RUN or COPY; a continued line needs {escape} at the end of the previous one)"
                    ),
                ));
            }
            let (flags, args) = split_flags(rest);
            let mut heredocs = Vec::new();
            if HEREDOC_INSTRUCTIONS.contains(&keyword.as_str()) {
                for (name, strip_tabs, expand) in heredoc_names(args) {
                    let mut content = String::new();
                    let mut closed = false;
                    while index < lines.len() {
                        let body = trim_newline(lines[index]);
                        index += 1;
                        let body = if strip_tabs {
                            body.trim_start_matches('\t')
                        } else {
                            body
                        };
                        if body == name {
                            closed = true;
                            break;
                        }
                        content.push_str(body);
                        content.push('\n');
                    }
                    if !closed {
                        return Err(error(
                            start + 1,
                            &keyword,
                            format!(
                                "the heredoc <<{name} is not closed: end it with a line holding only {name}"
                            ),
                        ));
                    }
                    heredocs.push(Heredoc {
                        name,
                        content,
                        expand,
                    });
                }
            }
            instructions.push(Instruction {
                line: start + 1,
                keyword,
                flags,
                args: args.trim().to_owned(),
                heredocs,
            });
        }
        Ok(Self {
            file: file.to_owned(),
            escape,
            instructions,
        })
    }
}

/// `# name=value` as a parser directive (name lower-cased), if `line` is one.
fn directive(line: &str) -> Option<(String, String)> {
    let rest = trim_newline(line).trim_start().strip_prefix('#')?;
    let (name, value) = rest.split_once('=')?;
    let name = name.trim();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    Some((name.to_ascii_lowercase(), value.trim().to_owned()))
}

fn trim_newline(line: &str) -> &str {
    line.strip_suffix('\r').unwrap_or(line)
}

/// `line` without its continuation (the escape character and trailing blanks), and whether
/// the instruction ends on it.
fn trim_continuation(line: &str, escape: char) -> (String, bool) {
    let trimmed = line.trim_end_matches([' ', '\t']);
    match trimmed.strip_suffix(escape) {
        Some(before) => (before.to_owned(), false),
        None => (line.to_owned(), true),
    }
}

/// The first whitespace-delimited word of `text` and the rest.
fn split_word(text: &str) -> (&str, &str) {
    let text = text.trim_start();
    match text.find(char::is_whitespace) {
        Some(at) => (&text[..at], &text[at..]),
        None => (text, ""),
    }
}

/// Leading `--name[=value]` flags and the rest.
fn split_flags(mut rest: &str) -> (Vec<Flag>, &str) {
    let mut flags = Vec::new();
    loop {
        let (word, after) = split_word(rest);
        let Some(flag) = word.strip_prefix("--").filter(|flag| !flag.is_empty()) else {
            return (flags, rest);
        };
        let (name, value) = match flag.split_once('=') {
            Some((name, value)) => (name, Some(value.to_owned())),
            None => (flag, None),
        };
        flags.push(Flag {
            name: name.to_ascii_lowercase(),
            value,
        });
        rest = after;
    }
}

/// The heredocs `args` names: (name, strip tabs, expand), in order. A heredoc is a word
/// starting `<<` (not `<<<`) outside quotes, then an optional `-`, then a name, optionally
/// quoted.
fn heredoc_names(args: &str) -> Vec<(String, bool, bool)> {
    let chars: Vec<char> = args.chars().collect();
    let mut found = Vec::new();
    let mut quote: Option<char> = None;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            i += 1;
            continue;
        }
        if c == '\'' || c == '"' {
            quote = Some(c);
            i += 1;
            continue;
        }
        let starts_word = i == 0 || chars[i - 1].is_whitespace();
        if c == '<'
            && starts_word
            && chars.get(i + 1) == Some(&'<')
            && chars.get(i + 2) != Some(&'<')
        {
            let mut j = i + 2;
            let strip_tabs = chars.get(j) == Some(&'-');
            if strip_tabs {
                j += 1;
            }
            let open = chars.get(j).copied().filter(|c| *c == '"' || *c == '\'');
            if open.is_some() {
                j += 1;
            }
            let name_start = j;
            while j < chars.len() && (chars[j].is_ascii_alphanumeric() || chars[j] == '_') {
                j += 1;
            }
            let name: String = chars[name_start..j].iter().collect();
            let closed = match open {
                Some(q) if chars.get(j) == Some(&q) => {
                    j += 1;
                    true
                }
                Some(_) => false,
                None => true,
            };
            if !name.is_empty() && closed {
                found.push((name, strip_tabs, open.is_none()));
            }
            i = j.max(i + 1);
            continue;
        }
        i += 1;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn parse(text: &str) -> Dockerfile {
        Dockerfile::parse("Dockerfile", text).unwrap()
    }

    #[test]
    fn keywords_are_case_insensitive_and_flags_split() {
        let file = parse("from alpine AS base\ncopy --from=base --chown=1:2 a b\n");
        assert_eq!(file.instructions[0].keyword, "FROM");
        assert_eq!(file.instructions[0].args, "alpine AS base");
        let copy = &file.instructions[1];
        assert_eq!(copy.keyword, "COPY");
        assert_eq!(copy.flags.len(), 2);
        assert_eq!(copy.flags[0].name, "from");
        assert_eq!(copy.flags[0].value.as_deref(), Some("base"));
        assert_eq!(copy.args, "a b");
        assert_eq!(copy.line, 2);
    }

    #[test]
    fn continuations_comments_and_blank_lines_as_docker_documents() {
        // docs.docker.com/reference/dockerfile/#format: comments inside a continuation are
        // removed before the instruction is run; empty continuation lines are dropped.
        let file =
            parse("RUN echo hello \\\n# comment\n    world\n\nRUN echo a \\  \n\n  b\n# done\n");
        assert_eq!(file.instructions.len(), 2);
        assert_eq!(file.instructions[0].args, "echo hello     world");
        assert_eq!(file.instructions[1].args, "echo a   b");
        assert_eq!(file.instructions[1].line, 5);
    }

    #[test]
    fn escape_directive_changes_the_continuation_character() {
        // The documented Windows example: with `# escape=``, `\` is a plain character.
        let file = parse("# escape=`\n\nFROM scratch\nCOPY testfile.txt c:\\ `\n  d:\\\n");
        assert_eq!(file.escape, '`');
        assert_eq!(file.instructions[1].args, "testfile.txt c:\\   d:\\");
        // Without it, the trailing `\` continues the line.
        let file = parse("FROM scratch\nCOPY a c:\\\nRUN x\n");
        assert_eq!(file.instructions.len(), 2);
        assert_eq!(file.instructions[1].args, "a c:RUN x");
    }

    #[test]
    fn directives_only_at_the_top() {
        let file = parse("# syntax=docker/dockerfile:1\n# escape=`\nFROM scratch\n");
        assert_eq!(file.escape, '`');
        let file = parse("FROM scratch\n# escape=`\n");
        assert_eq!(file.escape, '\\');
        let file = parse("# a comment\n# escape=`\nFROM scratch\n");
        assert_eq!(file.escape, '\\');
        let error = Dockerfile::parse("Dockerfile", "# escape=x\nFROM scratch\n").unwrap_err();
        assert_eq!(error.line, 1);
        assert!(
            error
                .to_string()
                .starts_with("Dockerfile:1: invalid escape")
        );
    }

    #[test]
    fn heredocs() {
        let file = parse(
            "RUN <<EOF\necho a\n  echo b\nEOF\nRUN <<-EOT cat >/x && <<'B' cat >/y\n\t\tone\n\tEOT\n$two\nB\nCOPY <<EOF /etc/conf\nk=$v\nEOF\n",
        );
        let run = &file.instructions[0];
        assert_eq!(run.args, "<<EOF");
        assert_eq!(run.heredocs[0].content, "echo a\n  echo b\n");
        assert!(run.heredocs[0].expand);
        let two = &file.instructions[1];
        assert_eq!(two.heredocs.len(), 2);
        assert_eq!(two.heredocs[0].content, "one\n");
        assert_eq!(two.heredocs[1].name, "B");
        assert_eq!(two.heredocs[1].content, "$two\n");
        assert!(!two.heredocs[1].expand);
        let copy = &file.instructions[2];
        assert_eq!(copy.line, 10);
        assert_eq!(copy.heredocs[0].content, "k=$v\n");
        // `<<<` is a here-string, and a quoted `<<` is text.
        let file = parse("RUN cat <<<word && echo '<<EOF'\n");
        assert!(file.instructions[0].heredocs.is_empty());
    }

    #[test]
    fn unclosed_heredoc_and_bad_keyword_name_file_and_line() {
        let error =
            Dockerfile::parse("ctx/Dockerfile", "FROM scratch\nRUN <<EOF\necho\n").unwrap_err();
        assert_eq!(
            (error.file.as_str(), error.line, error.instruction.as_str()),
            ("ctx/Dockerfile", 2, "RUN")
        );
        assert!(
            error
                .to_string()
                .starts_with("ctx/Dockerfile:2: RUN: the heredoc <<EOF")
        );
        let error = Dockerfile::parse("Dockerfile", "FROM scratch\n  \"oops\n").unwrap_err();
        assert_eq!(error.line, 2);
    }

    #[test]
    fn crlf_line_endings() {
        let file = parse("FROM scratch\r\nRUN a \\\r\n b\r\n");
        assert_eq!(file.instructions[1].args, "a  b");
    }

    proptest! {
        #[test]
        fn never_panics(text in "(?s).{0,400}") {
            let _ = Dockerfile::parse("Dockerfile", &text);
        }

        #[test]
        fn never_panics_on_dockerfile_like_text(
            lines in proptest::collection::vec(
                "(RUN|run|COPY|FROM|#|# escape=`|  |<<EOF|EOF|<<-'X'|X|\\\\|`|--from=a|\"|\t)[ a-z$\\\\`{}:\"'-]{0,12}",
                0..12,
            )
        ) {
            let _ = Dockerfile::parse("Dockerfile", &lines.join("\n"));
        }

        #[test]
        fn simple_instructions_round_trip(
            items in proptest::collection::vec(
                ("(RUN|ENV|LABEL|WORKDIR|USER|EXPOSE|CMD)", "[a-z0-9=/_.][a-z0-9=/_. ]{0,20}[a-z0-9=/_.]"),
                1..8,
            )
        ) {
            let text: String = items
                .iter()
                .map(|(keyword, args)| format!("{keyword} {args}\n"))
                .collect();
            let file = Dockerfile::parse("Dockerfile", &text).unwrap();
            prop_assert_eq!(file.instructions.len(), items.len());
            for (index, (instruction, (keyword, args))) in file.instructions.iter().zip(&items).enumerate() {
                prop_assert_eq!(&instruction.keyword, keyword);
                prop_assert_eq!(&instruction.args, args.trim());
                prop_assert_eq!(instruction.line, index + 1);
            }
        }
    }
}
