//! The file sections of a context: the code a command executes (its targets read through
//! the workspace, directories expanded, here-document files taken from the command), test
//! files, and the original contents of modified files, with one token budget shared
//! fairly between the files of a section.

use serde::{Deserialize, Serialize};

use super::{ContextConfig, Sources};
use crate::reader::{SourceKind, SourceReader, glob, walk};
use crate::targets::{Target, TargetKind, Targets, resolve};
use crate::tokens::{TokenCounter, fit, share};

/// One file of a section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileText {
    /// The absolute sandbox path.
    pub path: String,
    /// The text, cut to the section's budget; `None` when there is none to show.
    pub content: Option<String>,
    /// Why there is no content, or what to know about it (cut, written by the command).
    pub remark: Option<String>,
}

/// A file found, before budgets.
struct Found {
    path: String,
    content: Result<String, String>,
    remark: Option<String>,
}

/// The files `targets` names, read through the workspace, fitted to `budget`.
pub(super) fn executed(
    targets: &Targets,
    sources: &Sources,
    config: &ContextConfig,
    budget: usize,
    notes: &mut Vec<String>,
) -> Vec<FileText> {
    let mut found: Vec<Found> = Vec::new();
    for target in &targets.targets {
        if found.len() >= config.max_files {
            notes.push(format!(
                "code: only the first {} files are shown",
                config.max_files
            ));
            break;
        }
        let limit = config.max_files - found.len();
        let paths = expand(target, targets, sources.workspace, config, limit);
        let missing = paths.is_empty();
        for path in paths {
            if found.iter().any(|file| file.path == path) {
                continue;
            }
            let written = targets.written.iter().find(|file| file.path == path);
            found.push(match written {
                Some(file) => Found {
                    path,
                    content: Ok(file.content.clone()),
                    remark: Some("written by the command itself".to_owned()),
                },
                None => Found {
                    content: sources.workspace.read(&path, config.max_file_bytes),
                    path,
                    remark: None,
                },
            });
        }
        if let [path] = target.candidates.as_slice()
            && missing
            && !target.glob
            && target.kind != TargetKind::Argument
            && sources.workspace.kind(path) == SourceKind::Missing
        {
            found.push(Found {
                path: path.clone(),
                content: Err("does not exist".to_owned()),
                remark: None,
            });
        }
    }
    fitted(found, budget, sources.counter, notes, "code")
}

/// The paths one target stands for: the first candidate that exists (a directory expanded,
/// a glob matched), or a file the command writes itself.
fn expand(
    target: &Target,
    targets: &Targets,
    reader: &dyn SourceReader,
    config: &ContextConfig,
    limit: usize,
) -> Vec<String> {
    if target.glob {
        return target
            .candidates
            .iter()
            .flat_map(|pattern| glob(reader, pattern, limit))
            .take(limit)
            .collect();
    }
    for candidate in &target.candidates {
        if targets.written.iter().any(|file| &file.path == candidate) {
            return vec![candidate.clone()];
        }
        match reader.kind(candidate) {
            SourceKind::File => return vec![candidate.clone()],
            SourceKind::Dir => {
                let keep = |name: &str| match target.kind {
                    TargetKind::Tests => is_test_file(name),
                    TargetKind::Script | TargetKind::Argument => {
                        name.rsplit_once('.').is_some_and(|(_, extension)| {
                            config.extensions.iter().any(|known| known == extension)
                        })
                    }
                };
                return walk(reader, candidate, &keep, limit);
            }
            SourceKind::Missing => {}
        }
    }
    Vec::new()
}

/// pytest's default test file names, and Django's `tests.py`.
fn is_test_file(name: &str) -> bool {
    name.ends_with(".py")
        && (name.starts_with("test_") || name.ends_with("_test.py") || name == "tests.py")
}

