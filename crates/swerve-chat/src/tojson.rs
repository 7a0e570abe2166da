//! The `tojson` filter as Hugging Face transformers defines it for chat templates: Python's
//! `json.dumps(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)`.
//!
//! Unlike minijinja's built-in filter it does not escape `<`, `>` and `&`, keeps non-ASCII
//! text as it is, puts a space after `,` and `:` (`", "` and `": "`; `","` between items once
//! `indent` is set), keeps the key order and writes floats as Python's `repr` does. The
//! arguments are Python's, positional or by name, in its order: `ensure_ascii`, `indent`,
//! `separators`, `sort_keys`.

use minijinja::value::{Kwargs, Rest, ValueKind, ValueOrKwargs, from_args};
use minijinja::{Error, ErrorKind, Value};

/// The filter: `value | tojson(ensure_ascii=False, indent=None, separators=None, sort_keys=False)`.
pub(crate) fn tojson(value: &Value, args: Rest<ValueOrKwargs>) -> Result<Value, Error> {
    let args = args.into_values();
    type Args = (
        Option<Value>,
        Option<Value>,
        Option<Value>,
        Option<Value>,
        Kwargs,
    );
    let (ensure_ascii, indent, separators, sort_keys, kwargs): Args = from_args(&args)?;
    let ensure_ascii = argument("ensure_ascii", ensure_ascii, &kwargs)?;
    let indent = argument("indent", indent, &kwargs)?;
    let separators = argument("separators", separators, &kwargs)?;
    let sort_keys = argument("sort_keys", sort_keys, &kwargs)?;
    kwargs.assert_all_used()?;

    let indent = match indent {
        None => None,
        Some(value) if value.is_none() => None,
        Some(value) => Some(indent_unit(&value)?),
    };
    let (item_separator, key_separator) = match separators {
        Some(value) if !value.is_none() => separator_pair(&value)?,
        _ if indent.is_some() => (",".to_owned(), ": ".to_owned()),
        _ => (", ".to_owned(), ": ".to_owned()),
    };
    let mut writer = Writer {
        out: String::new(),
        ensure_ascii: ensure_ascii.is_some_and(|value| value.is_true()),
        sort_keys: sort_keys.is_some_and(|value| value.is_true()),
        indent,
        item_separator,
        key_separator,
        depth: 0,
    };
    writer.value(value)?;
    Ok(Value::from(writer.out))
}

/// One argument, given by position or by name but not both (Python's `TypeError` otherwise).
fn argument(
    name: &str,
    positional: Option<Value>,
    kwargs: &Kwargs,
) -> Result<Option<Value>, Error> {
    let named: Option<Value> = kwargs.get(name)?;
    match (positional, named) {
        (Some(_), Some(_)) => Err(Error::new(
            ErrorKind::TooManyArguments,
            format!("tojson() got multiple values for argument '{name}'"),
        )),
        (positional, named) => Ok(positional.or(named)),
    }
}

/// `indent`: a number of spaces (Python repeats `' '`; zero or less means newlines only) or
/// the string to indent with.
fn indent_unit(value: &Value) -> Result<String, Error> {
    if let Some(text) = value.as_str() {
        return Ok(text.to_owned());
    }
    if value.kind() == ValueKind::Bool {
        return Ok(if value.is_true() { " " } else { "" }.to_owned());
    }
    match value.as_i64() {
        Some(spaces) => Ok(" ".repeat(usize::try_from(spaces).unwrap_or(0))),
        None => Err(Error::new(
            ErrorKind::InvalidOperation,
            format!(
                "tojson(): indent must be an integer or a string, not {}",
                value.kind()
            ),
        )),
    }
}

/// `separators`: a pair of strings, `(item_separator, key_separator)`.
fn separator_pair(value: &Value) -> Result<(String, String), Error> {
    let invalid = || {
        Error::new(
            ErrorKind::InvalidOperation,
            "tojson(): separators must be a pair of strings",
        )
    };
    if value.len() != Some(2) {
        return Err(invalid());
    }
    let item = value.get_item_by_index(0)?;
    let key = value.get_item_by_index(1)?;
    match (item.as_str(), key.as_str()) {
        (Some(item), Some(key)) => Ok((item.to_owned(), key.to_owned())),
        _ => Err(invalid()),
    }
}

