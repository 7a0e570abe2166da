//! `swerve view --export DIR`: the pages as static files to share or attach to a report,
//! opened from disk (`file://`) or any static file server.
//!
//! `DIR` gets `index.html`, `app.js`, `app.css` and `data/`, with one script per API answer
//! (`data/index.js`, `data/run-<n>.js`, `data/traj-<hex of the key>.js`), each a call
//! `swerveData(name, value)` the page loads with a `<script>` element: browsers refuse
//! `fetch` of `file://` addresses but load scripts. Everything is written into a fresh
//! directory beside `DIR` and renamed into place at the end, so `DIR` is never half
//! written.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Serialize;

use crate::assets;
use crate::catalog::{Catalog, Key};
use crate::{run, trajectory};

/// What the served page says about where its data comes from.
const API_MODE: &str = r#"<meta name="swerve-data" content="api">"#;
/// The same in an export: data scripts, under a policy that allows only files beside the
/// page.
const EXPORT_MODE: &str = r#"<meta name="swerve-data" content="export">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'">"#;

/// What an export wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exported {
    /// Runs.
    pub runs: usize,
    /// Trajectory pages.
    pub trajectories: usize,
}

/// Writes the pages of `catalog` to `out`, which must not exist or be empty.
pub fn export(catalog: &Catalog, out: &Path) -> Result<Exported> {
    if std::fs::read_dir(out).is_ok_and(|mut entries| entries.next().is_some()) {
        bail!(
            "{} exists and is not empty\nhint: give a new directory to --export",
            out.display()
        );
    }
    let staging = staging_dir(out)?;
    let written = write_all(catalog, &staging).and_then(|exported| {
        if out.is_dir() {
            std::fs::remove_dir(out)
                .with_context(|| format!("cannot replace {}", out.display()))?;
        }
        std::fs::rename(&staging, out)
            .with_context(|| format!("cannot move the export into {}", out.display()))?;
        Ok(exported)
    });
    if written.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    written
}

/// A fresh directory beside `out`.
fn staging_dir(out: &Path) -> Result<PathBuf> {
    let name = out
        .file_name()
        .with_context(|| format!("{}: not a directory name", out.display()))?;
    let parent = out
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)
        .with_context(|| format!("cannot create {}", parent.display()))?;
    let staging = parent.join(format!(
        ".{}.partial-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(staging.join("data"))
        .with_context(|| format!("cannot create {}", staging.display()))?;
    Ok(staging)
}

fn write_all(catalog: &Catalog, dir: &Path) -> Result<Exported> {
    write(
        dir,
        "index.html",
        &assets::INDEX_HTML.replace(API_MODE, EXPORT_MODE),
    )?;
    write(dir, "app.js", assets::APP_JS)?;
    write(dir, "app.css", assets::APP_CSS)?;
    let index = run::index(catalog);
    write_data(dir, "index", &index)?;
    let mut keys: Vec<String> = index
        .files
        .iter()
        .flat_map(|file| file.rows.iter().map(|row| row.key.clone()))
        .collect();
    for at in 0..catalog.runs.len() {
        if let Some(page) = run::run(catalog, at) {
            keys.extend(page.rows.iter().map(|row| row.key.clone()));
            write_data(dir, &format!("run-{at}"), &page)?;
        }
    }
    let mut trajectories = 0;
    for key in keys {
        let Some(parsed) = Key::parse(&key) else {
            continue;
        };
        // An unreadable file has no page; its row already says why.
        if let Ok(page) = trajectory::load(catalog, &parsed) {
            write_data(dir, &format!("traj-{}", hex(&key)), &page)?;
            trajectories += 1;
        }
    }
    Ok(Exported {
        runs: catalog.runs.len(),
        trajectories,
    })
}

/// Lowercase hexadecimal of `text`'s UTF-8 bytes (the page computes the same).
fn hex(text: &str) -> String {
    text.bytes().map(|byte| format!("{byte:02x}")).collect()
}

fn write_data(dir: &Path, name: &str, value: &impl Serialize) -> Result<()> {
    let json = serde_json::to_string(value)?;
    let name_json = serde_json::to_string(name)?;
    write(
        dir,
        &format!("data/{name}.js"),
        &format!("swerveData({name_json}, {json});\n"),
    )
}

fn write(dir: &Path, name: &str, text: &str) -> Result<()> {
    let path = dir.join(name);
    std::fs::File::create(&path)
        .and_then(|mut file| file.write_all(text.as_bytes()))
        .with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exported_page_loads_data_scripts() {
        assert!(assets::INDEX_HTML.contains(API_MODE));
        assert_eq!(hex("r0:a"), "72303a61");
    }

    #[test]
    fn a_non_empty_directory_is_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("run/trajectories")).unwrap();
        let catalog = Catalog::new(&[dir.path().join("run")]).unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join("keep.txt"), "mine").unwrap();
        let error = export(&catalog, &out).unwrap_err();
        assert!(error.to_string().contains("not empty"));
        assert_eq!(
            std::fs::read_to_string(out.join("keep.txt")).unwrap(),
            "mine"
        );
        let fresh = dir.path().join("fresh");
        assert_eq!(
            export(&catalog, &fresh).unwrap(),
            Exported {
                runs: 1,
                trajectories: 0
            }
        );
        assert!(fresh.join("data/run-0.js").is_file());
        assert!(!std::fs::read_dir(dir.path()).unwrap().any(|entry| {
            entry
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains("partial")
        }));
    }
}
