//! Hints: the next step a person can take after an error, printed on its own `hint:` line.
//!
//! The convention is in the message text, so it needs no type of its own and survives every
//! wrapper (`anyhow` contexts, `#[error(transparent)]`, a `String` error): an error that knows
//! what to do next ends its message with one or more lines starting [`PREFIX`], e.g.
//!
//! ```text
//! #[error("image {0} is not in the image store\nhint: `swerve images pull {0}` fetches it")]
//! ```
//!
//! Shown on its own (`{error}`), such an error already prints its hint on a line of its own.
//! [`report`] prints a whole chain of causes as the CLI does, `error: outer: cause: …`, with
//! every hint of the chain moved after it, so a hint from an inner cause never ends up between
//! two messages. A hint is only for a step that exists: a command to run, a setting to change,
//! a flag to pass; what went wrong stays in the message.

use std::error::Error;

/// What starts a hint line in an error's message.
pub const PREFIX: &str = "hint: ";

/// Splits one error message into its text and its hints (each without [`PREFIX`]).
pub fn split(message: &str) -> (&str, Vec<&str>) {
    let marker = format!("\n{PREFIX}");
    match message.find(&marker) {
        None => (message, Vec::new()),
        Some(at) => {
            let hints = message[at + 1..]
                .split('\n')
                .map(|line| line.strip_prefix(PREFIX).unwrap_or(line))
                .collect();
            (&message[..at], hints)
        }
    }
}

/// `error` and its causes as one report: `error: ` and [`chain`]. Without hints, it is
/// exactly `format!("error: {error:#}")` of an `anyhow::Error`.
pub fn report(error: &(dyn Error + 'static)) -> String {
    format!("error: {}", chain(error))
}

/// `error` and its causes as one message: the messages joined by `: ` (as `anyhow` prints
/// `{:#}`), then one `hint: …` line per distinct hint anywhere in the chain, in order. A
/// cause whose message the text already ends with (an error that quotes its source and also
/// returns it as `source()`) is not repeated. For messages kept rather than printed (a failed
/// rollout's error in `summary.json` and its log), where `{:#}` would repeat such a cause
/// with its hint and put hints between messages.
pub fn chain(error: &(dyn Error + 'static)) -> String {
    let mut text = String::new();
    let mut hints: Vec<String> = Vec::new();
    let mut next = Some(error);
    let mut first = true;
    while let Some(cause) = next {
        let message = cause.to_string();
        let (message, found) = split(&message);
        if first {
            text.push_str(message);
        } else if !text.ends_with(message) {
            text.push_str(": ");
            text.push_str(message);
        }
        for hint in found {
            if !hints.iter().any(|seen| seen == hint) {
                hints.push(hint.to_owned());
            }
        }
        first = false;
        next = cause.source();
    }
    for hint in hints {
        text.push('\n');
        text.push_str(PREFIX);
        text.push_str(&hint);
    }
    text
}

#[cfg(test)]
mod tests {
    use std::fmt;

    use super::*;

    /// A test error: a message and an optional cause.
    #[derive(Debug)]
    struct Failure(&'static str, Option<Box<Failure>>);

    impl fmt::Display for Failure {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
    }

    impl Error for Failure {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            self.1
                .as_deref()
                .map(|cause| cause as &(dyn Error + 'static))
        }
    }

    #[test]
    fn a_message_without_hints_is_unchanged() {
        assert_eq!(split("no such file: a; b"), ("no such file: a; b", vec![]));
        let chain = Failure(
            "loading tasks.jsonl",
            Some(Box::new(Failure("line 3", None))),
        );
        assert_eq!(report(&chain), "error: loading tasks.jsonl: line 3");
    }

    #[test]
    fn hints_are_split_off_each_message() {
        assert_eq!(
            split("image x is not in the image store\nhint: pull it\nhint: or import it"),
            (
                "image x is not in the image store",
                vec!["pull it", "or import it"]
            )
        );
        // A newline that does not start a hint stays in the message.
        assert_eq!(
            split("build failed\nlast lines"),
            ("build failed\nlast lines", vec![])
        );
    }

    #[test]
    fn hints_of_inner_causes_come_after_the_whole_chain() {
        let chain = Failure(
            "task a",
            Some(Box::new(Failure(
                "image x is not in the image store\nhint: run `swerve images pull x`",
                Some(Box::new(Failure("not found", None))),
            ))),
        );
        assert_eq!(
            report(&chain),
            "error: task a: image x is not in the image store: not found\n\
             hint: run `swerve images pull x`"
        );
    }

    #[test]
    fn a_cause_the_message_already_quotes_and_its_hint_appear_once() {
        let chain = Failure(
            "preparing the base checkout: repository r not found\nhint: pass --repos DIR",
            Some(Box::new(Failure(
                "repository r not found\nhint: pass --repos DIR",
                None,
            ))),
        );
        assert_eq!(
            report(&chain),
            "error: preparing the base checkout: repository r not found\nhint: pass --repos DIR"
        );
    }

    /// What a failed rollout keeps (`summary.json`, its log): the chain as `anyhow`'s `{:#}`
    /// would print it, but each message and hint once, hints last.
    #[test]
    fn a_kept_chain_is_the_report_without_its_prefix() {
        let inner = Failure("repository r not found\nhint: pass --repos DIR", None);
        let chain = Failure(
            "preparing the base checkout: repository r not found\nhint: pass --repos DIR",
            Some(Box::new(inner)),
        );
        let kept = super::chain(&chain);
        assert_eq!(
            kept,
            "preparing the base checkout: repository r not found\nhint: pass --repos DIR"
        );
        assert_eq!(report(&chain), format!("error: {kept}"));
        assert_eq!(super::chain(&Failure("plain", None)), "plain");
    }
}
