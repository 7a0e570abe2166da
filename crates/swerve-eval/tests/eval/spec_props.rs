//! Properties of `swerve_eval::spec`: no test patch, task field or recipe text makes
//! resolution, directive parsing, file listing, script writing or table parsing panic.

use std::path::Path;
use std::sync::LazyLock;

use proptest::prelude::*;
use serde_json::{Value, json};
use swerve_core::task::Task;
use swerve_eval::spec::{
    DirectiveStyle, RecipeTable, eval_script, resolve_spec, test_directives, touched_files,
};

/// Text that looks like (broken) git patches: header and extended-header fragments, quoted
/// names with escapes, CRLF, multibyte characters, mixed with arbitrary text.
fn patch_text() -> impl Strategy<Value = String> {
    let fragment = prop_oneof![
        Just("diff --git a/".to_owned()),
        Just(" b/".to_owned()),
        Just("diff --git \"a/".to_owned()),
        Just("\" \"b/".to_owned()),
        Just("\\303\\251".to_owned()),
        Just("\\".to_owned()),
        Just("\"".to_owned()),
        Just("\n".to_owned()),
        Just("\r\n".to_owned()),
        Just("--- /dev/null\n".to_owned()),
        Just("+++ /dev/null\n".to_owned()),
        Just("--- a/".to_owned()),
        Just("+++ b/".to_owned()),
        Just("new file mode 100644\n".to_owned()),
        Just("rename from ".to_owned()),
        Just("rename to ".to_owned()),
        Just("copy to ".to_owned()),
        Just("@@ -1 +1 @@\n".to_owned()),
        Just("tests/test_x.py".to_owned()),
        Just("tests/__init__.py".to_owned()),
        Just(".py".to_owned()),
        Just("é€😀".to_owned()),
        Just("\t".to_owned()),
        "[ -~]{0,12}",
        any::<String>(),
    ];
    prop::collection::vec(fragment, 0..40).prop_map(|parts| parts.concat())
}

/// The shipped table, parsed once.
static SHIPPED: LazyLock<RecipeTable> = LazyLock::new(RecipeTable::shipped);

fn task(repo: &str, test_patch: String, extra: Value) -> Task {
    let mut task = Task::new("octo__demo-1", repo, "0123abc", "Fix it.");
    task.version = Some("4.2".into());
    task.test_patch = Some(test_patch);
    if let Value::Object(map) = extra {
        task.extra = map;
    }
    task
}

/// Task fields swerve reads, with values of every JSON kind.
fn extra_fields() -> impl Strategy<Value = Value> {
    let value = prop_oneof![
        Just(Value::Null),
        Just(json!(1.5)),
        Just(json!(true)),
        Just(json!("pytest -rA")),
        Just(json!("")),
        Just(json!(["a", 1])),
        Just(json!({"A": "b"})),
        Just(json!({"1": 2})),
        any::<String>().prop_map(Value::String),
    ];
    let key = prop_oneof![
        Just("test_cmd"),
        Just("log_parser"),
        Just("eval_type"),
        Just("language"),
        Just("python"),
        Just("packages"),
        Just("install"),
        Just("pre_install"),
        Just("env"),
        Just("image"),
        Just("eval_script"),
        Just("install_config"),
    ];
    prop::collection::vec((key, value), 0..6).prop_map(|pairs| {
        Value::Object(
            pairs
                .into_iter()
                .map(|(key, value)| (key.to_owned(), value))
                .collect(),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn directive_parsing_never_panics(patch in patch_text()) {
        for style in DirectiveStyle::ALL {
            let directives = test_directives(&patch, style);
            prop_assert!(directives.iter().all(|d| !d.contains('\n')));
        }
        let files = touched_files(&patch);
        prop_assert!(files.existing.iter().chain(&files.created).all(|f| !f.is_empty()));
    }

    #[test]
    fn resolve_and_script_never_panic(
        patch in patch_text(),
        repo in prop_oneof![Just("django/django"), Just("sympy/sympy"), Just("octo/demo")],
        extra in extra_fields(),
    ) {
        let task = task(repo, patch, extra);
        if let Ok(spec) = resolve_spec(&task, Path::new("/nonexistent/swerve-spec-test"), &SHIPPED) {
            let script = eval_script(&spec, &task, "/testbed", None);
            prop_assert!(script.starts_with("#!/bin/bash"));
            prop_assert!(script.contains(">>>>> Start Test Output"));
            let _ = spec.source.to_string();
        }
    }

    #[test]
    fn recipe_parsing_never_panics(text in prop::collection::vec(prop_oneof![
        Just("[[recipe]]\n".to_owned()),
        Just("repo = \"a/b\"\n".to_owned()),
        Just("versions = [\"*\"]\n".to_owned()),
        Just("env = { A = 1 }\n".to_owned()),
        Just("python = 3.1\n".to_owned()),
        Just("[recipe]\n".to_owned()),
        "[ -~]{0,20}\n?",
        any::<String>(),
    ], 0..12).prop_map(|parts| parts.concat())) {
        let _ = RecipeTable::parse(&text, "fuzz.toml").map_err(|error| error.to_string());
    }
}
