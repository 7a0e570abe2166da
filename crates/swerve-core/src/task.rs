//! Task instances (SWE-bench-style rows) and the files that hold them.
//!
//! A [`Task`] is one problem for an agent: a repository at a commit, an issue to fix, and
//! (for grading) the gold patch, the test patch and the tests that must flip from failing
//! to passing (`FAIL_TO_PASS`) or keep passing (`PASS_TO_PASS`). The field names are
//! SWE-bench's; rows from SWE-Gym, SWE-rebench, SWE-smith, R2E-Gym or SWE-World carry more
//! fields, which are kept in [`Task::extra`] and written back unchanged.
//!
//! Task files are a JSON array of task objects, JSON lines (one object per line), or a
//! single task object: [`load_tasks`], [`parse_tasks`], [`save_tasks`]. Loading a task and
//! saving it gives the same JSON object, key order and the spelling of test lists (list or
//! JSON-encoded string) included. Problems that do not stop loading, such as duplicate
//! instance ids, are reported by [`validate_tasks`].
//!
//! ```
//! use swerve_core::task::{parse_tasks, validate_tasks};
//!
//! let line = r#"{"instance_id":"octocat__hello-1","repo":"octocat/hello","base_commit":"7fd1a60","problem_statement":"Fix the greeting.","FAIL_TO_PASS":"[\"test_hello\"]"}"#;
//! let tasks = parse_tasks(line, "tasks.jsonl")?;
//! assert_eq!(tasks[0].fail_to_pass, ["test_hello"]);
//! assert_eq!(tasks[0].owner_and_name(), Some(("octocat", "hello")));
//! assert!(validate_tasks(&tasks).is_empty());
//! assert_eq!(serde_json::to_string(&tasks[0]).unwrap(), line);
//! # Ok::<(), swerve_core::task::TaskFileError>(())
//! ```

mod error;
mod field;
mod file;
mod image;
mod multi_swe_bench;
mod record;
mod validate;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

pub use error::{Location, TaskFileError, TaskFileErrorKind};
pub use file::{TaskFileFormat, load_tasks, parse_tasks, save_tasks, task_from_row, write_tasks};
pub use validate::{Problem, Severity, validate_tasks};

use record::Layout;

/// One task instance, as in SWE-bench's datasets.
///
/// Equality compares the data only, not how the source file spelled it.
#[derive(Debug, Clone)]
pub struct Task {
    /// Unique id, `owner__name-PR` in SWE-bench, e.g. `django__django-11099`. Required.
    pub instance_id: String,
    /// The GitHub repository, `owner/name`. Required.
    pub repo: String,
    /// The commit to check out before applying any patch. Required.
    pub base_commit: String,
    /// The gold patch (non-test files).
    pub patch: Option<String>,
    /// The patch that adds or changes the tests used for grading.
    pub test_patch: Option<String>,
    /// The issue text the agent is given. Required.
    pub problem_statement: String,
    /// Comments on the issue made before the fix.
    pub hints_text: Option<String>,
    /// When the pull request was created, as the dataset writes it.
    pub created_at: Option<String>,
    /// The repository version the environment is built for, e.g. `"4.2"`.
    pub version: Option<String>,
    /// The commit the environment (dependencies) is installed from.
    pub environment_setup_commit: Option<String>,
    /// Tests that fail before the gold patch and pass after it (JSON `FAIL_TO_PASS`).
    pub fail_to_pass: Vec<String>,
    /// Tests that pass both before and after (JSON `PASS_TO_PASS`).
    pub pass_to_pass: Vec<String>,
    /// Every other field of the record, in source order, written back unchanged.
    pub extra: Map<String, Value>,
    layout: Layout,
}

impl Task {
    /// A task with the required fields and nothing else.
    pub fn new(
        instance_id: impl Into<String>,
        repo: impl Into<String>,
        base_commit: impl Into<String>,
        problem_statement: impl Into<String>,
    ) -> Self {
        Self {
            instance_id: instance_id.into(),
            repo: repo.into(),
            base_commit: base_commit.into(),
            patch: None,
            test_patch: None,
            problem_statement: problem_statement.into(),
            hints_text: None,
            created_at: None,
            version: None,
            environment_setup_commit: None,
            fail_to_pass: Vec::new(),
            pass_to_pass: Vec::new(),
            extra: Map::new(),
            layout: Layout::canonical(),
        }
    }

    /// `repo` split into owner and name, if it has the form `owner/name`.
    pub fn owner_and_name(&self) -> Option<(&str, &str)> {
        let (owner, name) = self.repo.split_once('/')?;
        let valid = !owner.is_empty() && !name.is_empty() && !name.contains('/');
        valid.then_some((owner, name))
    }

    /// The container image the row names: `image`, else `docker_image` (R2E-Gym,
    /// SWE-rebench, SWE-Gym), else `image_name` (SWE-smith). A task with an image runs in
    /// it; its `base_commit` may be empty (the repository's `HEAD` in the image).
    pub fn image(&self) -> Option<&str> {
        image::IMAGE_FIELDS
            .into_iter()
            .find_map(|key| self.extra.get(key)?.as_str())
            .filter(|name| !name.trim().is_empty())
    }

    /// A local clone of the repository, from the extra field `local_repo_path`
    /// (SWE-World) or else `repo_path`, when it is a string.
    pub fn local_repo_path(&self) -> Option<&str> {
        ["local_repo_path", "repo_path"]
            .into_iter()
            .find_map(|key| self.extra.get(key)?.as_str())
    }
}

impl PartialEq for Task {
    fn eq(&self, other: &Self) -> bool {
        self.instance_id == other.instance_id
            && self.repo == other.repo
            && self.base_commit == other.base_commit
            && self.patch == other.patch
            && self.test_patch == other.test_patch
            && self.problem_statement == other.problem_statement
            && self.hints_text == other.hints_text
            && self.created_at == other.created_at
            && self.version == other.version
            && self.environment_setup_commit == other.environment_setup_commit
            && self.fail_to_pass == other.fail_to_pass
            && self.pass_to_pass == other.pass_to_pass
            && self.extra == other.extra
    }
}

impl Eq for Task {}

/// Serializes as [`Task::to_json`].
impl Serialize for Task {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(serializer)
    }
}

/// Deserializes from a JSON object with the same rules as the task-file loaders.
impl<'de> Deserialize<'de> for Task {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let object = Map::deserialize(deserializer)?;
        Task::from_object(object).map_err(serde::de::Error::custom)
    }
}
