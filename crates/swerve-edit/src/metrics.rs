//! Edit metrics of one trajectory, as SWE-Edit's Table 1 reports them: edit calls and how
//! they ended (format errors and match failures counted apart), file-inspection (view)
//! calls, the share of file content the viewer returned, and the main model's and the
//! subagents' calls, tokens and cost. Computed from a recorded [`Trajectory`] alone (tool
//! calls, observations, subagent records), so they work on earlier runs too; several
//! trajectories add up to an [`EditSummary`] with rates and per-trajectory figures.
//!
//! - An **edit call** is `file_editor` `create`, `str_replace` or `insert`, or `llm_editor`
//!   `create` or `edit`. `llm_editor edit` ends as its editor subagent's status says
//!   (`applied` and `unchanged` succeed); `file_editor` as its own error texts say
//!   ([`swerve_tools::edit_failure`]); `llm_editor create` by its texts. A malformed call
//!   (missing or invalid arguments) is a format error too.
//! - A **view call** is `view` of either tool, of a file or a directory.
//! - The **viewer share** is over the `llm_editor` views the viewer answered (`shown` or
//!   `nothing_relevant`): lines shown over the files' lines, re-derived from the viewer's
//!   recorded message and reply.

use serde::{Deserialize, Serialize};
use swerve_core::trajectory::{Step, SubTrajectory, Trajectory, Usage};
use swerve_tools::{EditFailure, edit_failure};

use crate::prompts::viewer_file_lines;
use crate::ranges::parse_ranges;
use crate::subagent::{EditStatus, ViewStatus};
use crate::tool::LLM_EDITOR;

/// Calls of one model role and what they used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Spend {
    /// Model calls.
    pub calls: usize,
    /// Their token counts, added up.
    pub usage: Usage,
    /// In the price table's currency (unknown costs count as 0).
    pub cost: f64,
}

impl Spend {
    fn add(&mut self, other: &Self) {
        self.calls += other.calls;
        self.usage += other.usage;
        self.cost += other.cost;
    }

    fn add_subagent(&mut self, subagent: &SubTrajectory) {
        self.calls += subagent.calls.len();
        self.usage += subagent.usage();
        self.cost += subagent.cost();
    }
}

/// How edit calls ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EditCounts {
    /// Edit calls made.
    pub calls: usize,
    /// Edits carried out (an `llm_editor` edit that changed nothing included).
    pub succeeded: usize,
    /// Malformed calls, and editor replies that were not well-formed blocks.
    pub format_errors: usize,
    /// A `str_replace` `old_str` or a SEARCH block found nowhere or more than once.
    pub match_failures: usize,
    /// Everything else: missing files, existing files for `create`, refused commands, model
    /// and write errors.
    pub other_failures: usize,
}

/// The `llm_editor` views the viewer answered, and how much of the files they showed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ViewerShare {
    /// Views answered with line ranges or with nothing relevant.
    pub views: usize,
    /// Lines shown by those views.
    pub lines_shown: usize,
    /// Lines of the files they viewed.
    pub file_lines: usize,
}

/// The edit metrics of one trajectory, or of several added up.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EditMetrics {
    /// Edit calls by how they ended.
    pub edits: EditCounts,
    /// File-inspection calls: `view` of `file_editor` or `llm_editor`.
    pub view_calls: usize,
    /// How much of the viewed files the viewer showed.
    pub viewer_share: ViewerShare,
    /// The main agent's model.
    pub main: Spend,
    /// The viewer subagent (`llm_editor` `view`).
    pub viewer: Spend,
    /// The editor subagent (`llm_editor` `edit`).
    pub editor: Spend,
}

impl EditMetrics {
    /// The metrics of `trajectory`'s steps.
    pub fn of(trajectory: &Trajectory) -> Self {
        let mut metrics = Self::default();
        for step in &trajectory.steps {
            metrics.count_step(step);
        }
        metrics
    }

    /// Adds `other` (another trajectory's metrics) to these.
    pub fn add(&mut self, other: &Self) {
        let edits = &mut self.edits;
        edits.calls += other.edits.calls;
        edits.succeeded += other.edits.succeeded;
        edits.format_errors += other.edits.format_errors;
        edits.match_failures += other.edits.match_failures;
        edits.other_failures += other.edits.other_failures;
        self.view_calls += other.view_calls;
        self.viewer_share.views += other.viewer_share.views;
        self.viewer_share.lines_shown += other.viewer_share.lines_shown;
        self.viewer_share.file_lines += other.viewer_share.file_lines;
        self.main.add(&other.main);
        self.viewer.add(&other.viewer);
        self.editor.add(&other.editor);
    }

