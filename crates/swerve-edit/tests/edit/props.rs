//! Properties of every parser of model output: viewer ranges, editor blocks (parsed and
//! applied, with and without the matching aids), judge verdicts and the normalizations never
//! panic on any input, and what they return keeps its promises.

use proptest::prelude::*;
use swerve_edit::bench::judge::verdict;
use swerve_edit::bench::normalize::{preserving_strings, swe_edit};
use swerve_edit::blocks::{MatchOptions, Mode, apply, parse_blocks};
use swerve_edit::ranges::{MERGE_GAP, parse_ranges};

/// Replies that look like model output: fragments of markers, JSON, fences and think tags.
fn reply() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("<<<<<<< SEARCH\n".to_owned()),
        Just("=======\n".to_owned()),
        Just(">>>>>>> REPLACE".to_owned()),
        Just("<think>".to_owned()),
        Just("</think>".to_owned()),
        Just("```json\n".to_owned()),
        Just("```".to_owned()),
        Just("[[".to_owned()),
        Just("]]".to_owned()),
        Just(", ".to_owned()),
        Just("\n".to_owned()),
        Just("\r\n".to_owned()),
        "[0-9]{1,25}",
        "-[0-9]{1,3}",
        "[a-z =()\t]{0,10}",
        any::<String>().prop_map(|text| text.chars().take(6).collect()),
    ];
    prop::collection::vec(piece, 0..24).prop_map(|pieces| pieces.concat())
}

fn file() -> impl Strategy<Value = String> {
    prop::collection::vec("[a-c ]{0,6}", 0..12).prop_map(|lines| lines.join("\n"))
}

fn options() -> impl Strategy<Value = MatchOptions> {
    (any::<bool>(), any::<bool>()).prop_map(|(whitespace_fallback, did_you_mean)| MatchOptions {
        whitespace_fallback,
        did_you_mean,
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn viewer_ranges_are_in_the_file_sorted_and_apart(reply in reply(), total in 0usize..400) {
        if let Ok(ranges) = parse_ranges(&reply, total) {
            for range in &ranges {
                prop_assert!(1 <= range.start && range.start <= range.end && range.end <= total);
            }
            for pair in ranges.windows(2) {
                prop_assert!(pair[1].start > pair[0].end + MERGE_GAP);
            }
        }
    }

    #[test]
    fn editor_replies_never_panic_and_failures_change_nothing(
        text in file(),
        reply in reply(),
        options in options(),
    ) {
        match apply(&text, &reply, &options) {
            Ok(applied) => {
                prop_assert!(!parse_blocks(&reply).is_empty());
                prop_assert_eq!(applied.blocks, parse_blocks(&reply).len());
                prop_assert!(options.whitespace_fallback || applied.fallbacks.is_empty());
            }
            Err(error) => {
                prop_assert!(error.message().starts_with("ERROR: "));
            }
        }
    }

    #[test]
    fn blocks_made_of_unique_lines_apply_like_splicing(
        lines in prop::collection::btree_set("[a-z]{1,8}", 4..30),
        cuts in prop::collection::btree_set(0usize..30, 1..4),
        replacement in "[A-Z ]{0,10}",
    ) {
        // Lines no other line contains; each block replaces one line by an uppercase one,
        // so no replacement can create or hide another block's match.
        let lines: Vec<String> = lines
            .into_iter()
            .enumerate()
            .map(|(index, word)| format!("<{index}:{word}>"))
            .collect();
        let text = format!("{}\n", lines.join("\n"));
        let cuts: Vec<usize> = cuts.into_iter().filter(|&at| at < lines.len()).collect();
        prop_assume!(!cuts.is_empty());
        let reply: String = cuts
            .iter()
            .map(|&at| format!("<<<<<<< SEARCH\n{}\n=======\n{replacement}{at}\n>>>>>>> REPLACE\n", lines[at]))
            .collect();
        let applied = apply(&text, &reply, &MatchOptions::default()).unwrap();
        let mut expected = lines.clone();
        for &at in &cuts {
            expected[at] = format!("{replacement}{at}");
        }
        prop_assert_eq!(applied.mode, Mode::Targeted);
        prop_assert_eq!(applied.text, format!("{}\n", expected.join("\n")));
    }

    #[test]
    fn judge_verdicts_and_normalizations_never_panic(
        reply in reply(),
        code in any::<String>(),
        path in prop_oneof![Just("a.py"), Just("a.rs"), Just("a.js"), Just("a.go"), Just("a.lua"), Just("a.html"), Just("a.sh"), Just("x")],
    ) {
        let _ = verdict(&reply);
        let _ = verdict(&format!("{reply}\nResult: EQUIVALENT"));
        let normalized = swe_edit(&code);
        prop_assert!(!normalized.contains("  "));
        let normalized = preserving_strings(&code, path);
        prop_assert_eq!(normalized.trim_start(), normalized.as_str());
        let _ = preserving_strings(&reply, path);
    }
}
