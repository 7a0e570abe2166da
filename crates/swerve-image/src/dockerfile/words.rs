//! Words of instructions, as BuildKit's shell lexer makes them: quotes, the escape
//! character, and variable substitution (`$VAR`, `${VAR}`, `${VAR:-word}`, `${VAR-word}`,
//! `${VAR:+word}`, `${VAR+word}`, `${VAR:?message}`, `${VAR?message}`), applied only in the
//! instructions where Docker applies it (`RUN`, `CMD` and `ENTRYPOINT` are left to the shell).

/// Looks variables up: `None` when unset.
pub type Lookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// `word` with quotes removed, escapes resolved and variables substituted.
pub fn expand(word: &str, escape: char, vars: Lookup<'_>) -> Result<String, String> {
    let chars: Vec<char> = word.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == escape {
            match chars.get(i + 1) {
                Some(next) => out.push(*next),
                None => out.push(c),
            }
            i += 2;
        } else if c == '\'' {
            i += 1;
            while i < chars.len() && chars[i] != '\'' {
                out.push(chars[i]);
                i += 1;
            }
            if i >= chars.len() {
                return Err(format!("unmatched ' in {word}"));
            }
            i += 1;
        } else if c == '"' {
            i += 1;
            loop {
                match chars.get(i) {
                    None => return Err(format!("unmatched \" in {word}")),
                    Some('"') => break,
                    Some(&d) if d == escape => {
                        match chars.get(i + 1) {
                            Some(&n) if n == '"' || n == '$' || n == escape => out.push(n),
                            Some(&n) => {
                                out.push(d);
                                out.push(n);
                            }
                            None => return Err(format!("unmatched \" in {word}")),
                        }
                        i += 2;
                    }
                    Some('$') => i = variable(&chars, i, escape, vars, &mut out)?,
                    Some(&d) => {
                        out.push(d);
                        i += 1;
                    }
                }
            }
            i += 1;
        } else if c == '$' {
            i = variable(&chars, i, escape, vars, &mut out)?;
        } else {
            out.push(c);
            i += 1;
        }
    }
    Ok(out)
}

/// `text` with variables substituted and escaped `$` (`\\$`) made literal; quotes and every
/// other character kept (heredoc bodies of `COPY`/`ADD`, which are file contents).
pub fn substitute(text: &str, escape: char, vars: Lookup<'_>) -> Result<String, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            c if c == escape && chars.get(i + 1) == Some(&'$') => {
                out.push('$');
                i += 2;
            }
            '$' => i = variable(&chars, i, escape, vars, &mut out)?,
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(out)
}

/// Expands the variable at `chars[at] == '$'` into `out`; returns the index after it.
fn variable(
    chars: &[char],
    at: usize,
    escape: char,
    vars: Lookup<'_>,
    out: &mut String,
) -> Result<usize, String> {
    let name_end = |from: usize| {
        let mut j = from;
        while j < chars.len() && (chars[j].is_ascii_alphanumeric() || chars[j] == '_') {
            j += 1;
        }
        j
    };
    match chars.get(at + 1) {
        Some('{') => {
            let start = at + 2;
            let end = name_end(start);
            let name: String = chars[start..end].iter().collect();
            if name.is_empty() {
                return Err("missing a variable name after ${".into());
            }
            // The modifier and its word, up to the matching `}`.
            let mut depth = 0;
            let mut j = end;
            while j < chars.len() {
                match chars[j] {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    _ => {}
                }
                j += 1;
            }
            if j >= chars.len() {
                return Err(format!("missing }} after ${{{name}"));
            }
            let modifier: String = chars[end..j].iter().collect();
            let value = vars(&name);
            let expanded = match modifier.as_str() {
                "" => value.unwrap_or_default(),
                _ => {
                    let (op, rest) = if modifier.starts_with(':') {
                        modifier.split_at(2.min(modifier.len()))
                    } else {
                        modifier.split_at(1)
                    };
                    let word = || expand(rest, escape, vars);
                    let set = value.as_deref().is_some();
                    let nonempty = value.as_deref().is_some_and(|v| !v.is_empty());
                    match op {
                        ":-" if nonempty => value.unwrap_or_default(),
                        "-" if set => value.unwrap_or_default(),
                        ":-" | "-" => word()?,
                        ":+" if nonempty => word()?,
                        "+" if set => word()?,
                        ":+" | "+" => String::new(),
                        ":?" if nonempty => value.unwrap_or_default(),
                        "?" if set => value.unwrap_or_default(),
                        ":?" | "?" => {
                            let message = word()?;
                            return Err(format!(
                                "{name}: {}",
                                if message.is_empty() {
                                    "is not set".to_owned()
                                } else {
                                    message
                                }
                            ));
                        }
                        _ => {
                            return Err(format!(
                                "unsupported modifier in ${{{name}{modifier}}} (supported: :- - :+ + :? ?)"
                            ));
                        }
                    }
                }
            };
            out.push_str(&expanded);
            Ok(j + 1)
        }
        Some(c) if c.is_ascii_alphanumeric() || *c == '_' => {
            let end = name_end(at + 1);
            let name: String = chars[at + 1..end].iter().collect();
            out.push_str(&vars(&name).unwrap_or_default());
            Ok(end)
        }
        _ => {
            out.push('$');
            Ok(at + 1)
        }
    }
}

