//! The editor's answer: SEARCH/REPLACE blocks (SWE-Edit `LLMEditor._apply_edits`), parsed
//! with SWE-Edit's pattern and applied in memory, all or nothing, with SWE-Edit's exact
//! error texts; and the two optional matching aids of [`crate::fuzzy`].
//!
//! ```text
//! <<<<<<< SEARCH
//! exact original lines
//! =======
//! replacement lines
//! >>>>>>> REPLACE
//! ```
//!
//! A SEARCH that is empty (whitespace only) rewrites the whole file with its REPLACE and
//! must be the only block. Otherwise each block, in order, must match the text (as the
//! blocks before it left it) exactly once, newlines at the end of SEARCH and REPLACE
//! ignored; its first occurrence is replaced.

use std::fmt::Write;
use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::format::EditFormat;
use crate::fuzzy::{Nearest, nearest, reindent, whitespace_matches};
use crate::ranges::LineRange;
use crate::text::{after_think, numbered};

/// SWE-Edit's block pattern: a newline is required after `SEARCH` and after `=======`.
static BLOCK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?s)<<<<<<< SEARCH\n(.*?)=======\n(.*?)>>>>>>> REPLACE").expect("valid pattern")
});

/// One block as written: the text between the markers, newlines included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// What to find.
    pub search: String,
    /// What to put in its place.
    pub replace: String,
}

/// The blocks of an editor reply: the text after `</think>`, with `\r\n` read as `\n`.
pub fn parse_blocks(reply: &str) -> Vec<Block> {
    let answer = after_think(reply).replace("\r\n", "\n");
    BLOCK
        .captures_iter(&answer)
        .map(|block| Block {
            search: block[1].to_owned(),
            replace: block[2].to_owned(),
        })
        .collect()
}

/// The matching aids beyond SWE-Edit. Both are off by default, which is SWE-Edit's
/// behaviour; each is reported in the observation when it acts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MatchOptions {
    /// A SEARCH block found nowhere exactly is applied where it matches line by line with
    /// leading and trailing whitespace ignored, if that place is unique; its REPLACE is
    /// re-indented the way the file's lines differ from the SEARCH.
    pub whitespace_fallback: bool,
    /// A failed SEARCH block is shown with the file's most similar lines ("did you mean"),
    /// and an ambiguous one with the lines where it occurs.
    pub did_you_mean: bool,
}

/// How the editor chose to edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Find-and-replace blocks.
    Targeted,
    /// One block with an empty SEARCH: the whole file rewritten.
    Rewrite,
}

/// A block applied by the whitespace-tolerant fallback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fallback {
    /// The block's number, from 1.
    pub block: usize,
    /// The lines it replaced, in the text as the blocks before it left it.
    pub lines: LineRange,
}

/// A successful application.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The new text.
    pub text: String,
    /// Find-and-replace or rewrite.
    pub mode: Mode,
    /// How many blocks were applied.
    pub blocks: usize,
    /// The blocks the whitespace-tolerant fallback applied.
    pub fallbacks: Vec<Fallback>,
}

/// Why a reply could not be applied. Nothing is changed when it cannot.
#[derive(Debug, Clone, PartialEq)]
pub enum ApplyError {
    /// The reply holds no well-formed block.
    NoBlocks {
        /// The reply after its reasoning, shown back.
        output: String,
    },
    /// An empty SEARCH came with other blocks.
    RewriteNotAlone,
    /// A SEARCH matches nowhere.
    NotFound {
        /// The block's number, from 1, and how many blocks there were.
        block: usize,
        /// How many blocks the reply had.
        of: usize,
        /// The SEARCH text.
        search: String,
        /// The most similar lines, when `did_you_mean` is on and there are any.
        nearest: Option<Nearest>,
        /// Whether `did_you_mean` was on.
        explain: bool,
    },
    /// The reply's format is one the editor's format policy does not allow.
    FormatNotAllowed {
        /// The policy.
        format: EditFormat,
    },
    /// A SEARCH matches more than once.
    Ambiguous {
        /// The block's number, from 1.
        block: usize,
        /// How many times it matches.
        count: usize,
        /// The lines where the occurrences start, when `did_you_mean` is on.
        lines: Option<Vec<usize>>,
    },
}

/// The edit format policy applied to replies (defined in [`crate::format`]; its checks are
/// here, beside [`Applied`] and [`ApplyError`]).
impl EditFormat {
    /// Whether a reply applied in `mode` is allowed.
    pub fn allows(self, mode: Mode) -> bool {
        !matches!(
            (self, mode),
            (Self::FindReplace, Mode::Rewrite) | (Self::Rewrite, Mode::Targeted)
        )
    }

    /// `applied`, or the format error of a mode this policy does not allow.
    pub fn check(self, applied: Applied) -> Result<Applied, ApplyError> {
        match self.allows(applied.mode) {
            true => Ok(applied),
            false => Err(ApplyError::FormatNotAllowed { format: self }),
        }
    }
}

impl ApplyError {
    /// True for a reply that is not well-formed (no block, or a rewrite that is not alone),
    /// false for well-formed blocks that do not match.
    pub fn is_format_error(&self) -> bool {
        matches!(
            self,
            Self::NoBlocks { .. } | Self::RewriteNotAlone | Self::FormatNotAllowed { .. }
        )
    }

