//! Property tests of the SWE-AGILE reply structure: the parser never panics and only
//! returns text taken from the reply, and rendered pieces parse back to themselves (also
//! with CRLF line ends, with the reasoning from the server, and as a kept turn is sent).
//! Likewise for the other readers of model output here: a backfill teacher's reply, whose
//! accepted pieces must fit the structure unchanged, and `recall_thought`'s step ids.

use proptest::prelude::*;
use swerve_agent::agile::recall;
use swerve_agent::agile::structure::{self, Structured};
use swerve_agent::backfill::reply;
use swerve_core::ToolCall;
use swerve_core::trajectory::Message;
use swerve_tools::formats::{FormatError, ModelOutput, Pick, ToolFormat, XmlFormat};

/// Whether a call starts in `segment`, as the XML format sees it.
fn has_call(segment: &str) -> bool {
    !matches!(
        XmlFormat::new(Pick::Last).parse(&ModelOutput::from_text(segment)),
        Err(FormatError::NoCall { .. })
    )
}

/// Pieces of real reply syntax, to reach deep into the parser.
fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("<think>".to_owned()),
        Just("</think>".to_owned()),
        Just("<reasoning>".to_owned()),
        Just("</reasoning>".to_owned()),
        Just("<reasoning_digest>".to_owned()),
        Just("</reasoning_digest>".to_owned()),
        Just("<reasoning_".to_owned()),
        Just("[0, 2]".to_owned()),
        Just("-1".to_owned()),
        Just("99999999999999999999".to_owned()),
        Just("<function=search>".to_owned()),
        Just("<function=".to_owned()),
        Just("</function>".to_owned()),
        Just("<parameter=search_term>".to_owned()),
        Just("</parameter>".to_owned()),
        Just("\r\n".to_owned()),
        Just("\n".to_owned()),
        Just(" ".to_owned()),
        Just("é€😀".to_owned()),
        "[ -~]{0,6}",
        "\\PC{0,3}",
    ]
}

fn soup() -> impl Strategy<Value = String> {
    prop::collection::vec(fragment(), 0..24).prop_map(|parts| parts.concat())
}

/// Plain text without tags or surrounding whitespace.
fn plain(max: usize) -> impl Strategy<Value = String> {
    proptest::string::string_regex(&format!("[a-zA-Z0-9 _.,:;'\"(){{}}=+*/>&\\n-]{{0,{max}}}"))
        .expect("valid regex")
        .prop_map(|text| text.trim().to_owned())
}

/// Reasoning: plain text, maybe with a call drafted in it.
fn reasoning() -> impl Strategy<Value = String> {
    (plain(60), prop::option::of(plain(20))).prop_map(|(text, draft)| match draft {
        Some(draft) => format!(
            "{text}\n<function=search><parameter=search_term>{draft}</parameter></function>"
        )
        .trim()
        .to_owned(),
        None => text,
    })
}

/// An action: text, an XML call, or text then a call.
fn action() -> impl Strategy<Value = String> {
    (plain(30), prop::option::of(plain(20))).prop_map(|(thought, term)| match term {
        Some(term) => {
            XmlFormat::new(Pick::Last)
                .render_call(
                    &thought,
                    &ToolCall::new("search").arg("search_term", term),
                    None,
                )
                .content
        }
        None => thought,
    })
}

fn structured() -> impl Strategy<Value = Structured> {
    (
        reasoning(),
        plain(40).prop_filter("a digest is never empty", |d| !d.is_empty()),
        action(),
    )
        .prop_map(|(reasoning, digest, action)| Structured {
            reasoning,
            digest,
            action,
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn never_panics_and_quotes_the_reply(text in soup(), channel in prop::option::of(soup())) {
        let normalized = text.replace("\r\n", "\n");
        match structure::parse(&text, None, has_call) {
            Ok(parsed) => {
                prop_assert!(normalized.contains(&parsed.reasoning));
                prop_assert!(normalized.contains(&parsed.digest));
                prop_assert!(normalized.contains(&parsed.action));
                prop_assert!(!parsed.digest.is_empty());
            }
            Err(malformed) => {
                prop_assert!(normalized.contains(&malformed.rest));
                if let Some(reasoning) = &malformed.reasoning {
                    prop_assert!(normalized.contains(reasoning.as_str()));
                }
                prop_assert!(malformed.error.to_string().starts_with("Your "));
            }
        }
        let _ = structure::parse(&text, channel.as_deref(), has_call);
    }

    #[test]
    fn rendered_replies_parse_back(pieces in structured()) {
        let rendered = pieces.render();
        prop_assert_eq!(structure::parse(&rendered, None, has_call), Ok(pieces.clone()));
        let crlf = rendered.replace('\n', "\r\n");
        prop_assert_eq!(structure::parse(&crlf, None, has_call), Ok(pieces.clone()));
        let kept = structure::inline(&pieces.reasoning, &structure::content(&pieces.digest, &pieces.action));
        prop_assert_eq!(structure::parse(&kept, None, has_call), Ok(pieces.clone()));
        let content = structure::content(&pieces.digest, &pieces.action);
        let from_server = structure::parse(&content, Some(&pieces.reasoning), has_call);
        if pieces.reasoning.is_empty() {
            prop_assert!(from_server.is_err());
        } else {
            prop_assert_eq!(from_server, Ok(pieces));
        }
    }
}

/// A teacher's reply: mostly the two blocks around soup, sometimes soup alone.
fn teacher_reply() -> impl Strategy<Value = String> {
    prop_oneof![
        soup(),
        (soup(), soup(), soup(), soup()).prop_map(|(before, reasoning, digest, after)| format!(
            "{before}<reasoning>{reasoning}</reasoning>\n<reasoning_digest>{digest}</reasoning_digest>{after}"
        )),
        (plain(60), plain(40)).prop_map(|(reasoning, digest)| format!(
            "<reasoning>\n{reasoning}\n</reasoning>\n<reasoning_digest>\n{digest}\n</reasoning_digest>"
        )),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn teacher_replies_never_panic_and_fit_the_structure(text in teacher_reply(), action in action()) {
        match reply::parse(&text, has_call) {
            Ok(annotation) => {
                let normalized = text.replace("\r\n", "\n");
                prop_assert!(normalized.contains(&annotation.reasoning));
                prop_assert!(normalized.contains(&annotation.digest));
                // What the teacher wrote becomes a reply the agent's parser reads back
                // to the same pieces.
                let pieces = Structured {
                    reasoning: annotation.reasoning,
                    digest: annotation.digest,
                    action: action.trim().to_owned(),
                };
                prop_assert_eq!(structure::parse(&pieces.render(), None, has_call), Ok(pieces));
            }
            Err(error) => prop_assert!(error.to_string().starts_with("Your ")),
        }
    }

    #[test]
    fn recall_never_panics(ids in soup(), steps in 0usize..4) {
        let conversation: Vec<Message> = (0..steps)
            .map(|k| Message { reasoning_content: Some(format!("r{k}")), ..Message::assistant("a") })
            .collect();
        let call = ToolCall::new(recall::NAME).arg("step_ids", ids.clone());
        let recalled = recall::recall(&conversation, &call);
        prop_assert!(recalled.text.starts_with("=== RECALLED THOUGHT BEGIN ===\n") != recalled.is_error);
        if let Ok(value) = serde_json::from_str::<serde_json::Value>(&ids) {
            let _ = recall::recall(&conversation, &ToolCall::new(recall::NAME).arg("step_ids", value));
        }
    }
}
