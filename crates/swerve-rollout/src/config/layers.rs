//! Assembling a configuration from layers: swerve's base settings, the configuration file,
//! named presets, command-line options, and `--set key=value` overrides, in that order, each
//! overriding the ones before it.
//!
//! Layers are TOML tables merged key by key (tables merge recursively; any other value
//! replaces the earlier one). Each layer is also checked on its own, so an unknown key or a
//! wrong type is reported against the file, preset or `--set` that brought it in.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use toml::{Table, Value};

use super::Config;
use super::presets;

/// Dotted keys holding paths. In a configuration file they are relative to the file's
/// directory; on the command line, to the current directory.
const PATH_KEYS: &[&str] = &[
    "cache_dir",
    "repos_dir",
    "run.demos",
    "run.prices",
    "run.recipes",
    "run.tokenizer",
    "model.ca_cert",
    "model.path",
    "world.transition_model.ca_cert",
    "backfill.teacher.ca_cert",
    "edit.viewer.ca_cert",
    "edit.editor.ca_cert",
    "edit.judge.ca_cert",
    "edit.writer.ca_cert",
    "edit.embedder.ca_cert",
    "serve.tasks",
    "serve.out",
];

/// One source of settings.
#[derive(Debug, Clone)]
pub struct Layer {
    /// Where the settings came from, as errors name it (`swerve.toml`, `preset r2egym`,
    /// `--set agent.max_steps=30`).
    pub origin: String,
    /// The settings.
    pub table: Table,
}

impl Layer {
    /// The settings every configuration starts from, beyond each section's own defaults:
    /// the replay model, and a teacher that samples at temperature 0.1 (as SWE-AGILE's
    /// backfill does) unless told otherwise.
    pub fn base() -> Self {
        let mut model = Table::new();
        model.insert("name".into(), Value::String("replay".into()));
        let mut table = Table::new();
        table.insert("model".into(), Value::Table(model));
        insert_dotted(
            &mut table,
            "backfill.teacher.sampling.temperature",
            Value::Float(0.1),
        )
        .expect("the base settings are tables");
        Self {
            origin: "swerve's defaults".into(),
            table,
        }
    }

    /// A configuration file; its relative paths are resolved against its directory.
    pub fn file(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read config file {}", path.display()))?;
        let origin = path.display().to_string();
        check_text(&text, &origin)?;
        let mut table = parse_table(&text, &origin)?;
        resolve_paths(&mut table, path.parent().unwrap_or(Path::new(".")));
        Ok(Self { origin, table })
    }

    /// A preset: a built-in name (see `swerve config presets`) or a TOML file's path. A
    /// built-in preset written over another is that one's settings with its own merged in.
    pub fn preset(name_or_path: &str) -> Result<Self> {
        if let Some(preset) = presets::find(name_or_path) {
            let origin = format!("preset {}", preset.name);
            check_text(preset.text, &origin)?;
            let own = parse_table(preset.text, &origin)?;
            let table = match preset.base {
                Some(base) => {
                    let mut table = Self::preset(base)?.table;
                    merge_into(&mut table, &own);
                    table
                }
                None => own,
            };
            return Ok(Self { origin, table });
        }
        let path = Path::new(name_or_path);
        if name_or_path.ends_with(".toml") || path.is_file() {
            let mut layer = Self::file(path)?;
            layer.origin = format!("preset file {}", path.display());
            return Ok(layer);
        }
        bail!(
            "unknown preset {name_or_path:?}; built-in presets: {} (or give a .toml file)",
            presets::names().join(", ")
        )
    }

    /// Dotted assignments (`agent.max_steps=30`) from the command line. A value is read as
    /// TOML (a number, boolean, array, inline table or quoted string) and otherwise taken
    /// as a plain string, so `model.name=Qwen/Qwen3-8B` needs no quotes.
    pub fn assignments(origin: &str, assignments: &[(String, String)]) -> Result<Self> {
        let mut table = Table::new();
        for (key, value) in assignments {
            let value = parse_value(value);
            insert_dotted(&mut table, key, value)
                .with_context(|| format!("{origin} {key}: cannot set this key"))?;
        }
        resolve_paths(&mut table, Path::new("."));
        check_text(&render(&table)?, origin)?;
        Ok(Self {
            origin: origin.to_owned(),
            table,
        })
    }

    /// One `--set KEY=VALUE` argument.
    pub fn set(argument: &str) -> Result<Self> {
        let Some((key, value)) = argument.split_once('=') else {
            bail!("--set {argument:?}: expected KEY=VALUE, e.g. --set agent.max_steps=30");
        };
        let key = key.trim();
        if key.is_empty() {
            bail!("--set {argument:?}: the key is empty");
        }
        Self::assignments(
            &format!("--set {argument}"),
            &[(key.to_owned(), value.to_owned())],
        )
    }
}

