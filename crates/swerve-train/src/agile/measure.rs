//! A recorded trajectory measured for SWE-AGILE's context figures: its window, its
//! conversation and its token accounting ([`Measured`]), its panel of the context plot
//! ([`Measured::panel`]), and the compression reward recorded into its outcome
//! ([`record_reward`]).

use std::path::Path;

use anyhow::{Context, Result, bail};
use serde_json::Value;
use swerve_agent::agile::{Window, WindowPolicy};
use swerve_chat::ChatModel;
use swerve_core::trajectory::import::Loaded;
use swerve_core::trajectory::{Message, read_trajectory, write_trajectory};

use super::accounting::{TrajectoryTokens, account};
use super::plot::Panel;
use super::tokens::Tokens;
use super::window;

/// A trajectory measured: its window, its conversation and its token accounting.
pub struct Measured<'a> {
    /// The trajectory's name in messages.
    pub name: String,
    /// The window it is measured under.
    pub window: Window,
    /// The model's token counts under the trajectory's header.
    pub tokens: Tokens<'a>,
    /// Its conversation.
    pub conversation: Vec<Message>,
    /// Its token accounting.
    pub accounted: TrajectoryTokens,
}

impl<'a> Measured<'a> {
    /// Measures `loaded` under the window `given` (a drawn N uses `seed`; by default the
    /// window the run recorded). The caller warns when `accounted.template_drops_reasoning`.
    pub fn of(
        model: &'a ChatModel,
        loaded: &Loaded,
        given: Option<WindowPolicy>,
        seed: u64,
    ) -> Result<Self> {
        let name = loaded.name();
        let trajectory = &loaded.trajectory;
        let window = window::of(given, seed, &trajectory.header).context(name.clone())?;
        let tokens = Tokens::new(model, &trajectory.header).context(name.clone())?;
        let conversation = trajectory.conversation().context(name.clone())?;
        let accounted =
            account(&tokens, trajectory, &conversation, window).context(name.clone())?;
        Ok(Self {
            name,
            window,
            tokens,
            conversation,
            accounted,
        })
    }

    /// Its panel of the context plot: context tokens per step under each policy.
    pub fn panel(&self) -> Result<Panel> {
        let measured = self;
        let steps = &measured.accounted.steps;
        let current_step: Vec<usize> = (0..steps.len())
            .map(|turn| {
                let conversation = &measured.conversation;
                measured.tokens.context(conversation, Window::Last(0), turn)
            })
            .collect::<Result<_>>()
            .context(measured.name.clone())?;
        let mut series = vec![
            (
                "interleaved".to_owned(),
                steps.iter().map(|s| s.full).collect(),
            ),
            ("current step".to_owned(), current_step),
        ];
        if let Window::Last(n) = measured.window {
            let label = format!("window N = {n}");
            series.push((label, steps.iter().map(|s| s.window).collect()));
        }
        Ok(Panel {
            title: format!(
                "{} (compression {:.3})",
                measured.accounted.id, measured.accounted.compression_rate
            ),
            series,
        })
    }
}

/// Writes `record` into the outcome's `extra.compression_reward` of the swerve trajectory
/// file `path`, atomically.
pub fn record_reward(path: &Path, id: &str, record: Value) -> Result<()> {
    let mut read = read_trajectory(path).map_err(|error| {
        anyhow::anyhow!(
            "{}: --write rewrites swerve trajectory files only ({error}); convert it first \
             (swerve traj convert)",
            path.display()
        )
    })?;
    let trajectory = &mut read.trajectory;
    if trajectory.header.id != id {
        bail!(
            "{}: holds trajectory {}, not {id}",
            path.display(),
            trajectory.header.id
        );
    }
    let Some(outcome) = trajectory.outcome.as_mut() else {
        bail!("{}: no outcome record", path.display());
    };
    outcome.extra.insert("compression_reward".into(), record);
    write_trajectory(path, trajectory).map_err(|error| anyhow::anyhow!("{error}"))
}
