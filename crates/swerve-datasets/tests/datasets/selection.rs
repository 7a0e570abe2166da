//! `--filter`, `--shuffle` and `--slice` over real rows.

use swerve_datasets::{Selection, load_file};

use crate::fixture;

fn ids(tasks: &[swerve_core::Task]) -> Vec<&str> {
    tasks.iter().map(|task| task.instance_id.as_str()).collect()
}

fn verified() -> Vec<swerve_core::Task> {
    load_file(
        &fixture("hub").join("princeton-nlp/SWE-bench_Verified/data/test-00000-of-00001.parquet"),
    )
    .unwrap()
}

#[test]
fn slice_filter_and_shuffle_pick_as_mini_swe_agent_does() {
    let all = verified();
    let first_five = Selection::new(None, None, Some("0:5"))
        .unwrap()
        .apply(all.clone());
    assert_eq!(ids(&first_five), ids(&all[..5]));
    // `re.match`: anchored at the start, not at the end.
    let django = Selection::new(Some("django"), None, None)
        .unwrap()
        .apply(all.clone());
    assert!(!django.is_empty());
    assert!(
        django
            .iter()
            .all(|task| task.instance_id.starts_with("django__"))
    );
    let none = Selection::new(Some("16255"), None, None)
        .unwrap()
        .apply(all.clone());
    assert!(none.is_empty());
    // A seed gives one order whatever the input order; another seed another order.
    let shuffled = Selection::new(None, Some(42), None)
        .unwrap()
        .apply(all.clone());
    let mut reversed = all.clone();
    reversed.reverse();
    assert_eq!(
        ids(&Selection::new(None, Some(42), None)
            .unwrap()
            .apply(reversed)),
        ids(&shuffled)
    );
    assert_ne!(ids(&shuffled), ids(&all));
    assert_ne!(
        ids(&Selection::new(None, Some(7), None)
            .unwrap()
            .apply(all.clone())),
        ids(&shuffled)
    );
    let mut sorted = ids(&shuffled);
    sorted.sort_unstable();
    let mut expected = ids(&all);
    expected.sort_unstable();
    assert_eq!(sorted, expected);
    // Shuffle, filter, then slice.
    let picked = Selection::new(Some("django|sympy"), Some(42), Some("-2:"))
        .unwrap()
        .apply(all.clone());
    let filtered: Vec<_> = shuffled
        .iter()
        .filter(|task| {
            task.instance_id.starts_with("django") || task.instance_id.starts_with("sympy")
        })
        .collect();
    let tail: Vec<&str> = filtered[filtered.len().saturating_sub(2)..]
        .iter()
        .map(|task| task.instance_id.as_str())
        .collect();
    assert_eq!(ids(&picked), tail);
}

#[test]
fn a_bad_filter_names_the_option() {
    let message = Selection::new(Some("(unclosed"), None, None)
        .unwrap_err()
        .to_string();
    assert!(
        message.starts_with("--filter \"(unclosed\": not a regular expression"),
        "{message}"
    );
}
