//! Code normalization for PR-Edit's normalized match.
//!
//! [`swe_edit`] is SWE-Edit's `normalize_code`, step for step: block comments, triple-quoted
//! strings and HTML comments removed across lines, then `//` and `#` to the end of each line,
//! then whitespace runs collapsed to one space. It runs the same steps on every language, so
//! it also cuts comment-like text inside strings (`"http://host"` becomes `"http:`), and a
//! wrong URL can still match.
//!
//! [`preserving_strings`] is the language-aware variant: a small lexer for the file's
//! language (by extension) removes only real comments and collapses only whitespace outside
//! string literals, which it leaves intact. Unknown languages only have their whitespace
//! collapsed.

use std::sync::LazyLock;

use regex::Regex;

static SWE_EDIT_STEPS: LazyLock<[Regex; 7]> = LazyLock::new(|| {
    [
        r"(?s)/\*.*?\*/",
        r#"(?s)""".*?""""#,
        r"(?s)'''.*?'''",
        r"(?s)<!--.*?-->",
        r"(?m)//.*$",
        r"(?m)#.*$",
        r"[\s\x1c-\x1f]+",
    ]
    .map(|pattern| Regex::new(pattern).expect("valid pattern"))
});

/// Python's `str.isspace`: Unicode white space and the separators `\x1c`–`\x1f`.
fn is_python_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// SWE-Edit's `normalize_code`.
pub fn swe_edit(code: &str) -> String {
    let steps = &*SWE_EDIT_STEPS;
    let mut text = code.to_owned();
    for step in &steps[..6] {
        text = step.replace_all(&text, "").into_owned();
    }
    steps[6]
        .replace_all(&text, " ")
        .trim_matches(is_python_space)
        .to_owned()
}

/// How one language writes comments and strings.
struct Syntax {
    line_comments: &'static [&'static str],
    block_comments: &'static [(&'static str, &'static str)],
    /// String delimiters, longest first; a string ends at the same delimiter, and
    /// backslash escapes the next character.
    quotes: &'static [&'static str],
    /// Whether `'` opens a character literal only when it closes within a few characters
    /// (C, Java, Go, Rust: `'a'` is a literal, Rust's `'a` lifetime is not).
    char_literals: bool,
}

const PYTHON: Syntax = Syntax {
    line_comments: &["#"],
    block_comments: &[],
    quotes: &["\"\"\"", "'''", "\"", "'"],
    char_literals: false,
};
const C_LIKE: Syntax = Syntax {
    line_comments: &["//"],
    block_comments: &[("/*", "*/")],
    quotes: &["\"\"\"", "\""],
    char_literals: true,
};
const GO: Syntax = Syntax {
    quotes: &["\"", "`"],
    ..C_LIKE
};
const JAVASCRIPT: Syntax = Syntax {
    line_comments: &["//"],
    block_comments: &[("/*", "*/")],
    quotes: &["\"", "'", "`"],
    char_literals: false,
};
const CSS: Syntax = Syntax {
    line_comments: &[],
    ..JAVASCRIPT
};
const HASH: Syntax = Syntax {
    line_comments: &["#"],
    block_comments: &[],
    quotes: &["\"", "'"],
    char_literals: false,
};
const SQL: Syntax = Syntax {
    line_comments: &["--"],
    block_comments: &[("/*", "*/")],
    quotes: &["'", "\""],
    char_literals: false,
};
const LUA: Syntax = Syntax {
    line_comments: &["--"],
    block_comments: &[("--[[", "]]")],
    quotes: &["\"", "'"],
    char_literals: false,
};
const MARKUP: Syntax = Syntax {
    line_comments: &[],
    block_comments: &[("<!--", "-->")],
    quotes: &[],
    char_literals: false,
};
const PLAIN: Syntax = Syntax {
    line_comments: &[],
    block_comments: &[],
    quotes: &[],
    char_literals: false,
};

/// The syntax of a file, by its extension (or name, for `Makefile` and `Dockerfile`).
fn syntax_of(path: &str) -> &'static Syntax {
    let name = path.rsplit('/').next().unwrap_or(path);
    let extension = name
        .rsplit_once('.')
        .map_or(name, |(_, extension)| extension);
    match extension.to_ascii_lowercase().as_str() {
        "py" | "pyi" | "pyx" => &PYTHON,
        "c" | "h" | "cc" | "cpp" | "cxx" | "hpp" | "hh" | "java" | "cs" | "kt" | "kts"
        | "scala" | "swift" | "dart" | "rs" | "m" | "mm" | "proto" => &C_LIKE,
        "go" => &GO,
        "js" | "jsx" | "mjs" | "cjs" | "ts" | "tsx" | "vue" | "svelte" | "php" => &JAVASCRIPT,
        "css" | "scss" | "less" => &CSS,
        "sh" | "bash" | "zsh" | "rb" | "pl" | "pm" | "r" | "yml" | "yaml" | "toml" | "cfg"
        | "ini" | "cmake" | "mk" | "makefile" | "dockerfile" | "nix" | "jl" | "ex" | "exs" => &HASH,
        "sql" | "hs" => &SQL,
        "lua" => &LUA,
        "html" | "htm" | "xml" | "svg" | "xhtml" | "md" => &MARKUP,
        _ => &PLAIN,
    }
}