/// `text` split into words at whitespace outside quotes (quotes and escapes kept, for
/// [`expand`]).
pub fn split(text: &str, escape: char) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut chars = text.chars();
    let mut in_word = false;
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => {
                current.push(c);
                if c == escape && q == '"' {
                    if let Some(next) = chars.next() {
                        current.push(next);
                    }
                } else if c == q {
                    quote = None;
                }
            }
            None if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut current));
                    in_word = false;
                }
            }
            None => {
                in_word = true;
                current.push(c);
                if c == escape {
                    if let Some(next) = chars.next() {
                        current.push(next);
                    }
                } else if c == '\'' || c == '"' {
                    quote = Some(c);
                }
            }
        }
    }
    if in_word {
        words.push(current);
    }
    words
}

/// `KEY=value …` pairs (`ENV`, `LABEL`, `ARG`), or the legacy `KEY value` form when
/// `legacy` (`ENV`, `LABEL`) and the first word has no `=`; values expanded.
pub fn pairs(
    text: &str,
    escape: char,
    vars: Lookup<'_>,
    legacy: bool,
) -> Result<Vec<(String, String)>, String> {
    let words = split(text, escape);
    if words.is_empty() {
        return Err("needs at least one KEY=value".into());
    }
    if legacy && !words[0].contains('=') {
        let key = expand(&words[0], escape, vars)?;
        let rest = text.trim_start()[words[0].len()..].trim();
        if rest.is_empty() {
            return Err(format!("{key} has no value (write {key}=value)"));
        }
        return Ok(vec![(key, expand(rest, escape, vars)?)]);
    }
    words
        .iter()
        .map(|word| match word.split_once('=') {
            Some((key, value)) => Ok((expand(key, escape, vars)?, expand(value, escape, vars)?)),
            None => Err(format!("\"{word}\" is not KEY=value")),
        })
        .collect()
}

/// The JSON (exec) form of an instruction's arguments, if `args` is a JSON array of strings.
pub fn json_form(args: &str) -> Option<Vec<String>> {
    if !args.starts_with('[') {
        return None;
    }
    serde_json::from_str(args).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn vars(name: &str) -> Option<String> {
        match name {
            "A" => Some("a".into()),
            "EMPTY" => Some(String::new()),
            "SPACE" => Some("x y".into()),
            _ => None,
        }
    }

    fn x(word: &str) -> String {
        expand(word, '\\', &vars).unwrap()
    }

    #[test]
    fn substitution_as_docker_documents() {
        // docs.docker.com/reference/dockerfile/#environment-replacement
        assert_eq!(x("$A"), "a");
        assert_eq!(x("${A}bc"), "abc");
        assert_eq!(x("${UNSET:-def}"), "def");
        assert_eq!(x("${EMPTY:-def}"), "def");
        assert_eq!(x("${EMPTY-def}"), "");
        assert_eq!(x("${A:-def}"), "a");
        assert_eq!(x("${A:+alt}"), "alt");
        assert_eq!(x("${UNSET:+alt}"), "");
        assert_eq!(x("${UNSET:-$A}"), "a");
        assert_eq!(x("\\$A"), "$A");
        assert_eq!(x("\\${A}"), "${A}");
        assert_eq!(x("'$A'"), "$A");
        assert_eq!(x("\"$A b\""), "a b");
        assert_eq!(x("\"\\$A\""), "$A");
        assert_eq!(x("$"), "$");
        assert_eq!(
            substitute("say \"$A\" 'x' \\$A c:\\d", '\\', &vars).unwrap(),
            "say \"a\" 'x' $A c:\\d"
        );
        assert_eq!(x("a$UNSET.b"), "a.b");
        assert!(
            expand("${UNSET:?needed}", '\\', &vars)
                .unwrap_err()
                .contains("needed")
        );
        assert!(expand("${A", '\\', &vars).is_err());
        assert!(expand("'open", '\\', &vars).is_err());
        // With the escape directive set to a backtick, `\` is literal.
        assert_eq!(expand("c:\\dir `$A", '`', &vars).unwrap(), "c:\\dir $A");
    }

    #[test]
    fn env_pairs() {
        // The documented `ENV MY_NAME="John Doe" MY_DOG=Rex\ The\ Dog MY_CAT=fluffy`.
        let parsed = pairs(
            "MY_NAME=\"John Doe\" MY_DOG=Rex\\ The\\ Dog MY_CAT=fluffy",
            '\\',
            &vars,
            true,
        )
        .unwrap();
        assert_eq!(
            parsed,
            vec![
                ("MY_NAME".into(), "John Doe".into()),
                ("MY_DOG".into(), "Rex The Dog".into()),
                ("MY_CAT".into(), "fluffy".into())
            ]
        );
        assert_eq!(
            pairs("MY_VAR my value $A", '\\', &vars, true).unwrap(),
            vec![("MY_VAR".into(), "my value a".into())]
        );
        assert!(pairs("NOVALUE", '\\', &vars, true).is_err());
        assert!(pairs("A=1 B", '\\', &vars, false).is_err());
    }

    #[test]
    fn json_forms() {
        assert_eq!(
            json_form(r#"["/bin/sh", "-c", "echo"]"#),
            Some(vec!["/bin/sh".into(), "-c".into(), "echo".into()])
        );
        assert_eq!(json_form("[not json"), None);
        assert_eq!(json_form("echo [a]"), None);
    }

    proptest! {
        #[test]
        fn expansion_never_panics(word in "(?s)[$a-zA-Z{}:+?\\-'\"\\\\` _]{0,40}") {
            let _ = expand(&word, '\\', &vars);
            let _ = expand(&word, '`', &vars);
            let _ = pairs(&word, '\\', &vars, true);
            let _ = split(&word, '\\');
        }

        #[test]
        fn plain_words_are_themselves(word in "[a-zA-Z0-9_./:-]{1,30}") {
            prop_assert_eq!(expand(&word, '\\', &vars).unwrap(), word.clone());
            prop_assert_eq!(split(&word, '\\'), vec![word]);
        }
    }
}
