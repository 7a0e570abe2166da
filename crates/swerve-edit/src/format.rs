//! The editor's edit format policy (`edit.format`): SWE-Edit's adaptive format, where the
//! editor chooses between find-and-replace blocks and a whole-file rewrite per task (§3.2),
//! or one of the fixed formats of its ablation (Table 5, App. E.2).
//!
//! Checking a reply against the policy ([`EditFormat::allows`], [`EditFormat::check`]) lives
//! in [`crate::blocks`] beside the replies and errors it works on, so this module imports
//! nothing from it.

use serde::{Deserialize, Serialize};

/// Which edit formats the editor is offered and may use.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EditFormat {
    /// Find-and-replace blocks or one whole-file rewrite, the editor's choice (SWE-Edit).
    #[default]
    Adaptive,
    /// Find-and-replace blocks only; a rewrite is a format error.
    FindReplace,
    /// One whole-file rewrite only; find-and-replace blocks are a format error.
    Rewrite,
}

impl EditFormat {
    /// The policy's name in configuration: `adaptive`, `find-replace`, `rewrite`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Adaptive => "adaptive",
            Self::FindReplace => "find-replace",
            Self::Rewrite => "rewrite",
        }
    }

    /// Whether this is the adaptive policy (the default).
    pub fn is_adaptive(&self) -> bool {
        *self == Self::Adaptive
    }
}
