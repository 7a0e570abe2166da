//! Shell quoting shared by a spec's test command ([`super::resolve`]) and the eval script
//! ([`super::script`]).

/// `word` as one shell word: as it is if it has only characters the shell leaves alone,
/// else in single quotes.
pub(crate) fn quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./+:@%,=".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}
