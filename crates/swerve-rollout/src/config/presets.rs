//! Built-in presets: named configuration layers for common set-ups, shipped in the binary
//! (`crates/swerve-rollout/presets/*.toml`). `swerve config presets` lists them with their
//! descriptions; `--preset NAME` applies one over the configuration file. A preset may be
//! written over another (its base), holding only what differs: `agile` over
//! `agile-upstream`, `rl-stage2` over `rl-stage1`.

/// A built-in preset.
#[derive(Debug, Clone, Copy)]
pub struct Preset {
    /// What `--preset` calls it.
    pub name: &'static str,
    /// The preset this one is written over: its settings apply first.
    pub base: Option<&'static str>,
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

/// The presets named, each read from `presets/<name>.toml`; `"name" over "base"` writes
/// one over another.
macro_rules! presets {
    ($($name:literal $(over $base:literal)?),* $(,)?) => {
        &[$(Preset {
            name: $name,
            base: presets!(@base $($base)?),
            text: include_str!(concat!("../../presets/", $name, ".toml")),
        }),*]
    };
    (@base) => { None };
    (@base $base:literal) => { Some($base) };
}

const PRESETS: &[Preset] = presets![
    "r2egym",
    "native",
    "hermes",
    "long",
    "swe-agent",
    "rl-stage1",
    "rl-stage2" over "rl-stage1",
    "agile" over "agile-upstream",
    "agile-upstream",
    "edit-baseline",
    "edit-viewer",
    "edit-editor",
    "edit-full",
    "edit-fixed" over "edit-full",
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

    #[test]
    fn every_base_is_a_preset_without_a_base_of_its_own() {
        for preset in all() {
            if let Some(base) = preset.base {
                let base = find(base).unwrap_or_else(|| panic!("{}: no {base}", preset.name));
                assert_eq!(base.base, None, "{} over {}", preset.name, base.name);
                assert!(preset.description().contains(base.name), "{}", preset.name);
            }
        }
    }
}
