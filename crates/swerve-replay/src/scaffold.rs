//! Which agent scaffold recorded a trajectory, and how that scaffold executed actions: the
//! shell semantics (a fresh `bash` per action, or one persistent session), its timeout and
//! environment variables, the directory its agent saw the repository in, and the tool
//! settings its file tools need.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use swerve_core::trajectory::Trajectory;
use swerve_tools::{ToolConfig, Toolset};

/// The scaffold a trajectory comes from (its importer's `imported_from.format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scaffold {
    /// swerve's own trajectories: every call through swerve's tools, as recorded.
    Swerve,
    /// mini-swe-agent: each action a fresh `bash` subprocess in the repository directory,
    /// stdout and stderr merged, nothing carried over.
    MiniSweAgent,
    /// SWE-agent: one persistent shell session (cwd and exported variables carry over) plus
    /// its special commands (`open`, `edit`, `create`, `search_dir`…).
    SweAgent,
    /// R2E-Gym: `execute_bash` in a fresh shell, `file_editor`/`str_replace_editor`,
    /// `search`, `finish`.
    R2eGym,
    /// OpenHands CodeAct: `execute_bash` in a persistent session, `str_replace_editor`,
    /// `think`, `finish`.
    OpenHands,
}

impl Scaffold {
    /// The scaffold of `trajectory`, from its header's `imported_from.format`
    /// (no such field: swerve's own). `None` for a format replay cannot execute (SWE-Dev
    /// conversations carry no environment to replay in).
    pub fn of(trajectory: &Trajectory) -> Option<Self> {
        let format = trajectory
            .header
            .extra
            .get("imported_from")
            .and_then(|source| source.get("format"))
            .and_then(Value::as_str);
        match format {
            None => Some(Self::Swerve),
            Some("mini-swe-agent") => Some(Self::MiniSweAgent),
            Some("swe-agent") => Some(Self::SweAgent),
            Some("r2e-gym") => Some(Self::R2eGym),
            Some("openhands") => Some(Self::OpenHands),
            Some(_) => None,
        }
    }