/// The language-aware normalization of `code`, a file at `path`: comments removed and
/// whitespace runs collapsed to one space, both only outside string literals, which are
/// kept byte for byte; the result trimmed.
pub fn preserving_strings(code: &str, path: &str) -> String {
    let syntax = syntax_of(path);
    let mut out = String::with_capacity(code.len());
    let mut pending_space = false;
    let mut rest = code;
    while let Some(c) = rest.chars().next() {
        if let Some(&(open, close)) = syntax
            .block_comments
            .iter()
            .find(|(open, _)| rest.starts_with(open))
        {
            let body = &rest[open.len()..];
            rest = body.find(close).map_or("", |at| &body[at + close.len()..]);
            continue;
        }
        if syntax
            .line_comments
            .iter()
            .any(|open| rest.starts_with(open))
        {
            rest = rest.find('\n').map_or("", |at| &rest[at..]);
            continue;
        }
        if is_python_space(c) {
            pending_space = true;
            rest = &rest[c.len_utf8()..];
            continue;
        }
        if pending_space && !out.is_empty() {
            out.push(' ');
        }
        pending_space = false;
        let literal = match syntax.quotes.iter().find(|quote| rest.starts_with(*quote)) {
            Some(quote) => string_literal(rest, quote),
            None if c == '\'' && syntax.char_literals => char_literal(rest),
            None => None,
        };
        let taken = literal.unwrap_or(c.len_utf8());
        out.push_str(&rest[..taken]);
        rest = &rest[taken..];
    }
    out
}

/// The length of the string literal at the start of `text`, opened by `quote`: up to its
/// closing quote, backslash escapes skipped; a one-character quote also ends at a newline,
/// and an unclosed literal runs to the end.
fn string_literal(text: &str, quote: &str) -> Option<usize> {
    let mut at = quote.len();
    while at < text.len() {
        let rest = &text[at..];
        if rest.starts_with(quote) {
            return Some(at + quote.len());
        }
        let c = rest.chars().next()?;
        if c == '\n' && quote.len() == 1 && quote != "`" {
            return Some(at);
        }
        at += c.len_utf8();
        if c == '\\' {
            at += rest[1..].chars().next().map_or(0, char::len_utf8);
        }
    }
    Some(text.len())
}

/// The length of a character literal at the start of `text` (`'a'`, `'\n'`, `'\u{1F600}'`),
/// if it is one.
fn char_literal(text: &str) -> Option<usize> {
    let body = &text[1..];
    let mut chars = body.char_indices();
    let (_, first) = chars.next()?;
    let end = match first {
        '\\' => {
            body.char_indices()
                .skip(2)
                .take(10)
                .find(|&(_, c)| c == '\'')?
                .0
        }
        '\'' | '\n' => return None,
        _ => chars.next().filter(|&(_, c)| c == '\'')?.0,
    };
    Some(1 + end + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swe_edit_normalization_follows_its_steps() {
        let code = "/* head\n*/ x = 1  # one\ny = \"\"\"doc\"\"\"\n<!-- c -->z = 2 // two\n\n\tw = '''d'''";
        assert_eq!(swe_edit(code), "x = 1 y = z = 2 w =");
        // Comment-like text inside strings is cut too.
        assert_eq!(
            swe_edit("url = \"http://a.example\"\ncolor = \"#fff\""),
            "url = \"http: color = \""
        );
        assert_eq!(swe_edit("a\x1cb\u{3000}c "), "a b c");
    }

    #[test]
    fn the_language_aware_variant_keeps_strings() {
        let python =
            "url = \"http://a.example\"  # the host\ncolor = '#fff'\n\n\"\"\"Doc  # kept\"\"\"\n";
        assert_eq!(
            preserving_strings(python, "app.py"),
            "url = \"http://a.example\" color = '#fff' \"\"\"Doc  # kept\"\"\""
        );
        let js = "const s = \"/* no */\"; /* yes */ let t = `a // b`; // end\nlet u = 'it\\'s';";
        assert_eq!(
            preserving_strings(js, "web/app.js"),
            "const s = \"/* no */\"; let t = `a // b`; let u = 'it\\'s';"
        );
        let c = "#include <stdio.h>\nchar q = '\"'; // quote\nchar *s = \"a  b\";";
        assert_eq!(
            preserving_strings(c, "main.c"),
            "#include <stdio.h> char q = '\"'; char *s = \"a  b\";"
        );
        let rust = "fn f<'a>(x: &'a str) -> char { 'x' } // c\n";
        assert_eq!(
            preserving_strings(rust, "src/lib.rs"),
            "fn f<'a>(x: &'a str) -> char { 'x' }"
        );
        assert_eq!(preserving_strings("a   # b\n c", "notes.txt"), "a # b c");
        assert_eq!(
            preserving_strings("x = \"open\ny = 2", "a.py"),
            "x = \"open y = 2"
        );
        assert_eq!(preserving_strings("/* never closed", "a.c"), "");
    }
}
