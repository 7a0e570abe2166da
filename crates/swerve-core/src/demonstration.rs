//! [`Demonstration`]: a recorded solution of one task, the tool calls that fix it. `swerve
//! demo` replays them through the native tools; the `replay` model (`--model replay`)
//! answers with them as a model would.

use std::path::Path;

use serde::Deserialize;

use crate::ToolCall;

/// A recorded solution: the tool calls that fix one task (`<demos>/<instance_id>.json`).
#[derive(Debug, Deserialize)]
pub struct Demonstration {
    /// The task it solves.
    pub instance_id: String,
    /// The calls, in order.
    pub calls: Vec<ToolCall>,
}

/// Why a demonstration file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum DemonstrationError {
    /// The file cannot be read.
    #[error("cannot read {path}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a demonstration.
    #[error("{path}: not a demonstration ({{\"instance_id\", \"calls\": [...]}})")]
    Parse {
        /// The file.
        path: String,
        /// serde's message, naming the line and column.
        #[source]
        source: serde_json::Error,
    },
}

impl Demonstration {
    /// Reads a demonstration file.
    pub fn load(path: &Path) -> Result<Demonstration, DemonstrationError> {
        let name = || path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| DemonstrationError::Read {
            path: name(),
            source,
        })?;
        serde_json::from_str(&text).map_err(|source| DemonstrationError::Parse {
            path: name(),
            source,
        })
    }
}
