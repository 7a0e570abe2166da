//! Viewer baselines at the library level: BM25 and a scripted LLM viewer compared on
//! hand-built instances whose figures are computed by hand (an unchanged instance skipped,
//! an unparseable viewer reply counted as a failure returning nothing), and properties:
//! ground truth, BM25 and the scores never panic on arbitrary files and queries and keep
//! their bounds.

use std::collections::BTreeSet;

use proptest::prelude::*;
use serde_json::Map;
use swerve_edit::bench::EditInstance;
use swerve_edit::bench::viewers::{
    Bm25, CompareOptions, Method, Scores, Stats, Viewer, changed_lines, compare,
};
use swerve_llm::ScriptedModel;

const CONFIG: &str = "import os\n\ndef load_config(path):\n    with open(path) as f:\n        return f.read()\n\ndef save_config(path, text):\n    open(path, \"w\").write(text)\n";

fn instance(id: &str, original: &str, target: &str, instruction: &str) -> EditInstance {
    EditInstance {
        instance_id: id.into(),
        path: format!("{id}.py"),
        original: original.into(),
        target: target.into(),
        instruction: instruction.into(),
        metadata: Map::new(),
    }
}

#[tokio::test]
async fn bm25_and_the_llm_viewer_by_hand() {
    let instances = [
        instance(
            "config",
            CONFIG,
            &CONFIG.replace(
                "    open(path, \"w\").write(text)",
                "    with open(path, \"w\") as f:\n        f.write(text)",
            ),
            "Make save_config close the file it writes",
        ),
        instance("same", "x = 1\n", "x = 1\n", "Do nothing"),
        instance("append", "a\nb\nc\nd\n", "a\nb\nc\nd\ne\n", "Append e"),
    ];
    let viewer = ScriptedModel::from_texts(["[[7, 8]]", "I cannot tell."]).with_name("viewer");
    let viewers = [Viewer::Bm25(Bm25::default()), Viewer::Llm(&viewer)];
    let options = CompareOptions {
        chunk_lines: 4,
        top: 1,
        concurrency: 1,
    };
    let (records, summary) = compare(&instances, &viewers, &options).await;

    // Order: instances, then viewers; the unchanged instance is skipped.
    let order: Vec<(&str, Method)> = records
        .iter()
        .map(|r| (r.instance_id.as_str(), r.method))
        .collect();
    assert_eq!(
        order,
        [
            ("config", Method::Bm25),
            ("config", Method::Llm),
            ("append", Method::Bm25),
            ("append", Method::Llm)
        ]
    );
    assert_eq!((summary.instances, summary.evaluated), (3, 2));
    assert_eq!(summary.skipped_ids, ["same"]);

    // config: line 8 changed; BM25's best chunk (lines 5-8) is the only one with `save`.
    let bm25 = &records[0];
    assert_eq!(bm25.relevant, [[8, 8]]);
    assert_eq!(bm25.returned, [[5, 8]]);
    assert_eq!(bm25.chunks[0].lines, [5, 8]);
    assert_eq!(bm25.status, "retrieved");
    let expected = |recall, precision, f1, reduction| {
        move |scores: &Scores| {
            let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
            assert!(close(scores.recall, recall), "{scores:?}");
            assert!(close(scores.precision, precision), "{scores:?}");
            assert!(close(scores.f1, f1), "{scores:?}");
            assert!(close(scores.context_reduction, reduction), "{scores:?}");
        }
    };
    expected(1.0, 0.25, 0.4, 0.5)(&bm25.scores);
    let llm = &records[1];
    assert_eq!(
        (llm.returned.as_slice(), llm.status.as_str()),
        ([[7, 8]].as_slice(), "shown")
    );
    expected(1.0, 0.5, 2.0 / 3.0, 0.75)(&llm.scores);
    assert_eq!(llm.model.as_deref(), Some("viewer"));
    assert!(llm.usage.is_some() && !llm.failed);

    // append: an insertion at the end counts the last line; the file is one chunk.
    assert_eq!(records[2].relevant, [[4, 4]]);
    expected(1.0, 0.25, 0.4, 0.0)(&records[2].scores);
    let failed = &records[3];
    assert!(failed.failed && failed.returned.is_empty());
    assert_eq!(failed.status, "parse_error");
    assert!(
        failed
            .error
            .as_deref()
            .unwrap()
            .starts_with("ERROR parsing LLM response"),
        "{failed:?}"
    );
    expected(0.0, 0.0, 0.0, 1.0)(&failed.scores);

    let bm25 = &summary.methods[&Method::Bm25];
    assert_eq!(bm25.failures, 0);
    assert_eq!(bm25.all.instances, 2);
    assert_eq!(bm25.all.recall, Some(1.0));
    assert_eq!(bm25.all.precision, Some(0.25));
    assert_eq!(bm25.all.context_reduction, Some(0.25));
    assert_eq!(bm25.all.micro_precision, Some(2.0 / 8.0));
    assert_eq!(bm25.short_files.instances, 2);
    assert_eq!(bm25.long_files, Stats::default());
    assert_eq!(bm25.model, None);
    let llm = &summary.methods[&Method::Llm];
    assert_eq!(llm.failures, 1);
    assert_eq!(llm.all.recall, Some(0.5));
    assert_eq!(llm.all.micro_recall, Some(0.5));
    assert_eq!(llm.all.micro_precision, Some(0.5));
    assert!((llm.all.f1.unwrap() - 1.0 / 3.0).abs() < 1e-12);
    assert_eq!(llm.all.context_reduction, Some(0.875));
    assert_eq!(summary.bm25, Some(Bm25::default()));
    assert_eq!(viewer.remaining(), 0, "one viewer call per scored instance");
}