/// Writes JSON the way Python's `json` module's encoder does.
struct Writer {
    out: String,
    ensure_ascii: bool,
    sort_keys: bool,
    indent: Option<String>,
    item_separator: String,
    key_separator: String,
    depth: usize,
}

impl Writer {
    fn value(&mut self, value: &Value) -> Result<(), Error> {
        match value.kind() {
            ValueKind::None => self.out.push_str("null"),
            ValueKind::Bool => self
                .out
                .push_str(if value.is_true() { "true" } else { "false" }),
            ValueKind::Number => self.out.push_str(&number(value)),
            ValueKind::String => self.string(value.as_str().unwrap_or_default()),
            ValueKind::Seq | ValueKind::Iterable => {
                let items: Vec<Value> = value.try_iter()?.collect();
                self.container('[', ']', items.len(), |writer, index| {
                    writer.value(&items[index])
                })?;
            }
            ValueKind::Map => {
                let mut entries = Vec::new();
                for key in value.try_iter()? {
                    let item = value.get_item(&key)?;
                    entries.push((key_text(&key)?, item));
                }
                if self.sort_keys {
                    entries.sort_by(|a, b| a.0.cmp(&b.0));
                }
                self.container('{', '}', entries.len(), |writer, index| {
                    let (key, item) = &entries[index];
                    writer.string(key);
                    writer.out.push_str(&writer.key_separator.clone());
                    writer.value(item)
                })?;
            }
            kind => {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!("tojson(): a value of type {kind} is not JSON serializable"),
                ));
            }
        }
        Ok(())
    }

    /// `[…]` or `{…}` with `len` items, each written by `item`; Python's layout, including the
    /// empty `[]`/`{}` even when indenting.
    fn container(
        &mut self,
        open: char,
        close: char,
        len: usize,
        mut item: impl FnMut(&mut Self, usize) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.out.push(open);
        if len == 0 {
            self.out.push(close);
            return Ok(());
        }
        self.depth += 1;
        for index in 0..len {
            if index > 0 {
                self.out.push_str(&self.item_separator.clone());
            }
            self.newline();
            item(self, index)?;
        }
        self.depth -= 1;
        self.newline();
        self.out.push(close);
        Ok(())
    }

    fn newline(&mut self) {
        if let Some(unit) = &self.indent {
            self.out.push('\n');
            for _ in 0..self.depth {
                self.out.push_str(unit);
            }
        }
    }

    /// A string literal: `"`, `\` and control characters escaped as Python does; with
    /// `ensure_ascii`, everything outside printable ASCII as `\uXXXX` (surrogate pairs above
    /// U+FFFF).
    fn string(&mut self, text: &str) {
        self.out.push('"');
        for c in text.chars() {
            match c {
                '"' => self.out.push_str("\\\""),
                '\\' => self.out.push_str("\\\\"),
                '\n' => self.out.push_str("\\n"),
                '\r' => self.out.push_str("\\r"),
                '\t' => self.out.push_str("\\t"),
                '\u{8}' => self.out.push_str("\\b"),
                '\u{c}' => self.out.push_str("\\f"),
                c if (c as u32) < 0x20 || (self.ensure_ascii && !(' '..='~').contains(&c)) => {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        self.out.push_str(&format!("\\u{unit:04x}"));
                    }
                }
                c => self.out.push(c),
            }
        }
        self.out.push('"');
    }
}

/// A mapping key as Python's encoder turns it into a string.
fn key_text(key: &Value) -> Result<String, Error> {
    match key.kind() {
        ValueKind::String => Ok(key.as_str().unwrap_or_default().to_owned()),
        ValueKind::Number => Ok(number(key)),
        ValueKind::Bool => Ok(if key.is_true() { "true" } else { "false" }.to_owned()),
        ValueKind::None => Ok("null".to_owned()),
        kind => Err(Error::new(
            ErrorKind::InvalidOperation,
            format!("tojson(): keys must be str, int, float, bool or None, not {kind}"),
        )),
    }
}

/// A number: integers as they are, floats as Python's `float.__repr__`.
fn number(value: &Value) -> String {
    if value.is_integer() {
        return value.to_string();
    }
    f64::try_from(value.clone()).map_or_else(|_| value.to_string(), python_float)
}