    /// Edits that succeeded, of all edit calls (`None` without edit calls).
    pub fn edit_success_rate(&self) -> Option<f64> {
        ratio(self.edits.succeeded, self.edits.calls)
    }

    /// Lines the viewer showed, of the lines of the files it viewed (`None` without views).
    pub fn viewer_content_share(&self) -> Option<f64> {
        ratio(self.viewer_share.lines_shown, self.viewer_share.file_lines)
    }

    /// The viewer's and the editor's spend together.
    pub fn subagents(&self) -> Spend {
        let mut spend = self.viewer;
        spend.add(&self.editor);
        spend
    }

    fn count_step(&mut self, step: &Step) {
        if step.usage.is_some() || step.cost.is_some() {
            self.main.calls += 1;
        }
        self.main.usage += step.usage.unwrap_or_default();
        self.main.cost += step.cost.unwrap_or(0.0);
        for subagent in &step.subagents {
            match subagent.agent.as_str() {
                "viewer" => {
                    self.viewer.add_subagent(subagent);
                    self.count_view_share(subagent);
                }
                "editor" => self.editor.add_subagent(subagent),
                _ => {}
            }
        }
        let Some(call) = &step.tool_call else {
            return;
        };
        let command = call
            .arguments
            .get("command")
            .and_then(|value| value.as_str());
        let output = tool_output(step.observation.as_deref().unwrap_or(""), &call.name);
        // `str_replace_editor` is `file_editor` offered under SWE-Edit's name (`tools.rename`).
        let name = match call.name.as_str() {
            "str_replace_editor" => "file_editor",
            name => name,
        };
        let ended = match (name, command) {
            (_, Some("view")) if [LLM_EDITOR, "file_editor"].contains(&name) => {
                self.view_calls += 1;
                return;
            }
            ("file_editor", Some("create" | "str_replace" | "insert")) => edit_failure(output),
            (LLM_EDITOR, Some("edit")) => llm_editor_edit(step, output),
            (LLM_EDITOR, Some("create")) => llm_editor_create(output),
            _ => return,
        };
        self.edits.calls += 1;
        match ended {
            None => self.edits.succeeded += 1,
            Some(EditFailure::Format) => self.edits.format_errors += 1,
            Some(EditFailure::Match) => self.edits.match_failures += 1,
            Some(EditFailure::Other) => self.edits.other_failures += 1,
        }
    }

    /// Adds a viewer run's lines shown and file lines, when the viewer answered.
    fn count_view_share(&mut self, viewer: &SubTrajectory) {
        let shown = ViewStatus::Shown { lines: 0, total: 0 };
        let answered = [ViewStatus::NothingRelevant.name(), shown.name()];
        if !viewer
            .status
            .as_deref()
            .is_some_and(|status| answered.contains(&status))
        {
            return;
        }
        let Some(call) = viewer.calls.last() else {
            return;
        };
        let Some(total) = call
            .messages
            .iter()
            .find_map(|message| viewer_file_lines(&message.text()))
        else {
            return;
        };
        let shown = parse_ranges(&call.response_text, total)
            .map(|ranges| ranges.iter().map(|range| range.line_count()).sum())
            .unwrap_or(0);
        self.viewer_share.views += 1;
        self.viewer_share.lines_shown += shown;
        self.viewer_share.file_lines += total;
    }
}

/// How an `llm_editor edit` ended: by its editor's status, or, when the call failed before
/// the editor ran, by its text.
fn llm_editor_edit(step: &Step, output: &str) -> Option<EditFailure> {
    let editor = step
        .subagents
        .iter()
        .find(|subagent| subagent.agent == "editor");
    let Some(status) = editor.and_then(|editor| editor.status.as_deref()) else {
        return Some(argument_failure(output));
    };
    let is = |expected: EditStatus| status == expected.name();
    if is(EditStatus::Applied) || is(EditStatus::Unchanged) {
        None
    } else if is(EditStatus::FormatError) {
        Some(EditFailure::Format)
    } else if is(EditStatus::MatchFailure) {
        Some(EditFailure::Match)
    } else {
        Some(EditFailure::Other)
    }
}

/// How an `llm_editor create` ended, by its text.
fn llm_editor_create(output: &str) -> Option<EditFailure> {
    match output.starts_with("File created successfully at: ") {
        true => None,
        false => Some(argument_failure(output)),
    }
}

