//! Finding the JSON object in a world model's reply: reasoning up to `</think>` is set
//! aside, then the first JSON object with the expected keys is taken wherever it is (in
//! a code fence, after a preamble, before trailing text). Objects that are almost JSON
//! (raw newlines or tabs inside strings, `\'`, trailing commas) are repaired first.

use std::borrow::Cow;

use serde_json::{Map, Value};

/// Why a reply could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplyError {
    /// Nothing but whitespace (after the reasoning).
    #[error("the reply is empty")]
    Empty,
    /// No JSON object with any of the expected keys.
    #[error("the reply has no JSON object with {expected}")]
    NoObject {
        /// The keys looked for.
        expected: &'static str,
    },
    /// A field has a value that cannot be used.
    #[error("`{field}` {problem}")]
    Field {
        /// The key.
        field: &'static str,
        /// What is wrong, with the value.
        problem: String,
    },
}

/// `{` positions tried before giving up (bounds the work on pathological replies).
const MAX_ATTEMPTS: usize = 256;

/// The reasoning (text before the last `</think>`, without `<think>`) and the answer.
pub(crate) fn split_reasoning(text: &str) -> (Option<&str>, &str) {
    match text.rfind("</think>") {
        Some(end) => {
            let reasoning = text[..end].trim();
            let reasoning = reasoning
                .strip_prefix("<think>")
                .unwrap_or(reasoning)
                .trim();
            (Some(reasoning), &text[end + "</think>".len()..])
        }
        None => (None, text),
    }
}

/// The first JSON object in `answer` having one of `keys`.
pub(crate) fn find_object(
    answer: &str,
    keys: &[&str],
    expected: &'static str,
) -> Result<Map<String, Value>, ReplyError> {
    if answer.trim().is_empty() {
        return Err(ReplyError::Empty);
    }
    let wanted = |map: &Map<String, Value>| keys.iter().any(|key| map.contains_key(*key));
    for (start, _) in answer.match_indices('{').take(MAX_ATTEMPTS) {
        let rest = &answer[start..];
        if let Some(map) = leading_object(rest).filter(wanted) {
            return Ok(map);
        }
        if let Some(map) = leading_object(&repair(rest)).filter(wanted) {
            return Ok(map);
        }
    }
    Err(ReplyError::NoObject { expected })
}

/// The JSON object `text` starts with, ignoring what follows it.
fn leading_object(text: &str) -> Option<Map<String, Value>> {
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    match values.next() {
        Some(Ok(Value::Object(map))) => Some(map),
        _ => None,
    }
}

/// Makes near-JSON parseable: control characters inside strings escaped, `\'` and other
/// invalid escapes reduced to the character, commas before `}` or `]` dropped.
fn repair(text: &str) -> Cow<'_, str> {
    let mut out = String::with_capacity(text.len() + 16);
    let mut in_string = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if in_string {
            match c {
                '"' => {
                    in_string = false;
                    out.push(c);
                }
                '\\' => match chars.next() {
                    Some(next @ ('"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't' | 'u')) => {
                        out.push('\\');
                        out.push(next);
                    }
                    Some(next) => push_string_char(&mut out, next),
                    None => {}
                },
                c => push_string_char(&mut out, c),
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            ',' => {
                let mut lookahead = chars.clone();
                let next = lookahead.find(|c| !c.is_whitespace());
                if !matches!(next, Some('}' | ']')) {
                    out.push(c);
                }
            }
            c => out.push(c),
        }
    }
    if out == text {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(out)
    }
}

/// One character inside a JSON string, escaped if it is a control character.
fn push_string_char(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
        '"' | '\\' => {
            out.push('\\');
            out.push(c);
        }
        c => out.push(c),
    }
}

/// A text field: strings as they are, `null`/missing as `""`, a list of strings joined by
/// newlines, anything else as its JSON text.
pub(crate) fn text_field(map: &Map<String, Value>, key: &str) -> String {
    match map.get(key) {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => items
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join("\n"),
        Some(other) => other.to_string(),
    }
}

/// An integer field given as a number (integral) or a string of one.
pub(crate) fn integer_field(value: &Value) -> Option<i64> {
    match value {
        Value::Number(number) => number.as_i64().or_else(|| {
            let float = number.as_f64()?;
            (float.fract() == 0.0 && float.abs() < 1e15).then_some(float as i64)
        }),
        Value::String(text) => text.trim().parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repairs_near_json() {
        let map = find_object("{\"a\": \"x\ny\t\", \"b\": [1,],}", &["a"], "a").unwrap();
        assert_eq!(map["a"], "x\ny\t");
        assert_eq!(map["b"], serde_json::json!([1]));
        let map = find_object(r#"{"a": "it\'s"}"#, &["a"], "a").unwrap();
        assert_eq!(map["a"], "it's");
        assert_eq!(repair("{\"a\": 1}"), Cow::Borrowed("{\"a\": 1}"));
    }

    #[test]
    fn splits_reasoning_at_the_last_close_tag() {
        assert_eq!(
            split_reasoning("<think>\nhm\n</think>\n{}"),
            (Some("hm"), "\n{}")
        );
        assert_eq!(
            split_reasoning("a</think>b</think>c"),
            (Some("a</think>b"), "c")
        );
        assert_eq!(split_reasoning("<think>open"), (None, "<think>open"));
    }
}