/// The original contents of `paths` (repository-relative) from the original checkout;
/// files the patches create have none and are left out.
pub(super) fn originals(
    paths: &[String],
    sources: &Sources,
    config: &ContextConfig,
    notes: &mut Vec<String>,
) -> Vec<FileText> {
    let root = config.sandbox_root.trim_end_matches('/');
    let mut found = Vec::new();
    for path in paths.iter().take(config.max_files) {
        let path = resolve(root, None, path);
        if sources.original.kind(&path) == SourceKind::File {
            found.push(Found {
                content: sources.original.read(&path, config.max_file_bytes),
                path,
                remark: None,
            });
        }
    }
    if paths.len() > config.max_files {
        notes.push(format!(
            "original files: only the first {} files are shown",
            config.max_files
        ));
    }
    fitted(
        found,
        config.budgets.original_files,
        sources.counter,
        notes,
        "original files",
    )
}

/// Files given as text (SWR's `test_exec_content`), fitted to `budget`.
pub(super) fn given(
    files: Vec<(String, String)>,
    budget: usize,
    counter: &dyn TokenCounter,
    notes: &mut Vec<String>,
) -> Vec<FileText> {
    let found = files
        .into_iter()
        .map(|(path, content)| Found {
            path,
            content: Ok(content),
            remark: None,
        })
        .collect();
    fitted(found, budget, counter, notes, "test files")
}

/// Shares `budget` between the files (each file's heading counts against it too).
fn fitted(
    found: Vec<Found>,
    budget: usize,
    counter: &dyn TokenCounter,
    notes: &mut Vec<String>,
    section: &str,
) -> Vec<FileText> {
    let headings: usize = found
        .iter()
        .map(|file| counter.count(&render_file(&file.path, None, Some(""))))
        .sum();
    let budget = budget.saturating_sub(headings);
    let sizes: Vec<usize> = found
        .iter()
        .map(|file| file.content.as_ref().map_or(0, |text| counter.count(text)))
        .collect();
    let shares = share(&sizes, budget);
    found
        .into_iter()
        .zip(shares)
        .map(|(file, tokens)| match file.content {
            Ok(text) => {
                let (content, cut) = fit(&text, tokens, counter);
                let mut remark = file.remark;
                if cut {
                    notes.push(format!("{section}: {} cut to {tokens} tokens", file.path));
                    remark.get_or_insert_with(|| "cut to fit the context budget".to_owned());
                }
                FileText {
                    path: file.path,
                    content: Some(content.into_owned()),
                    remark,
                }
            }
            Err(reason) => {
                notes.push(format!("{section}: {}: {reason}", file.path));
                FileText {
                    path: file.path,
                    content: None,
                    remark: Some(reason),
                }
            }
        })
        .collect()
}

/// One file as the prompt shows it: a heading, an optional remark and the fenced text.
pub(super) fn render_file(path: &str, remark: Option<&str>, content: Option<&str>) -> String {
    let mut out = format!("## {path}\n");
    if let Some(remark) = remark {
        out.push_str(&format!("({remark})\n"));
    }
    if let Some(content) = content {
        out.push_str(&fenced(language(path), content));
    }
    out
}

/// `text` in a code fence longer than any backtick run inside it.
pub(super) fn fenced(language: &str, text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest.max(2) + 1);
    let newline = if text.ends_with('\n') { "" } else { "\n" };
    format!("{fence}{language}\n{text}{newline}{fence}\n")
}

/// The fence language for a path.
fn language(path: &str) -> &'static str {
    match path.rsplit_once('.').map(|(_, extension)| extension) {
        Some("py" | "pyi") => "python",
        Some("sh" | "bash") => "bash",
        Some("diff" | "patch") => "diff",
        Some("json") => "json",
        Some("toml") => "toml",
        Some("yaml" | "yml") => "yaml",
        Some("js") => "javascript",
        Some("rst") => "rst",
        _ => "",
    }
}

impl FileText {
    /// The file as the prompt shows it.
    pub(super) fn render(&self) -> String {
        render_file(&self.path, self.remark.as_deref(), self.content.as_deref())
    }
}