/// Text made of code-like pieces, blank lines and odd characters.
fn text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("\n".to_owned()),
        Just("\r\n".to_owned()),
        Just("def parseJSON_file(x):".to_owned()),
        Just("    return x".to_owned()),
        Just("HTTPServer".to_owned()),
        "[a-zA-Z0-9_ .(){}]{0,12}",
        any::<String>().prop_map(|text| text.chars().take(5).collect()),
    ];
    proptest::collection::vec(piece, 0..30).prop_map(|pieces| pieces.concat())
}

proptest! {
    #[test]
    fn truth_bm25_and_scores_never_panic_and_keep_their_bounds(
        original in text(),
        target in text(),
        query in text(),
        chunk_lines in 0usize..8,
        top in 0usize..5,
        k1 in 0.0f64..3.0,
        b in 0.0f64..=1.0,
    ) {
        let lines: Vec<&str> = original.split_terminator('\n').collect();
        let relevant = changed_lines(&original, &target);
        prop_assert!(relevant.iter().all(|line| (1..=lines.len()).contains(line)));
        prop_assert_eq!(relevant.is_empty(), original.split_terminator('\n').eq(target.split_terminator('\n')) || lines.is_empty());
        let ranked = Bm25 { k1, b }.retrieve(&lines, &query, chunk_lines, top);
        prop_assert!(ranked.len() <= top);
        prop_assert!(ranked.iter().all(|chunk| chunk.score.is_finite() && chunk.score >= 0.0));
        prop_assert!(ranked.windows(2).all(|pair| pair[0].score >= pair[1].score));
        let returned: BTreeSet<usize> = ranked.iter().flat_map(|c| c.lines[0]..=c.lines[1]).collect();
        prop_assert!(returned.iter().all(|line| (1..=lines.len()).contains(line)));
        let scores = Scores::of(&relevant, &returned, lines.len());
        for figure in [scores.recall, scores.precision, scores.f1, scores.context_reduction] {
            prop_assert!((0.0..=1.0).contains(&figure), "{:?}", scores);
        }
        let stats = Stats::of([&scores, &scores]);
        prop_assert_eq!(stats.recall, Some(scores.recall));
    }
}
