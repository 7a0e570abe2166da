//! The real default model for the tests, loaded once: SmolLM2-135M-Instruct from the models
//! directory. When it is absent the tests skip with a message naming the script that fetches
//! it, unless `SWERVE_REQUIRE_EMBEDDED_MODEL` is set (scripts/test.sh sets it after fetching,
//! so CI never skips them silently).

use std::sync::OnceLock;

use swerve_embedded::{EmbeddedModel, default_model_path};

/// The default model, or `None` (after saying why) when its file is absent.
pub fn model() -> Option<&'static EmbeddedModel> {
    static MODEL: OnceLock<Option<EmbeddedModel>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            let path = default_model_path();
            if !path.is_file() {
                if std::env::var_os("SWERVE_REQUIRE_EMBEDDED_MODEL").is_some() {
                    panic!(
                        "SWERVE_REQUIRE_EMBEDDED_MODEL is set but {} is missing: run \
                         scripts/fetch-model.sh",
                        path.display()
                    );
                }
                eprintln!(
                    "skipping: the embedded model {} is absent; run scripts/fetch-model.sh to \
                     fetch it (about 93 MB) and run these tests",
                    path.display()
                );
                return None;
            }
            Some(EmbeddedModel::load(&path).expect("the default model loads"))
        })
        .as_ref()
}

/// A runtime for calling the async `Model` seam.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime")
}
