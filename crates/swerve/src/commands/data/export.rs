//! `swerve data export`: trainer records from trajectories ([`swerve_train::export`]),
//! rewarded with the `[reward]` settings, optionally only those reaching `--min-reward`
//! (rejection fine-tuning; turns that caused format errors are never trained). The file is
//! written once every trajectory converted, or not at all.

use std::process::ExitCode;

use anyhow::{Context, Result, anyhow, bail};
use serde_json::Value;
use swerve_chat::ChatModel;
use swerve_core::trajectory::import::{Loaded, load_all};
use swerve_train::export::{
    Repetitions, Retokenize, conversation_of, llamafactory, messages, skyrl, step_tokens, trl, verl,
};
use swerve_train::reward::{infra_failure, reward};
use swerve_train::rft::{keep, turn_weights};

use crate::cli::{ExportArgs, ExportFormatArg};
use swerve_rollout::config::Config;
use swerve_train::agile::tokens::TemplateTokens;
use swerve_train::agile::tokens::{Tokens, load_model, request_tools};
use swerve_train::reward::reward_of;
use swerve_train::rows::write_lines;

use swerve_rollout::run_dir::trajectory_files;

pub fn run(config: &Config, args: &ExportArgs) -> Result<ExitCode> {
    config.reward.validate()?;
    let model = match (&args.tokenizer, args.retokenize) {
        (Some(dir), true) => Some(load_model(dir, args.chat_template.as_deref())?),
        (Some(_), false) => {
            bail!("--tokenizer is for --retokenize: token ids come from what the model returned")
        }
        (None, _) => None,
    };
    let files = trajectory_files(args.source.run.as_deref(), &args.source.files)?;
    let mut rows: Vec<Value> = Vec::new();
    if args.max_response_len.is_some() && args.format != ExportFormatArg::Verl {
        bail!("--max-response-len is for --format verl");
    }
    let (mut exported, mut skipped, mut no_reward) = (0, 0, Vec::new());
    let mut repetitions = Repetitions::default();
    for loaded in load_all(&files)? {
        // Grading failed for the machinery's reason: no reward, neither 1 nor 0.
        if let Some(report) = loaded
            .trajectory
            .outcome
            .as_ref()
            .and_then(|outcome| outcome.eval_report.as_ref())
            && infra_failure(report)
        {
            no_reward.push(loaded.name());
            continue;
        }
        let needs_reward = matches!(args.format, ExportFormatArg::Skyrl | ExportFormatArg::Verl)
            || args.min_reward.is_some();
        let reward = if needs_reward {
            Some(reward_of(&loaded, &config.reward)?)
        } else {
            reward(&loaded.trajectory, &config.reward).ok()
        };
        if let (Some(min), Some(reward)) = (args.min_reward, &reward)
            && !keep(reward, min)
        {
            skipped += 1;
            continue;
        }
        let total = reward.as_ref().map(|reward| reward.total);
        convert(
            &loaded,
            args,
            total,
            model.as_ref(),
            &mut repetitions,
            &mut rows,
        )
        .with_context(|| loaded.path.display().to_string())?;
        exported += 1;
    }
    write_lines(&args.out, &rows)?;
    let mut filter = match args.min_reward {
        Some(min) => format!(", {skipped} below reward {min} left out"),
        None => String::new(),
    };
    if !no_reward.is_empty() {
        filter.push_str(&format!(
            ", {} left out with no reward (grading failed for the machinery's reason, \
             error_class infra: grade them again): {}",
            no_reward.len(),
            no_reward.join(", ")
        ));
    }
    println!(
        "{exported} trajectories{filter}; {} records -> {}",
        rows.len(),
        args.out.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Appends the records of one trajectory, rewarded `reward`, to `rows`.
fn convert(
    loaded: &Loaded,
    args: &ExportArgs,
    reward: Option<f64>,
    model: Option<&ChatModel>,
    repetitions: &mut Repetitions,
    rows: &mut Vec<Value>,
) -> Result<()> {
    let trajectory = &loaded.trajectory;
    let format = args.format;
    match format {
        ExportFormatArg::Skyrl | ExportFormatArg::Verl => {
            let reward = reward.context("no reward")?;
            let retokenizer = model
                .map(|model| Tokens::new(model, &trajectory.header).map(TemplateTokens))
                .transpose()?;
            let tokens = step_tokens(
                trajectory,
                retokenizer.as_ref().map(|r| r as &dyn Retokenize),
            )?;
            let retokenized = tokens.iter().filter(|step| step.retokenized).count();
            if let (Some(model), true) = (model, retokenized > 0) {
                eprintln!(
                    "warning: {}: {retokenized} of {} steps re-tokenized with the chat template \
                     of {} (no captured ids): the ids may differ from what the model saw, and \
                     they have no logprobs",
                    loaded.name(),
                    tokens.len(),
                    model.dir().display()
                );
            }
            if format == ExportFormatArg::Skyrl {
                let id = repetitions.assign(&trajectory.header);
                let records = skyrl::steps(id, &tokens, reward);
                skyrl::check(&records).map_err(|error| anyhow!("SkyRL record: {error}"))?;
                for record in &records {
                    rows.push(serde_json::to_value(record)?);
                }
            } else {
                let mut record = verl::record(trajectory, &tokens, reward)?;
                if let Some(max) = args.max_response_len {
                    record.truncate(max);
                }
                verl::check(&record).map_err(|error| anyhow!("verl record: {error}"))?;
                rows.push(serde_json::to_value(&record)?);
            }
        }
        ExportFormatArg::Trl | ExportFormatArg::Messages | ExportFormatArg::Llamafactory => {
            let conversation = conversation_of(trajectory)?;
            let weights = turn_weights(trajectory);
            let tools = request_tools(&trajectory.header.config)?;
            if format == ExportFormatArg::Trl {
                for row in trl::rows(trajectory, &conversation, &weights, tools.as_deref()) {
                    rows.push(serde_json::to_value(&row)?);
                }
            } else {
                let row =
                    messages::row(trajectory, conversation, &weights, reward, tools.as_deref());
                if format == ExportFormatArg::Llamafactory {
                    rows.push(serde_json::to_value(llamafactory::row(&row))?);
                } else {
                    rows.push(serde_json::to_value(&row)?);
                }
            }
        }
    }
    Ok(())
}
