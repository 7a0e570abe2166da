//! Built-in presets: named configuration layers for common set-ups, shipped in the binary
//! (`crates/swerve/presets/*.toml`). `swerve config presets` lists them with their
//! descriptions; `--preset NAME` applies one over the configuration file.

/// A built-in preset.
#[derive(Debug, Clone, Copy)]
pub struct Preset {
    /// What `--preset` calls it.
    pub name: &'static str,
    /// The TOML layer; its leading comment describes it.
    pub text: &'static str,
}

impl Preset {
    /// The preset's leading comment, without the `#` markers.
    pub fn description(&self) -> String {
        self.text
            .lines()
            .take_while(|line| line.starts_with('#'))
            .map(|line| line.trim_start_matches('#').trim())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The presets named, each read from `presets/<name>.toml`.
macro_rules! presets {
    ($($name:literal),* $(,)?) => {
        &[$(Preset {
            name: $name,
            text: include_str!(concat!("../../presets/", $name, ".toml")),
        }),*]
    };
}

const PRESETS: &[Preset] = presets![
    "r2egym",
    "native",
    "hermes",
    "long",
    "agile",
    "edit-baseline",
    "edit-viewer",
    "edit-editor",
    "edit-full",
];

/// Every built-in preset.
pub fn all() -> &'static [Preset] {
    PRESETS
}

/// The names of the built-in presets.
pub fn names() -> Vec<&'static str> {
    PRESETS.iter().map(|preset| preset.name).collect()
}

/// The built-in preset called `name`.
pub fn find(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|preset| preset.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_describes_itself() {
        for preset in all() {
            assert!(preset.description().len() > 40, "{}", preset.name);
        }
    }
}
