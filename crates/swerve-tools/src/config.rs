//! [`ToolConfig`]: every knob of the native tools, with R2E-Gym's values as defaults
//! except where swerve deliberately differs (each such option says so).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Settings shared by all tools of one [`crate::Toolbox`].
///
/// Deserializes from a partial table: missing fields take their defaults.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToolConfig {
    /// R2E-Gym's `python_only` mode. When true, `file_editor view` refuses non-`.py` files,
    /// directory listings show only directories and `*.py` files, and `search` over a
    /// directory only reads `*.py` files. R2E-Gym has it on; swerve serves Rust and JS
    /// repositories too, so the default is `false`. `search` also takes a per-call
    /// `python_only` argument that overrides this.
    pub python_only: bool,
    /// Outputs of `file_editor` longer than this many characters are cut and followed by
    /// the `<response clipped><NOTE>…` text (R2E-Gym `MAX_RESPONSE_LEN` = 10000).
    pub max_response_len: usize,
    /// `file_editor view` of a `.py` file with more lines than this, and no `view_range`,
    /// shows the condensed view (function bodies elided), as R2E-Gym does at 110 lines.
    /// `None` turns the automatic condensed view off (an explicit `concise` still works).
    pub auto_concise_lines: Option<usize>,
    /// R2E-Gym runs `expandtabs()` over the whole file, `old_str` and `new_str` on every
    /// `str_replace`/`insert`, so any edit turns every tab in the file into spaces. That
    /// breaks Makefiles and Go code, so swerve keeps tabs by default (`false`); set `true`
    /// for R2E-Gym's exact matching and file contents.
    pub expand_tabs: bool,
    /// Files larger than this are not loaded by `file_editor` (nor read by `search`); the
    /// agent is told to use `grep -n`/`sed -n` instead. Default 10 MiB.
    pub max_file_bytes: u64,
    /// Whether `search_term` is a regular expression (Rust `regex` syntax, SWE-AGILE style)
    /// or a literal string (R2E-Gym, the default). A per-call `regex` argument overrides it.
    pub search_regex: bool,
    /// A directory search matching more files than this prints R2E-Gym's
    /// `More than {n} files matched …` instead of the list (R2E-Gym: 100).
    pub search_max_files: usize,
    /// Caps the lines printed by a search inside one file (R2E-Gym prints all of them).
    /// When set, extra lines are replaced by a one-line note.
    pub search_max_line_matches: Option<usize>,
    /// Timeout of one `execute_bash` command in seconds (R2E-Gym `CMD_TIMEOUT` = 120).
    pub bash_timeout_secs: u64,
    /// First words `execute_bash` refuses (R2E-Gym: `cd`, `ipython`, `jupyter`, `pip`,
    /// `nohup`; SWE-AGILE uses `git`, `ipython`, `jupyter`, `nohup`).
    pub blocked_commands: Vec<String>,
    /// The argument name the `execute_bash` schema advertises: `cmd` (R2E-Gym) or
    /// `command` (SWE-AGILE). The tool accepts both either way.
    pub bash_param: String,
    /// `execute_bash` observations longer than twice this many lines keep only the first
    /// and last this-many lines (R2E-Gym `num_lines` = 40).
    pub observation_lines: usize,
    /// The `file_editor` commands offered (all five by default). The schema's `enum` lists
    /// only these, and a call of another one gets a refusal as its observation; an empty
    /// list takes `file_editor` out of the toolbox (SWE-Edit's ablations: `docs/edit.md`).
    pub file_editor_commands: Vec<FileEditorCommand>,
    /// Which tools are offered: R2E-Gym's (`r2egym`, the default) or SWE-agent's
    /// agent-computer interface (`swe_agent`: `open`, `goto`, `scroll_up`, `scroll_down`,
    /// `create`, `search_dir`, `search_file`, `find_file`, `edit`, `submit` and any shell
    /// command), which needs `run.format = "fenced"`.
    pub toolset: Toolset,
    /// Names tools are offered under instead of swerve's, e.g. `{file_editor =
    /// "str_replace_editor", finish = "submit"}` for SWE-Edit's and SWE-World's names. The
    /// keys are `file_editor`, `search` and `finish`; the schemas carry the new name, calls
    /// of it run the tool and observations are labelled with it.
    pub rename: BTreeMap<String, String>,
}

