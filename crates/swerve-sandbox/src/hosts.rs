//! Extra `/etc/hosts` entries of a sandbox ([`SandboxConfig::hosts`]): names a sandbox
//! resolves to addresses of its own choosing, such as `httpbin.org` to `127.0.0.1` where a
//! local copy of that service runs inside the sandbox's network namespace.
//!
//! The init shows `/etc/hosts` as the system root's file (the host's, a base root's or an
//! image's) with these entries appended, read-only ([`render`]). Names are checked before the
//! sandbox starts ([`check`]): a hosts file cannot hold a name with spaces, `#` or control
//! characters, and the C library ignores names that are not host names.
//!
//! [`SandboxConfig::hosts`]: crate::SandboxConfig::hosts

use std::collections::BTreeMap;
use std::net::IpAddr;

use crate::SandboxError;

/// Whether `name` is a host name a hosts file can hold: 1 to 253 characters, dot-separated
/// labels of 1 to 63 ASCII letters, digits, `-` and `_`, no label starting or ending with
/// `-`, and not all digits and dots (that is an address, not a name).
pub fn is_host_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && !name.chars().all(|c| c.is_ascii_digit() || c == '.')
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        })
}

/// Checks every name of `hosts`; the error names the first bad one.
pub fn check(hosts: &BTreeMap<String, IpAddr>) -> Result<(), SandboxError> {
    match hosts.keys().find(|name| !is_host_name(name)) {
        Some(name) => Err(SandboxError::Setup(format!(
            "sandbox.hosts: {name:?} is not a host name (dot-separated labels of letters, \
             digits, `-` and `_`, at most 63 characters each, 253 in all)"
        ))),
        None => Ok(()),
    }
}

/// The hosts file `base` with `hosts` appended, one `ADDRESS NAME` line each under a comment
/// saying where they come from. `base` keeps its lines (a name listed in both resolves to the
/// first line the C library finds, which is `base`'s: [`check`]ed names should not repeat it).
pub fn render(base: &str, hosts: &BTreeMap<String, IpAddr>) -> String {
    let mut text = base.to_owned();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("# added by swerve (sandbox.hosts)\n");
    for (name, address) in hosts {
        text.push_str(&format!("{address}\t{name}\n"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn names_and_non_names() {
        for name in ["httpbin.org", "localhost", "a-b.c_d.example", "x"] {
            assert!(is_host_name(name), "{name}");
        }
        for name in [
            "",
            "127.0.0.1",
            "a b",
            "a#b",
            "a..b",
            "-a.org",
            "a-.org",
            "a\nb",
            ".org",
        ] {
            assert!(!is_host_name(name), "{name:?}");
        }
        assert!(!is_host_name(&"a".repeat(64)));
        let long = vec!["a".repeat(63); 4].join(".");
        assert!(!is_host_name(&long), "{} characters", long.len());
    }

    #[test]
    fn check_names_the_bad_entry() {
        let hosts = BTreeMap::from([("bad name".to_owned(), IpAddr::from([127, 0, 0, 1]))]);
        let error = check(&hosts).unwrap_err().to_string();
        assert!(error.contains("\"bad name\""), "{error}");
    }

    proptest! {
        /// Every line of the base is kept, and each entry is one line `ADDRESS\tNAME` whose
        /// fields parse back to the entry.
        #[test]
        fn rendered_entries_parse_back(
            base in "([a-z0-9 .:\t#]{0,30}\n){0,4}[a-z0-9 .#]{0,20}",
            entries in proptest::collection::btree_map(
                "[a-z][a-z0-9-]{0,10}[a-z0-9](\\.[a-z][a-z0-9_]{0,8}){0,3}",
                any::<IpAddr>(),
                0..6,
            ),
        ) {
            for name in entries.keys() {
                prop_assert!(is_host_name(name), "{name}");
            }
            let text = render(&base, &entries);
            prop_assert!(text.starts_with(&base));
            let added: Vec<&str> = text[base.len()..]
                .lines()
                .filter(|line| !line.is_empty() && !line.starts_with('#'))
                .collect();
            prop_assert_eq!(added.len(), entries.len());
            for (line, (name, address)) in added.iter().zip(&entries) {
                let fields: Vec<&str> = line.split_whitespace().collect();
                prop_assert_eq!(fields.len(), 2);
                prop_assert_eq!(fields[0].parse::<IpAddr>().unwrap(), *address);
                prop_assert_eq!(fields[1], name.as_str());
            }
        }

        /// A string with a character a hosts file separates on (space, tab, `#`, newline) is
        /// never a host name.
        #[test]
        fn separators_are_refused(
            before in "[a-z]{0,5}",
            separator in prop::sample::select(vec![' ', '\t', '#', '\n', '\r']),
            after in "[a-z]{0,5}",
        ) {
            let name = format!("{before}{separator}{after}");
            prop_assert!(!is_host_name(&name));
        }
    }
}
