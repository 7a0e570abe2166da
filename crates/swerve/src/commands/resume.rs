//! Output directories that commands resume in (`swerve run`, `swerve data backfill`): the
//! resolved configuration is saved as `config.toml`, and resuming with settings that change
//! results is refused, so one directory never mixes two set-ups.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result, bail};
use swerve_core::atomic::write_atomically;

use crate::config::Config;

/// Creates `out` and its `subdirs`, and writes `config` to `out/config.toml` after
/// checking that the settings at the dotted `result_keys` are those of the configuration
/// already there, unless `redo` starts the directory over; `redo_what` says what `--redo`
/// does, for the refusal.
pub fn prepare(
    out: &Path,
    subdirs: &[&str],
    config: &Config,
    redo: bool,
    result_keys: &[&str],
    redo_what: &str,
) -> Result<()> {
    for dir in subdirs.iter().map(|subdir| out.join(subdir)) {
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let path = out.join("config.toml");
    let text = config.to_toml()?;
    if !redo && let Ok(saved) = std::fs::read_to_string(&path) {
        let saved: toml::Table = saved
            .parse()
            .with_context(|| format!("{}: not a configuration file", path.display()))?;
        let current: toml::Table = text.parse()?;
        let changed: Vec<&str> = result_keys
            .iter()
            .copied()
            .filter(|key| lookup(&saved, key) != lookup(&current, key))
            .collect();
        if !changed.is_empty() {
            bail!(
                "{} was run with different settings ({}); resuming would mix two set-ups in one \
                 directory. Use a new --out, or --redo to {redo_what} with the new settings",
                out.display(),
                changed.join(", ")
            );
        }
    }
    write_atomically(&path, |file| file.write_all(text.as_bytes()))
        .with_context(|| format!("cannot write {}", path.display()))
}

/// The value at dotted `key` in `table`.
fn lookup<'a>(table: &'a toml::Table, key: &str) -> Option<&'a toml::Value> {
    let mut parts = key.split('.');
    let mut value = table.get(parts.next()?)?;
    for part in parts {
        value = value.as_table()?.get(part)?;
    }
    Some(value)
}