/// The tool set of a [`crate::Toolbox`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Toolset {
    /// R2E-Gym's `file_editor`, `search`, `execute_bash` and `finish`.
    #[default]
    #[serde(rename = "r2egym")]
    R2eGym,
    /// SWE-agent's special commands and the shell, one fenced command per reply.
    #[serde(rename = "swe_agent")]
    SweAgent,
}

/// The tools [`ToolConfig::rename`] may rename.
pub const RENAMABLE: [&str; 3] = ["file_editor", "search", "finish"];

/// A `file_editor` command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileEditorCommand {
    /// Show a file with line numbers, or a directory two levels deep.
    View,
    /// Write a new file; fails if it exists.
    Create,
    /// Replace one exact, unique occurrence of a string.
    StrReplace,
    /// Insert text after a given line.
    Insert,
    /// Restore the file as it was before its last edit.
    UndoEdit,
}

impl FileEditorCommand {
    /// Every command, in R2E-Gym's order.
    pub const ALL: [Self; 5] = [
        Self::View,
        Self::Create,
        Self::StrReplace,
        Self::Insert,
        Self::UndoEdit,
    ];

    /// The command's name in calls.
    pub fn name(self) -> &'static str {
        match self {
            Self::View => "view",
            Self::Create => "create",
            Self::StrReplace => "str_replace",
            Self::Insert => "insert",
            Self::UndoEdit => "undo_edit",
        }
    }

    /// The command called `name`, if there is one.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|command| command.name() == name)
    }
}

impl Default for ToolConfig {
    fn default() -> Self {
        Self {
            python_only: false,
            max_response_len: 10_000,
            auto_concise_lines: Some(110),
            expand_tabs: false,
            max_file_bytes: 10 * 1024 * 1024,
            search_regex: false,
            search_max_files: 100,
            search_max_line_matches: None,
            bash_timeout_secs: 120,
            blocked_commands: ["cd", "ipython", "jupyter", "pip", "nohup"]
                .map(String::from)
                .to_vec(),
            bash_param: "cmd".to_owned(),
            observation_lines: 40,
            file_editor_commands: FileEditorCommand::ALL.to_vec(),
            toolset: Toolset::R2eGym,
            rename: BTreeMap::new(),
        }
    }
}

impl ToolConfig {
    /// R2E-Gym's behaviour as closely as swerve reproduces it: `python_only` and
    /// `expand_tabs` on, everything else at its default.
    pub fn r2e_gym() -> Self {
        Self {
            python_only: true,
            expand_tabs: true,
            ..Self::default()
        }
    }

    /// Whether `file_editor` is offered at all.
    pub fn offers_file_editor(&self) -> bool {
        !self.file_editor_commands.is_empty()
    }

    /// The name the tool swerve calls `native` is offered under.
    pub fn offered_name<'a>(&'a self, native: &'a str) -> &'a str {
        self.rename.get(native).map_or(native, String::as_str)
    }

    /// The tool a call of `offered` runs: the renamed tool, else `offered` itself.
    pub fn native_name<'a>(&'a self, offered: &'a str) -> &'a str {
        self.rename
            .iter()
            .find(|(_, name)| name.as_str() == offered)
            .map_or(offered, |(native, _)| native.as_str())
    }

    /// Checks [`ToolConfig::rename`]: known tools, plain new names, no two tools under one
    /// name. The error names the key (`tools.rename.KEY`).
    pub fn validate(&self) -> Result<(), String> {
        let mut offered: Vec<&str> = ["file_editor", "search", "execute_bash", "finish"]
            .into_iter()
            .filter(|native| !self.rename.contains_key(*native))
            .collect();
        for (native, name) in &self.rename {
            if !RENAMABLE.contains(&native.as_str()) {
                return Err(format!(
                    "tools.rename.{native}: only {} can be renamed",
                    RENAMABLE.join(", ")
                ));
            }
            let plain = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
            if !plain {
                return Err(format!(
                    "tools.rename.{native}: {name:?} is not a plain tool name (letters, digits, '_', '-', '.')"
                ));
            }
            if offered.contains(&name.as_str()) {
                return Err(format!(
                    "tools.rename.{native}: {name:?} is already the name of another tool"
                ));
            }
            offered.push(name);
        }
        if self.toolset == Toolset::SweAgent && !self.rename.is_empty() {
            return Err(
                "tools.rename: the swe_agent toolset keeps SWE-agent's command names".into(),
            );
        }
        Ok(())
    }
}