/// Python's `repr(float)` (and `json.dumps`): the shortest round-trip digits, positional
/// notation for exponents from -4 to 15 (`1e-05`, `0.0001`, `1e+16`, `100.0`), and
/// `NaN`/`Infinity`.
pub(crate) fn python_float(value: f64) -> String {
    if value.is_nan() {
        return "NaN".to_owned();
    }
    if value.is_infinite() {
        return if value < 0.0 { "-Infinity" } else { "Infinity" }.to_owned();
    }
    // `{:e}` gives the shortest round-trip digits: `-1.2345e2`, `1e16`, `5e-324`.
    let scientific = format!("{value:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if !(-4..16).contains(&exponent) {
        let mantissa = match digits.split_at(1) {
            (first, "") => first.to_owned(),
            (first, rest) => format!("{first}.{rest}"),
        };
        let exponent_sign = if exponent < 0 { '-' } else { '+' };
        return format!("{sign}{mantissa}e{exponent_sign}{:02}", exponent.abs());
    }
    if exponent < 0 {
        let zeros = "0".repeat(exponent.unsigned_abs() as usize - 1);
        return format!("{sign}0.{zeros}{digits}");
    }
    let whole_len = exponent as usize + 1;
    if digits.len() <= whole_len {
        let zeros = "0".repeat(whole_len - digits.len());
        format!("{sign}{digits}{zeros}.0")
    } else {
        let (whole, fraction) = digits.split_at(whole_len);
        format!("{sign}{whole}.{fraction}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use minijinja::Environment;

    fn render(template: &str, value: serde_json::Value) -> String {
        let mut env = Environment::new();
        env.add_filter("tojson", tojson);
        env.render_str(
            template,
            minijinja::context! { x => Value::from(minijinja::value::Serde(&value)) },
        )
        .unwrap()
    }

    #[test]
    fn floats_are_written_like_python_repr() {
        let cases = [
            (1.0, "1.0"),
            (0.1, "0.1"),
            (-0.0, "-0.0"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (123456.789, "123456.789"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.5e-7, "1.5e-07"),
            (-2.5e100, "-2.5e+100"),
            (5e-324, "5e-324"),
            (f64::NAN, "NaN"),
            (f64::NEG_INFINITY, "-Infinity"),
        ];
        for (value, python) in cases {
            assert_eq!(python_float(value), python, "{value:e}");
        }
    }

    #[test]
    fn matches_json_dumps_defaults() {
        let value = serde_json::json!({"b": [1, 2.5, true, null], "a": "<&> \"q\" \\ é 😀\n\u{1}\u{7f}", "e": {}, "l": []});
        assert_eq!(
            render("{{ x | tojson }}", value.clone()),
            r#"{"b": [1, 2.5, true, null], "a": "<&> \"q\" \\ é 😀\n\u0001"#.to_owned()
                + "\u{7f}"
                + r#"", "e": {}, "l": []}"#
        );
        assert_eq!(
            render("{{ x | tojson(indent=2) }}", value.clone()),
            "{\n  \"b\": [\n    1,\n    2.5,\n    true,\n    null\n  ],\n  \"a\": \"<&> \\\"q\\\" \\\\ é 😀\\n\\u0001\u{7f}\",\n  \"e\": {},\n  \"l\": []\n}"
        );
        assert_eq!(
            render(
                "{{ x | tojson(ensure_ascii=true, sort_keys=true, separators=(',', ':')) }}",
                value
            ),
            r#"{"a":"<&> \"q\" \\ \u00e9 \ud83d\ude00\n\u0001\u007f","b":[1,2.5,true,null],"e":{},"l":[]}"#
        );
        assert_eq!(
            render("{{ x | tojson(indent='\t') }}", serde_json::json!([1])),
            "[\n\t1\n]"
        );
        assert_eq!(
            render("{{ x | tojson(indent=0) }}", serde_json::json!([1])),
            "[\n1\n]"
        );
    }

    #[test]
    fn unserializable_values_and_bad_arguments_are_errors() {
        let mut env = Environment::new();
        env.add_filter("tojson", tojson);
        for template in [
            "{{ missing | tojson }}",
            "{{ [1] | tojson(indent=[]) }}",
            "{{ [1] | tojson(separators=',') }}",
            "{{ [1] | tojson(false, indent=2, ensure_ascii=true) }}",
            "{{ [1] | tojson(colour=1) }}",
        ] {
            assert!(env.render_str(template, ()).is_err(), "{template}");
        }
    }
}
