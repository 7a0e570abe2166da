//! Reversed patches apply with real git as `git apply --reverse` applies the original.

use std::fs;
use std::path::Path;

use swerve_eval::reverse::reverse_patch;
use swerve_testing::{repo, sh};

fn tree(dir: &Path) -> String {
    sh(dir, "git add -A >/dev/null && git write-tree")
}

#[test]
fn a_reversed_patch_undoes_edits_new_deleted_renamed_and_mode_changed_files() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    repo::init(dir);
    let body: String = (1..=40).map(|n| format!("line {n}\n")).collect();
    repo::write(
        dir,
        &[
            ("src/a.py", &body),
            ("src/gone.py", "print('bye')\n"),
            ("src/old_name.py", "x = 1\ny = 2\n"),
            ("tail.txt", "no newline at the end"),
            ("run.sh", "echo hi\n"),
        ],
    );
    repo::commit_all(dir, "clean");
    let clean = tree(dir);
    // The "bug": edits in two hunks, a new file, a deleted file, a rename with an edit, a
    // changed last line without a newline, a mode change.
    let edited = body
        .replace("line 3\n", "line three\n")
        .replace("line 35\n", "");
    fs::write(dir.join("src/a.py"), edited).unwrap();
    fs::write(dir.join("src/new.py"), "import os\n").unwrap();
    fs::remove_file(dir.join("src/gone.py")).unwrap();
    sh(dir, "git mv src/old_name.py src/new_name.py");
    fs::write(dir.join("src/new_name.py"), "x = 1\ny = 3\n").unwrap();
    fs::write(dir.join("tail.txt"), "still no newline").unwrap();
    sh(dir, "chmod +x run.sh && git add -A");
    let bug = sh(dir, "git diff --cached -M");
    assert!(
        bug.contains("rename from")
            && bug.contains("new file mode")
            && bug.contains("\\ No newline")
    );
    sh(dir, "git reset -q --hard");

    // Forward, then the reversed text: back to the clean tree.
    fs::write(dir.join("bug.diff"), &bug).unwrap();
    sh(dir, "git apply bug.diff && rm bug.diff");
    let reversed = reverse_patch(&bug).unwrap();
    fs::write(dir.join("fix.diff"), &reversed).unwrap();
    sh(dir, "git apply fix.diff && rm fix.diff");
    assert_eq!(tree(dir), clean);
    // Reversing twice gives the text back.
    assert_eq!(reverse_patch(&reversed).unwrap(), bug);
}

#[test]
fn real_patches_reverse_twice_to_themselves() {
    // SWE-smith's pandas bug and the examples' gold patches.
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut rows: Vec<serde_json::Value> = serde_json::from_str(
        &fs::read_to_string(manifest.join("tests/fixtures/swe-smith/rows.json")).unwrap(),
    )
    .unwrap();
    let examples = fs::read_to_string(manifest.join("../../examples/tasks/tasks.jsonl")).unwrap();
    rows.extend(
        examples
            .lines()
            .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap()),
    );
    let patches: Vec<String> = rows
        .iter()
        .filter_map(|row| row["patch"].as_str().map(str::to_owned))
        .collect();
    assert!(patches.len() >= 9);
    for patch in patches {
        let reversed = reverse_patch(&patch).unwrap();
        assert_ne!(reversed, patch);
        assert_eq!(reverse_patch(&reversed).unwrap(), patch);
    }
}

#[test]
fn binary_patches_are_refused() {
    let patch = "diff --git a/x.bin b/x.bin\nindex 1..2 100644\nGIT binary patch\nliteral 1\n";
    let error = reverse_patch(patch).unwrap_err().to_string();
    assert_eq!(error, "cannot reverse the patch: it holds a binary patch");
}