    /// The scaffold's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Swerve => "swerve",
            Self::MiniSweAgent => "mini-swe-agent",
            Self::SweAgent => "swe-agent",
            Self::R2eGym => "r2e-gym",
            Self::OpenHands => "openhands",
        }
    }

    /// How `trajectory` (of this scaffold) had its actions executed, from its recorded
    /// configuration where the scaffold records it, else the scaffold's defaults.
    pub fn semantics(self, trajectory: &Trajectory) -> Semantics {
        let header_config = &trajectory.header.config;
        match self {
            Self::MiniSweAgent => {
                let environment = header_config.get("environment");
                let timeout_secs = environment
                    .and_then(|env| env.get("timeout"))
                    .and_then(Value::as_u64)
                    .unwrap_or(60);
                let mut env: BTreeMap<String, String> = environment
                    .and_then(|env| env.get("env"))
                    .and_then(Value::as_object)
                    .map(|vars| {
                        vars.iter()
                            .filter_map(|(key, value)| {
                                Some((key.clone(), value.as_str()?.to_owned()))
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                if let Some(digits) = trajectory
                    .outcome
                    .as_ref()
                    .and_then(|outcome| recorded_abbrev(&outcome.patch))
                {
                    env.extend(git_abbrev(digits));
                }
                let root = environment
                    .and_then(|env| env.get("cwd"))
                    .and_then(Value::as_str)
                    .unwrap_or("/testbed")
                    .to_owned();
                Semantics {
                    session: Session::FreshProcess,
                    merge_stderr: true,
                    timeout_secs,
                    env,
                    unset: container_unset(),
                    recorded_root: Some(root),
                }
            }
            Self::SweAgent => Semantics {
                session: Session::Persistent,
                merge_stderr: true,
                timeout_secs: 25,
                env: BTreeMap::new(),
                unset: container_unset(),
                recorded_root: swe_agent_root(trajectory),
            },
            Self::OpenHands => Semantics {
                session: Session::Persistent,
                merge_stderr: true,
                timeout_secs: 120,
                env: BTreeMap::new(),
                unset: container_unset(),
                recorded_root: openhands_root(trajectory),
            },
            Self::R2eGym => Semantics {
                session: Session::FreshProcess,
                merge_stderr: false,
                timeout_secs: 90,
                env: BTreeMap::new(),
                unset: container_unset(),
                recorded_root: Some("/testbed".to_owned()),
            },
            Self::Swerve => Semantics {
                session: Session::Native,
                merge_stderr: false,
                timeout_secs: 0,
                env: BTreeMap::new(),
                unset: Vec::new(),
                recorded_root: None,
            },
        }
    }

    /// The tool settings the replay runs this scaffold's calls with: `base` (the run's
    /// settings) for swerve's own trajectories, which recorded them; for the others, the
    /// toolset their calls name, nothing blocked (a replay runs what was recorded) and the
    /// scaffold's timeout.
    pub fn tool_config(self, base: &ToolConfig, semantics: &Semantics) -> ToolConfig {
        if self == Self::Swerve {
            return base.clone();
        }
        let mut config = ToolConfig::r2e_gym();
        config.blocked_commands.clear();
        config.bash_timeout_secs = semantics.timeout_secs;
        match self {
            Self::SweAgent => config.toolset = Toolset::SweAgent,
            Self::R2eGym | Self::OpenHands => {
                config
                    .rename
                    .insert("file_editor".into(), "str_replace_editor".into());
            }
            Self::MiniSweAgent | Self::Swerve => {}
        }
        config
    }
}

/// How a scaffold runs shell actions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Semantics {
    /// Fresh process per action, or one session.
    pub session: Session,
    /// Standard error interleaved into standard output (as one pipe), as the scaffold shows it.
    pub merge_stderr: bool,
    /// Seconds before an action is killed (0: the run's tool settings decide).
    pub timeout_secs: u64,
    /// Variables the scaffold set for every action.
    pub env: BTreeMap<String, String>,
    /// Variables swerve's sandbox sets that the scaffold's environment did not have
    /// (`PYTHONDONTWRITEBYTECODE`: the official images cache bytecode, so compile-time
    /// warnings show once, not at every import).
    pub unset: Vec<String>,
    /// The directory the recorded agent saw the repository in (`/testbed` in SWE-bench
    /// images), rewritten to the replay's mount point in actions and recorded outputs.
    pub recorded_root: Option<String>,
}

/// Whether shell state carries over between actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Session {
    /// As swerve's tools run commands: `/bin/sh -c` at the repository root.
    Native,
    /// Each action a fresh `bash -c` in the repository root.
    FreshProcess,
    /// One shell session: the working directory and exported variables of an action are
    /// those the previous action left.
    Persistent,
}

/// How many hex digits the recorded repository's git abbreviated object names to, read from
/// the `index <old>..<new>` lines of a recorded diff. Git sizes abbreviations by the number
/// of objects in the repository; the official images' clones hold fewer objects than a full
/// checkout, so their diffs and logs show shorter names.
pub fn recorded_abbrev(diff: &str) -> Option<usize> {
    diff.lines().find_map(|line| {
        let names = line.strip_prefix("index ")?.split(' ').next()?;
        let (old, new) = names.split_once("..")?;
        let hex = |name: &str| name.len() >= 4 && name.bytes().all(|b| b.is_ascii_hexdigit());
        (hex(old) && hex(new) && old.len() == new.len()).then_some(old.len())
    })
}

/// The variables that make git abbreviate object names to `digits` hex digits
/// (`core.abbrev`, through git's `GIT_CONFIG_COUNT` environment configuration).
fn git_abbrev(digits: usize) -> [(String, String); 3] {
    [
        ("GIT_CONFIG_COUNT".to_owned(), "1".to_owned()),
        ("GIT_CONFIG_KEY_0".to_owned(), "core.abbrev".to_owned()),
        ("GIT_CONFIG_VALUE_0".to_owned(), digits.to_string()),
    ]
}

/// What the containers of the foreign scaffolds leave unset that swerve's sandbox sets.
fn container_unset() -> Vec<String> {
    vec!["PYTHONDONTWRITEBYTECODE".to_owned()]
}

/// SWE-agent's working directory, from the first step's recorded `state`.
fn swe_agent_root(trajectory: &Trajectory) -> Option<String> {
    trajectory.steps.iter().find_map(|step| {
        let state = step.extra.get("state")?;
        let state = match state {
            Value::String(text) => serde_json::from_str::<Value>(text).ok()?,
            other => other.clone(),
        };
        state
            .get("working_dir")
            .and_then(Value::as_str)
            .map(str::to_owned)
    })
}

/// OpenHands' repository directory (`/workspace/<name>`), from the first action naming one.
fn openhands_root(trajectory: &Trajectory) -> Option<String> {
    let pattern = regex::Regex::new(r"/workspace/[A-Za-z0-9_.\-]+").ok()?;
    trajectory.steps.iter().find_map(|step| {
        let call = serde_json::to_string(step.tool_call.as_ref()?).ok()?;
        pattern.find(&call).map(|found| found.as_str().to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recorded_abbreviation_is_read_from_index_lines() {
        let diff = "diff --git a/x b/x\nindex 206ff4ad4..4bb5faeb1 100644\n--- a/x\n";
        assert_eq!(recorded_abbrev(diff), Some(9));
        assert_eq!(
            recorded_abbrev("new file mode 100644\nindex 0000000..91a2b3c\n"),
            Some(7)
        );
        assert_eq!(recorded_abbrev("no diff here"), None);
        assert_eq!(recorded_abbrev("index zz..yy 100644"), None);
    }
}