    /// The text shown: SWE-Edit's, followed by the "did you mean" note when one applies.
    pub fn message(&self) -> String {
        match self {
            Self::NoBlocks { output } => format!(
                "ERROR: LLM did not produce valid search-replace blocks. LLM output was:\n{output}"
            ),
            Self::FormatNotAllowed { format } => match format {
                EditFormat::FindReplace => "ERROR: Full rewrite mode (empty SEARCH) is not allowed: change the file with SEARCH/REPLACE blocks whose SEARCH is copied from it.".to_owned(),
                _ => "ERROR: Only a full rewrite is allowed: answer with exactly one block whose SEARCH part is empty and whose REPLACE part is the whole new file.".to_owned(),
            },
            Self::RewriteNotAlone => {
                "ERROR: Full rewrite mode (empty SEARCH) requires exactly one SEARCH/REPLACE block."
                    .to_owned()
            }
            Self::NotFound {
                block,
                of,
                search,
                nearest,
                explain,
            } => {
                let mut text = "ERROR: Could not find the search block in the file.".to_owned();
                if !explain {
                    return text;
                }
                let _ = write!(text, "\n\nSEARCH block {block} of {of} was:\n{search}\n");
                match nearest {
                    Some(found) => {
                        let last = found.first_line + found.lines.len() - 1;
                        let _ = write!(
                            text,
                            "\nDid you mean lines {}-{last} ({:.0}% similar)?\n{}",
                            found.first_line,
                            found.similarity * 100.0,
                            numbered(found.first_line, found.lines.iter().map(String::as_str))
                        );
                    }
                    None => text.push_str("\nNo lines of the file resemble it."),
                }
                text
            }
            Self::Ambiguous {
                block,
                count,
                lines,
            } => {
                let mut text = format!("ERROR: Found {count} occurrences of the search block.");
                if let Some(lines) = lines {
                    let lines: Vec<String> = lines.iter().map(usize::to_string).collect();
                    let _ = write!(
                        text,
                        "\n\nSEARCH block {block} occurs at lines {}.",
                        lines.join(", ")
                    );
                }
                text
            }
        }
    }
}

/// Applies the blocks of an editor `reply` to `text` (see the module docs); the text is not
/// touched unless every block applies.
pub fn apply(text: &str, reply: &str, options: &MatchOptions) -> Result<Applied, ApplyError> {
    let blocks = parse_blocks(reply);
    if blocks.is_empty() {
        return Err(ApplyError::NoBlocks {
            output: after_think(reply).to_owned(),
        });
    }
    if blocks.iter().any(|block| block.search.trim().is_empty()) {
        if blocks.len() > 1 {
            return Err(ApplyError::RewriteNotAlone);
        }
        let mut rewritten = blocks[0].replace.trim_end_matches('\n').to_owned();
        if text.ends_with('\n') {
            rewritten.push('\n');
        }
        return Ok(Applied {
            text: rewritten,
            mode: Mode::Rewrite,
            blocks: 1,
            fallbacks: Vec::new(),
        });
    }
    let mut current = text.to_owned();
    let mut fallbacks = Vec::new();
    for (index, block) in blocks.iter().enumerate() {
        let search = block.search.trim_end_matches('\n');
        let replace = block.replace.trim_end_matches('\n');
        let finder = memchr::memmem::Finder::new(search);
        let mut starts = finder.find_iter(current.as_bytes());
        current = match (starts.next(), starts.next()) {
            (Some(at), None) => [&current[..at], replace, &current[at + search.len()..]].concat(),
            (Some(_), Some(_)) => {
                let occurrences = || finder.find_iter(current.as_bytes());
                return Err(ApplyError::Ambiguous {
                    block: index + 1,
                    count: occurrences().count(),
                    lines: options.did_you_mean.then(|| {
                        occurrences()
                            .map(|at| current[..at].matches('\n').count() + 1)
                            .collect()
                    }),
                });
            }
            (None, _) => {
                let lines: Vec<&str> = current.split('\n').collect();
                let wanted: Vec<&str> = search.split('\n').collect();
                let found = match options.whitespace_fallback {
                    true => whitespace_matches(&lines, &wanted),
                    false => Vec::new(),
                };
                let [start] = found[..] else {
                    return Err(ApplyError::NotFound {
                        block: index + 1,
                        of: blocks.len(),
                        search: search.to_owned(),
                        nearest: options
                            .did_you_mean
                            .then(|| nearest(&lines, &wanted))
                            .flatten(),
                        explain: options.did_you_mean,
                    });
                };
                let end = start + wanted.len();
                let replaced = reindent(
                    &lines[start..end],
                    &wanted,
                    &replace.split('\n').collect::<Vec<_>>(),
                );
                fallbacks.push(Fallback {
                    block: index + 1,
                    lines: LineRange {
                        start: start + 1,
                        end,
                    },
                });
                // The matched lines' bytes, without the newline after the last one.
                let offset = |line: usize| lines[..line].iter().map(|l| l.len() + 1).sum::<usize>();
                let (from, to) = (offset(start), offset(end) - 1);
                [&current[..from], &replaced.join("\n"), &current[to..]].concat()
            }
        };
    }
    Ok(Applied {
        text: current,
        mode: Mode::Targeted,
        blocks: blocks.len(),
        fallbacks,
    })
}