/// `text` as a TOML string literal, for a command-line option's value.
pub fn toml_string(text: &str) -> String {
    Value::String(text.to_owned()).to_string()
}

/// The options that were given, as `(dotted key, TOML value)` assignments.
pub fn given(
    options: impl IntoIterator<Item = (&'static str, Option<String>)>,
) -> Vec<(String, String)> {
    options
        .into_iter()
        .filter_map(|(key, value)| Some((key.to_owned(), value?)))
        .collect()
}

/// The configuration `layers` add up to, later layers overriding earlier ones.
pub fn merge(layers: &[Layer]) -> Result<(Config, Table)> {
    let mut merged = Table::new();
    for layer in layers {
        merge_into(&mut merged, &layer.table);
    }
    let origins: Vec<&str> = layers.iter().map(|layer| layer.origin.as_str()).collect();
    let config = check_text(
        &render(&merged)?,
        &format!("the combined configuration ({})", origins.join(" + ")),
    )?;
    Ok((config, merged))
}

/// `text` as a configuration: its keys known and its values of the right types.
fn check_text(text: &str, origin: &str) -> Result<Config> {
    toml::from_str(text)
        .map_err(|error| anyhow::anyhow!("{origin}: {}", error.to_string().trim_end()))
}

/// `table` as TOML text.
fn render(table: &Table) -> Result<String> {
    toml::to_string(table).context("cannot render the configuration as TOML")
}

fn parse_table(text: &str, origin: &str) -> Result<Table> {
    text.parse::<Table>()
        .map_err(|error| anyhow::anyhow!("{origin}: {}", error.to_string().trim_end()))
}

/// `text` as a TOML value, or as a string when it is not one.
fn parse_value(text: &str) -> Value {
    let trimmed = text.trim();
    format!("value = {trimmed}")
        .parse::<Table>()
        .ok()
        .and_then(|mut table| table.remove("value"))
        .unwrap_or_else(|| Value::String(text.to_owned()))
}

/// Sets `key` (dotted) in `table`, creating tables on the way.
fn insert_dotted(table: &mut Table, key: &str, value: Value) -> Result<()> {
    let parts: Vec<&str> = key.split('.').map(str::trim).collect();
    if parts.iter().any(|part| part.is_empty()) {
        bail!("a dotted key may not have an empty part");
    }
    let (last, path) = parts.split_last().expect("split yields at least one part");
    let mut current = table;
    for part in path {
        let entry = current
            .entry(part.to_string())
            .or_insert_with(|| Value::Table(Table::new()));
        current = match entry {
            Value::Table(inner) => inner,
            _ => bail!("`{part}` is not a table"),
        };
    }
    current.insert(last.to_string(), value);
    Ok(())
}

/// Merges `layer` into `merged`: tables key by key, other values replaced.
fn merge_into(merged: &mut Table, layer: &Table) {
    for (key, value) in layer {
        match (merged.get_mut(key), value) {
            (Some(Value::Table(existing)), Value::Table(incoming)) => {
                merge_into(existing, incoming);
            }
            _ => {
                merged.insert(key.clone(), value.clone());
            }
        }
    }
}

/// Makes the relative paths among [`PATH_KEYS`] relative to `base`.
fn resolve_paths(table: &mut Table, base: &Path) {
    for key in PATH_KEYS {
        let mut parts = key.split('.').peekable();
        let mut current = &mut *table;
        while let Some(part) = parts.next() {
            if parts.peek().is_some() {
                match current.get_mut(part) {
                    Some(Value::Table(inner)) => current = inner,
                    _ => break,
                }
            } else if let Some(Value::String(path)) = current.get_mut(part) {
                let relative = PathBuf::from(&*path);
                if relative.is_relative() && base != Path::new(".") {
                    *path = base.join(relative).to_string_lossy().into_owned();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(argument: &str) -> Layer {
        Layer::set(argument).unwrap()
    }

    #[test]
    fn later_layers_win_and_tables_merge() {
        let (config, _) = merge(&[
            Layer::base(),
            set("agent.max_steps=10"),
            set("agent.max_cost=2.5"),
            set("agent.max_steps=30"),
        ])
        .unwrap();
        assert_eq!(config.agent.max_steps, 30);
        assert_eq!(config.agent.max_cost, Some(2.5));
        assert_eq!(config.model.model, "replay");
        assert_eq!(config.backfill.teacher.sampling.temperature, Some(0.1));
        let (config, _) = merge(&[
            Layer::base(),
            set("backfill.teacher.name=t"),
            set("backfill.teacher.sampling.max_tokens=4096"),
        ])
        .unwrap();
        let teacher = &config.backfill.teacher;
        assert_eq!(teacher.model, "t");
        assert_eq!(teacher.sampling.temperature, Some(0.1));
        assert_eq!(teacher.sampling.max_tokens, Some(4096));
    }

    #[test]
    fn values_are_toml_or_plain_strings() {
        let (config, _) = merge(&[
            Layer::base(),
            set("model.name=Qwen/Qwen3-8B"),
            set("model.sampling.stop=[\"</s>\", \"<|im_end|>\"]"),
            set("model.sampling.temperature=0.6"),
            set("model.extra_body={ top_k = 20 }"),
            set("tools.python_only=true"),
            set("run.format=\"hermes\""),
        ])
        .unwrap();
        assert_eq!(config.model.model, "Qwen/Qwen3-8B");
        assert_eq!(config.model.sampling.stop.as_ref().unwrap().len(), 2);
        assert_eq!(config.model.sampling.temperature, Some(0.6));
        assert_eq!(config.model.extra_body["top_k"], 20);
        assert!(config.tools.python_only);
        assert_eq!(config.run.format, "hermes");
    }

    #[test]
    fn errors_name_the_layer_and_key() {
        let error = Layer::set("agent.max_stesp=3").unwrap_err().to_string();
        assert!(error.contains("--set agent.max_stesp=3"), "{error}");
        assert!(error.contains("max_stesp"), "{error}");
        let error = Layer::set("agent.max_steps=many").unwrap_err().to_string();
        assert!(error.contains("max_steps"), "{error}");
        let error = Layer::set("agent.max_steps").unwrap_err().to_string();
        assert!(error.contains("KEY=VALUE"), "{error}");
        let error = Layer::set("model.name.x=1").unwrap_err().to_string();
        assert!(error.contains("name"), "{error}");
        let error = Layer::preset("no-such-preset").unwrap_err().to_string();
        assert!(error.contains("r2egym"), "{error}");
    }

    #[test]
    fn every_builtin_preset_is_a_valid_layer() {
        for name in presets::names() {
            let layer = Layer::preset(name).unwrap();
            merge(&[Layer::base(), layer]).unwrap();
        }
    }

    #[test]
    fn a_preset_over_another_keeps_what_it_does_not_change() {
        let resolve = |name| {
            merge(&[Layer::base(), Layer::preset(name).unwrap()])
                .unwrap()
                .0
        };
        let (upstream, agile) = (resolve("agile-upstream"), resolve("agile"));
        assert_eq!(upstream.agent.max_steps, 100);
        assert_eq!(agile.agent.max_steps, 60);
        assert_eq!(agile.agent.max_context_tokens, Some(65536));
        assert_eq!(upstream.agent.max_context_tokens, None);
        assert_eq!(agile.prompts, upstream.prompts);
        assert_eq!(agile.run.format, "xml_last");
        assert!(agile.agent.reasoning.required);
        let (stage1, stage2) = (resolve("rl-stage1"), resolve("rl-stage2"));
        assert_eq!((stage2.agent.max_steps, stage2.reward.max_turns), (80, 80));
        assert_eq!(stage2.reward.step_penalty, stage1.reward.step_penalty);
        assert_eq!(stage2.model.sampling, stage1.model.sampling);
        assert_eq!(stage2.run.samples, 10);
        assert_eq!(Layer::preset("agile").unwrap().origin, "preset agile");
    }

    #[test]
    fn file_paths_are_relative_to_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("swerve.toml");
        std::fs::write(
            &path,
            "cache_dir = \"cache\"\n[run]\ndemos = \"/abs/demos\"\nprices = \"prices.toml\"\n",
        )
        .unwrap();
        let (config, _) = merge(&[Layer::base(), Layer::file(&path).unwrap()]).unwrap();
        assert_eq!(config.cache_dir.unwrap(), dir.path().join("cache"));
        assert_eq!(config.run.demos, PathBuf::from("/abs/demos"));
        assert_eq!(config.run.prices.unwrap(), dir.path().join("prices.toml"));
        std::fs::write(&path, "[agent]\nmax_steps = \"x\"\n").unwrap();
        let error = Layer::file(&path).unwrap_err().to_string();
        assert!(
            error.contains("swerve.toml") && error.contains("max_steps"),
            "{error}"
        );
    }
}