/// A failed `llm_editor` call: a format error when its arguments were missing or invalid.
fn argument_failure(output: &str) -> EditFailure {
    let malformed = output.starts_with("Invalid function arguments: ")
        || output.starts_with("ERROR: Parameter `");
    match malformed {
        true => EditFailure::Format,
        false => EditFailure::Other,
    }
}

/// What `tool` printed, from a step's observation (`Execution output of [tool]:\n…`, maybe
/// after a note of the loop); the whole observation when it has no such header.
fn tool_output<'a>(observation: &'a str, tool: &str) -> &'a str {
    let header = format!("Execution output of [{tool}]:\n");
    match observation.find(&header) {
        Some(at) => &observation[at + header.len()..],
        None => observation,
    }
}

/// Edit metrics over several trajectories, with their rates, for run summaries.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct EditSummary {
    /// Trajectories counted.
    pub trajectories: usize,
    /// Their metrics added up.
    pub totals: EditMetrics,
    /// Edits that succeeded, of all edit calls; `None` without edit calls.
    pub edit_success_rate: Option<f64>,
    /// Edits that failed on the reply's format, of all edit calls; `None` without edit calls.
    pub format_error_rate: Option<f64>,
    /// Edits whose SEARCH did not match, of all edit calls; `None` without edit calls.
    pub match_failure_rate: Option<f64>,
    /// Edit calls per trajectory (SWE-Edit's editor calls per task).
    pub edit_calls_per_trajectory: f64,
    /// View calls per trajectory (SWE-Edit's viewer calls per task).
    pub view_calls_per_trajectory: f64,
    /// Lines the viewer showed, of the files' lines.
    pub viewer_content_share: Option<f64>,
    /// The viewer's and the editor's spend together.
    pub subagents: Spend,
}

impl EditSummary {
    /// The summary of the trajectories whose metrics are `each`.
    pub fn of<'a>(each: impl IntoIterator<Item = &'a EditMetrics>) -> Self {
        let mut summary = Self::default();
        for metrics in each {
            summary.trajectories += 1;
            summary.totals.add(metrics);
        }
        let totals = &summary.totals;
        let per_trajectory = |count: usize| count as f64 / summary.trajectories.max(1) as f64;
        Self {
            edit_success_rate: totals.edit_success_rate(),
            format_error_rate: ratio(totals.edits.format_errors, totals.edits.calls),
            match_failure_rate: ratio(totals.edits.match_failures, totals.edits.calls),
            edit_calls_per_trajectory: per_trajectory(totals.edits.calls),
            view_calls_per_trajectory: per_trajectory(totals.view_calls),
            viewer_content_share: totals.viewer_content_share(),
            subagents: totals.subagents(),
            ..summary
        }
    }
}

fn ratio(count: usize, of: usize) -> Option<f64> {
    (of > 0).then(|| count as f64 / of as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_adds_trajectories_up_and_divides_by_their_number() {
        let one = EditMetrics {
            edits: EditCounts {
                calls: 4,
                succeeded: 2,
                format_errors: 1,
                match_failures: 1,
                other_failures: 0,
            },
            view_calls: 3,
            viewer_share: ViewerShare {
                views: 1,
                lines_shown: 10,
                file_lines: 40,
            },
            viewer: Spend {
                calls: 1,
                usage: Usage::default(),
                cost: 0.5,
            },
            editor: Spend {
                calls: 2,
                usage: Usage::default(),
                cost: 0.25,
            },
            ..EditMetrics::default()
        };
        let summary = EditSummary::of([&one, &EditMetrics::default()]);
        assert_eq!(summary.trajectories, 2);
        assert_eq!(summary.totals, one);
        assert_eq!(summary.edit_success_rate, Some(0.5));
        assert_eq!(summary.format_error_rate, Some(0.25));
        assert_eq!(summary.match_failure_rate, Some(0.25));
        assert_eq!(summary.edit_calls_per_trajectory, 2.0);
        assert_eq!(summary.view_calls_per_trajectory, 1.5);
        assert_eq!(summary.viewer_content_share, Some(0.25));
        assert_eq!((summary.subagents.calls, summary.subagents.cost), (3, 0.75));
        let empty = EditSummary::of([]);
        assert_eq!(empty.edit_success_rate, None);
        assert_eq!(empty.edit_calls_per_trajectory, 0.0);
    }
}
