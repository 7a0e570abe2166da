//! The minijinja environment set up the way transformers sets up Jinja2 for chat templates.
//!
//! transformers renders with `ImmutableSandboxedEnvironment(trim_blocks=True,
//! lstrip_blocks=True, extensions=[AssistantTracker, loopcontrols])`, its own `tojson` filter
//! and the globals `raise_exception` and `strftime_now`. Here: the same syntax settings,
//! `loop_controls`, Python's string and dict methods (minijinja-contrib's `pycompat`), no
//! auto-escaping, the replacement `tojson` ([`crate::tojson`]), the two globals, Python's
//! idea of whitespace in `trim` and `strip()` (it includes U+001C to U+001F, which Rust's
//! does not), and
//! `{% generation %}` blocks (TRL's training templates) rewritten to plain `if true` blocks,
//! which render their body as transformers does when it is not computing assistant masks.

use std::sync::LazyLock;

use minijinja::syntax::SyntaxConfig;
use minijinja::{AutoEscape, Environment, Error, ErrorKind, State, Value};
use regex::Regex;

use crate::tojson::tojson;

/// An environment with transformers' settings and no templates yet.
pub(crate) fn hf_environment() -> Environment<'static> {
    let mut env = Environment::new();
    let syntax = SyntaxConfig::builder()
        .trim_blocks(true)
        .lstrip_blocks(true)
        .build()
        .expect("the default delimiters are valid");
    env.set_syntax(syntax);
    env.set_auto_escape_callback(|_| AutoEscape::None);
    env.set_unknown_method_callback(python_methods);
    env.add_filter("tojson", tojson);
    env.add_filter("trim", trim);
    env.add_function("raise_exception", raise_exception);
    env.add_function("strftime_now", strftime_now);
    env
}

/// Rewrites `{% generation %}` … `{% endgeneration %}` (with any whitespace control) to
/// `{% if true %}` … `{% endif %}`, keeping the delimiters so whitespace is trimmed alike.
pub(crate) fn rewrite_generation_blocks(source: &str) -> String {
    static TAG: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"\{%([-+]?)\s*(end)?generation\s*([-+]?)%\}").expect("valid regex")
    });
    TAG.replace_all(source, |caps: &regex::Captures<'_>| {
        let body = if caps.get(2).is_some() {
            "endif"
        } else {
            "if true"
        };
        format!("{{%{} {body} {}%}}", &caps[1], &caps[3])
    })
    .into_owned()
}

/// Python's `str.isspace`: Unicode whitespace plus the separators U+001C to U+001F.
fn is_python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Jinja2's `trim(chars=None)`: Python's `str.strip`.
fn trim(text: String, chars: Option<String>) -> String {
    match chars {
        Some(chars) => text.trim_matches(|c| chars.contains(c)).to_owned(),
        None => text.trim_matches(is_python_space).to_owned(),
    }
}

/// Methods on values: `strip()`, `lstrip()` and `rstrip()` without characters strip
/// Python's whitespace; everything else is minijinja-contrib's `pycompat`.
fn python_methods(
    state: &mut State<'_, '_>,
    value: &Value,
    method: &str,
    args: &[Value],
) -> Result<Value, Error> {
    let whitespace = args.is_empty() || (args.len() == 1 && args[0].is_none());
    if let (Some(text), true) = (value.as_str(), whitespace) {
        match method {
            "strip" => return Ok(Value::from(text.trim_matches(is_python_space))),
            "lstrip" => return Ok(Value::from(text.trim_start_matches(is_python_space))),
            "rstrip" => return Ok(Value::from(text.trim_end_matches(is_python_space))),
            _ => {}
        }
    }
    minijinja_contrib::pycompat::unknown_method_callback(state, value, method, args)
}

/// `raise_exception(message)`: the template refuses its input.
fn raise_exception(message: String) -> Result<Value, Error> {
    Err(Error::new(ErrorKind::InvalidOperation, message))
}

/// `strftime_now(format)`: the local time formatted like Python's `datetime.now().strftime`.
fn strftime_now(format: String) -> Result<Value, Error> {
    let now = jiff::Zoned::now();
    jiff::fmt::strtime::format(&format, &now)
        .map(Value::from)
        .map_err(|err| {
            Error::new(
                ErrorKind::InvalidOperation,
                format!("strftime_now({format:?}): {err}"),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(source: &str) -> Result<String, Error> {
        let mut env = hf_environment();
        env.add_template_owned("t", rewrite_generation_blocks(source))?;
        env.get_template("t")?
            .render(minijinja::context! { xs => vec![1, 2] })
    }

    #[test]
    fn blocks_are_trimmed_like_transformers() {
        // trim_blocks drops the newline after a tag, lstrip_blocks the indentation before it;
        // the single trailing newline of the source is dropped as Jinja2 does.
        let source =
            "{% for x in xs %}\n    {% if x > 1 %}\n{{ x }}\n    {% endif %}\n{% endfor %}\n";
        assert_eq!(render(source).unwrap(), "2\n");
    }

    #[test]
    fn generation_blocks_render_their_body() {
        let source = "a\n{%- generation -%}\n  b  \n{%- endgeneration %}\nc{% generation %}d{% endgeneration %}";
        assert_eq!(render(source).unwrap(), "abcd");
    }

    #[test]
    fn python_methods_and_globals_work() {
        let source = "{{ ' A b '.strip().lower() }}|{{ 'x,y'.split(',') | join('+') }}|{{ strftime_now('%Y') | length }}";
        assert_eq!(render(source).unwrap(), "a b|x+y|4");
        let err = render("{{ raise_exception('no system role') }}").unwrap_err();
        assert!(err.to_string().contains("no system role"), "{err}");
        let today = render("{{ strftime_now('%d %b %Y') }}").unwrap();
        let pattern = Regex::new(r"^\d\d [A-Z][a-z][a-z] \d{4}$").unwrap();
        assert!(pattern.is_match(&today), "{today}");
        assert_eq!(render("{{ '<&>' }}").unwrap(), "<&>");
    }

    #[test]
    fn whitespace_is_pythons() {
        // Python strips the information separators U+001C..U+001F; Rust's trim does not.
        let source = "{{ '\x1f a\u{a0}\x1c' | trim }}|{{ '\x1d b \x1e'.strip() }}|{{ ' c\x1f'.lstrip() }}|{{ '\x1fd '.rstrip() }}|{{ 'xxexx' | trim('x') }}|{{ '--f-'.strip('-') }}";
        assert_eq!(render(source).unwrap(), "a|b|c\u{1f}|\u{1f}d|e|f");
    }
}
