//! Token budgets: cutting a text to a budget and sharing one budget fairly between several
//! files, counted by any [`TokenCounter`] (swerve-core's seam: [`ApproxTokens`], about
//! four characters per token, or a model's exact tokenizer from swerve-chat).

use std::borrow::Cow;

pub use swerve_core::tokens::{ApproxTokens, TokenCounter};

/// `text` if it fits in `budget` tokens; otherwise its longest prefix that fits together
/// with a note saying how much was cut (a shorter note, or nothing, when the budget is too
/// small for that), and `true`. The result never exceeds the budget.
pub fn fit<'a>(text: &'a str, budget: usize, counter: &dyn TokenCounter) -> (Cow<'a, str>, bool) {
    if counter.count(text) <= budget {
        return (Cow::Borrowed(text), false);
    }
    let boundaries: Vec<usize> = text
        .char_indices()
        .map(|(at, _)| at)
        .chain([text.len()])
        .collect();
    let total = boundaries.len() - 1;
    let cut = |kept: usize| {
        let end = boundaries[kept];
        format!(
            "{}\n[... cut to fit the context budget: {} of {total} characters omitted ...]",
            &text[..end],
            total - kept
        )
    };
    // The largest number of characters whose cut version fits (binary search: the cut
    // text only grows with the number kept).
    let (mut low, mut high) = (0usize, total);
    while low < high {
        let mid = (low + high).div_ceil(2);
        if counter.count(&cut(mid)) <= budget {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    let fitted = cut(low);
    if counter.count(&fitted) <= budget {
        return (Cow::Owned(fitted), true);
    }
    let short = if counter.count(SHORT_NOTE) <= budget {
        SHORT_NOTE
    } else {
        ""
    };
    (Cow::Borrowed(short), true)
}

/// The note left when a budget has no room for the full one.
const SHORT_NOTE: &str = "[... cut ...]";

/// Shares `budget` between items of the given token counts: small items get all they
/// need, the rest is split evenly among the large ones.
pub fn share(sizes: &[usize], budget: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by_key(|&index| sizes[index]);
    let mut shares = vec![0; sizes.len()];
    let mut left = budget;
    for (done, &index) in order.iter().enumerate() {
        let fair = left / (sizes.len() - done);
        let given = sizes[index].min(fair);
        shares[index] = given;
        left -= given;
    }
    shares
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits_texts_to_budgets_with_a_note() {
        let (text, cut) = fit("short", 10, &ApproxTokens);
        assert_eq!((text.as_ref(), cut), ("short", false));
        let long = "x".repeat(1000);
        let (text, cut) = fit(&long, 50, &ApproxTokens);
        assert!(cut);
        assert!(ApproxTokens.count(&text) <= 50, "{text}");
        assert!(text.starts_with("xxx"));
        assert!(text.ends_with("characters omitted ...]"), "{text}");
        let kept = text.chars().take_while(|&c| c == 'x').count();
        assert!(text.contains(&format!("{} of 1000 characters omitted", 1000 - kept)));
        // Too small for the note: a short one, then nothing.
        let (text, cut) = fit(&long, 20, &ApproxTokens);
        assert!(cut);
        assert!(text.contains("\n[... cut to fit"), "{text}");
        assert_eq!(
            fit(&long, 4, &ApproxTokens),
            (Cow::Borrowed("[... cut ...]"), true)
        );
        assert_eq!(fit(&long, 1, &ApproxTokens), (Cow::Borrowed(""), true));
    }

    #[test]
    fn shares_a_budget_fairly() {
        assert_eq!(share(&[10, 500, 500], 300), vec![10, 145, 145]);
        assert_eq!(share(&[10, 20], 300), vec![10, 20]);
        assert_eq!(share(&[], 300), Vec::<usize>::new());
        assert_eq!(share(&[100, 100, 100], 0), vec![0, 0, 0]);
        let shares = share(&[7, 1000, 50, 3000], 1000);
        assert!(shares.iter().sum::<usize>() <= 1000);
        assert_eq!(shares[0], 7);
        assert_eq!(shares[2], 50);
    }
}
