//! One workspace factory: outside `swerve-sandbox`, only `swerve_eval::workspaces::create`
//! creates workspaces. The test reads every Rust file under `crates/` and fails, naming the
//! file and line, on any other mention of `Workspace::create` or `Workspace::create_from_image`
//! (a call or a function passed by name) and on any renaming import of `Workspace` (which
//! would hide one). `swerve-sandbox`'s own tests and benchmarks make workspaces directly;
//! this file's examples of what the scan finds are skipped.

use std::path::{Path, PathBuf};

use regex::Regex;

/// The factory, relative to the repository.
const FACTORY: &str = "crates/swerve-eval/src/workspaces.rs";

/// Where workspaces may be made without the factory.
const SANDBOX: &str = "crates/swerve-sandbox/";

/// This file, whose examples of what the scan finds are not calls.
const THIS_TEST: &str = "crates/swerve-eval/tests/eval/workspace_factory.rs";

/// The repository's root.
fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            found.push(path);
        }
    }
}

/// The lines of `text` (numbered from 1) that create a workspace without the factory or
/// rename `Workspace`; line comments are not code.
fn creations(text: &str) -> Vec<(usize, String)> {
    let creation =
        Regex::new(r"\bWorkspace\s*::\s*create(_from_image)?\b|\bWorkspace\s+as\s").unwrap();
    text.lines()
        .enumerate()
        .filter_map(|(index, line)| {
            let code = line.split("//").next().unwrap_or("");
            creation
                .is_match(code)
                .then(|| (index + 1, line.trim().to_owned()))
        })
        .collect()
}

#[test]
fn only_the_factory_creates_workspaces_outside_the_sandbox() {
    let root = repository();
    let mut files = Vec::new();
    rust_files(&root.join("crates"), &mut files);
    let mut elsewhere = Vec::new();
    let mut in_factory = Vec::new();
    for file in &files {
        let relative = file
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if relative.starts_with(SANDBOX) || relative == THIS_TEST {
            continue;
        }
        for (line, code) in creations(&std::fs::read_to_string(file).unwrap()) {
            if relative == FACTORY {
                in_factory.push(code);
            } else {
                elsewhere.push(format!("{relative}:{line}: {code}"));
            }
        }
    }
    // The scan sees the factory's own two calls, so it would see a third elsewhere.
    assert_eq!(in_factory.len(), 2, "{in_factory:?}");
    assert!(
        elsewhere.is_empty(),
        "workspaces made outside swerve_eval::workspaces::create (call it instead):\n{}",
        elsewhere.join("\n")
    );
}

#[test]
fn the_scan_finds_calls_functions_passed_by_name_and_renamed_imports() {
    let text = "let a = Workspace::create(&cache, &base, &options)?;\n\
                // Workspace::create(…) in a comment is not code\n\
                bases.iter().map(|b| swerve_sandbox::Workspace :: create_from_image(c, b, o));\n\
                use swerve_sandbox::{Workspace as Made};\n\
                let b = workspaces::create(&cache, Origin::Checkout(&base), &options)?;\n\
                fn workspace(&self) -> Workspace { todo!() }\n";
    let lines: Vec<usize> = creations(text).into_iter().map(|(line, _)| line).collect();
    assert_eq!(lines, [1, 3, 4]);
}
