//! [`RecipeTable`]: recipe entries keyed by repository and version, read from TOML.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use serde::Serialize;

use toml::Spanned;
use toml::de::{DeArray, DeTable, DeValue};

use super::directives::DirectiveStyle;
use super::error::SpecError;
use super::names::{canonical_log_parser, parse_eval_type, unknown_eval_type, unknown_parser};
use super::recipe::Recipe;
use super::service::Service;
use crate::status::EvalType;

/// The recipe table shipped with swerve.
const SHIPPED: &str = include_str!("../../data/recipes.toml");

/// The name [`RecipeTable::shipped`] gives the shipped file in messages.
const SHIPPED_NAME: &str = "swerve-eval/data/recipes.toml";

/// The fields of a `[[recipe]]` entry, in the order messages list them.
const FIELDS: [&str; 20] = [
    "repo",
    "versions",
    "test_cmd",
    "log_parser",
    "eval_type",
    "directives",
    "python",
    "packages",
    "requirements",
    "environment_files",
    "exclude_newer",
    "system_packages",
    "pip_args",
    "pre_install",
    "install",
    "env",
    "services",
    "submodules",
    "test_exit_codes",
    "note",
];

/// Where a [`RecipeEntry`] was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EntrySource {
    /// The file, as named when loading it.
    pub file: String,
    /// The entry's position among the file's `[[recipe]]` entries, from 1.
    pub number: usize,
    /// The line its `[[recipe]]` header is on, from 1.
    pub line: usize,
}

impl fmt::Display for EntrySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "recipe {} of {} (line {})",
            self.number, self.file, self.line
        )
    }
}

/// One `[[recipe]]` entry: what to use for a repository at some versions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecipeEntry {
    /// The repository, `owner/name`.
    pub repo: String,
    /// The task versions it covers; `"*"` covers any version and tasks without one.
    pub versions: Vec<String>,
    /// The test command, to which the directives are appended.
    pub test_cmd: Option<String>,
    /// The log parser, by its canonical name (one of [`crate::parsers::PARSER_NAMES`]).
    pub log_parser: Option<&'static str>,
    /// The eval type.
    pub eval_type: Option<EvalType>,
    /// How test-patch files become test-command arguments, if not the runner's default.
    pub directives: Option<DirectiveStyle>,
    /// The environment.
    pub recipe: Recipe,
    /// Whether the base checkout holds the repository's submodules (`submodules`, default
    /// true), as the dataset's images do; false leaves them uninitialized.
    pub submodules: bool,
    /// Where the entry was read.
    pub source: EntrySource,
    /// Which file of the table it came from: later-added files have higher layers.
    layer: usize,
}

impl RecipeEntry {
    /// True if the entry lists `version` exactly (not through `"*"`).
    fn lists(&self, version: Option<&str>) -> bool {
        version.is_some_and(|version| self.versions.iter().any(|v| v == version))
    }

    fn matches(&self, repo: &str, version: Option<&str>) -> bool {
        self.repo == repo && (self.lists(version) || self.versions.iter().any(|v| v == "*"))
    }
}

/// Recipe entries from one or more TOML files (see [`crate::spec`] for the format).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecipeTable {
    entries: Vec<RecipeEntry>,
    layers: usize,
}

impl RecipeTable {
    /// The table shipped with swerve (`data/recipes.toml`): the SWE-bench Lite and Verified
    /// Python repositories, with SWE-bench's test commands, parsers and pinned environments.
    pub fn shipped() -> RecipeTable {
        match RecipeTable::parse(SHIPPED, SHIPPED_NAME) {
            Ok(table) => table,
            // A unit test parses the shipped file, so this cannot happen in a release.
            Err(error) => panic!("the shipped recipe table is invalid: {error}"),
        }
    }

    /// The shipped table extended by the recipes in `extra` (`--recipes FILE`,
    /// `run.recipes`), whose entries win where both have one.
    pub fn shipped_with(extra: Option<&Path>) -> Result<RecipeTable, SpecError> {
        let mut table = RecipeTable::shipped();
        if let Some(file) = extra {
            table.extend(RecipeTable::load(file)?);
        }
        Ok(table)
    }

    /// Reads a recipe file. Errors name the file, and the line, entry and field at fault.
    pub fn load(path: &Path) -> Result<RecipeTable, SpecError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|error| SpecError::Read {
            file: file.clone(),
            error,
        })?;
        RecipeTable::parse(&text, &file)
    }

    /// Parses recipe TOML; `file` names it in errors and [`EntrySource`]s.
    pub fn parse(text: &str, file: &str) -> Result<RecipeTable, SpecError> {
        let document = DeTable::parse(text).map_err(|error| {
            let at = error.span().map_or(0, |span| span.start);
            let (line, column) = line_column(text, at);
            SpecError::Syntax {
                file: file.to_owned(),
                line,
                column,
                message: error.message().trim().to_owned(),
            }
        })?;
        let reader = Reader { text, file };
        let mut entries = Vec::new();
        for (key, value) in document.get_ref() {
            if key.get_ref() != "recipe" {
                return Err(reader.top_level(
                    key,
                    "unknown key; a recipe file holds only [[recipe]] entries",
                ));
            }
            let DeValue::Array(items) = value.get_ref() else {
                let found = describe(value.get_ref());
                let message =
                    format!("expected [[recipe]] entries (an array of tables), found {found}");
                return Err(reader.top_level(key, &message));
            };
            for (index, item) in items.iter().enumerate() {
                entries.push(reader.entry(index + 1, item)?);
            }
        }
        Ok(RecipeTable { entries, layers: 1 })
    }

    /// Adds `other`'s entries on top: where both have an entry for a task, `other`'s wins.
    pub fn extend(&mut self, other: RecipeTable) {
        let offset = self.layers;
        self.entries
            .extend(other.entries.into_iter().map(|mut entry| {
                entry.layer += offset;
                entry
            }));
        self.layers += other.layers;
    }

    /// The entry for `repo` at `version`: among the entries that list the version or `"*"`,
    /// the one from the latest-added file, then one listing the version exactly, then the
    /// later one in its file.
    pub fn lookup(&self, repo: &str, version: Option<&str>) -> Option<&RecipeEntry> {
        self.entries
            .iter()
            .filter(|entry| entry.matches(repo, version))
            .max_by_key(|entry| (entry.layer, entry.lists(version), entry.source.number))
    }

    /// Every entry, in the order added.
    pub fn entries(&self) -> impl Iterator<Item = &RecipeEntry> {
        self.entries.iter()
    }
}

/// Reads entries of one file, making errors that point into it.
struct Reader<'a> {
    text: &'a str,
    file: &'a str,
}

/// The entry being read, for error messages.
struct EntryContext<'a> {
    number: usize,
    repo: Option<String>,
    reader: &'a Reader<'a>,
}

impl EntryContext<'_> {
    /// The `services` array: names of network fixtures ([`Service`]), each once.
    fn services(&self, value: &Spanned<DeValue<'_>>) -> Result<Vec<Service>, SpecError> {
        let names = self.strings("services", value)?;
        let mut services: Vec<Service> = Vec::new();
        for name in &names {
            let Some(service) = Service::from_name(name) else {
                return Err(self.error(
                    value.span().start,
                    "services",
                    format!(
                        "unknown service {name:?}; expected one of {}",
                        Service::names()
                    ),
                ));
            };
            if services.contains(&service) {
                return Err(self.error(
                    value.span().start,
                    "services",
                    format!("{name:?} is listed twice"),
                ));
            }
            services.push(service);
        }
        Ok(services)
    }

    fn error(&self, at: usize, field: &str, message: impl Into<String>) -> SpecError {
        SpecError::Recipe {
            file: self.reader.file.to_owned(),
            line: line_column(self.reader.text, at).0,
            entry: Some(self.number),
            repo: self.repo.clone(),
            field: field.to_owned(),
            message: message.into(),
        }
    }

    /// A string field.
    fn string(
        &self,
        field: &str,
        value: &Spanned<DeValue<'_>>,
        expected: &str,
    ) -> Result<String, SpecError> {
        match value.get_ref() {
            DeValue::String(text) => Ok(text.to_string()),
            other => Err(self.error(
                value.span().start,
                field,
                format!("expected {expected}, found {}", describe(other)),
            )),
        }
    }

    /// A non-empty string field.
    fn non_empty(
        &self,
        field: &str,
        value: &Spanned<DeValue<'_>>,
        expected: &str,
    ) -> Result<String, SpecError> {
        let text = self.string(field, value, expected)?;
        if text.trim().is_empty() {
            return Err(self.error(
                value.span().start,
                field,
                format!("is empty; expected {expected}"),
            ));
        }
        Ok(text)
    }

    /// The `test_exit_codes` array: exit codes 1 to 255, each once.
    fn exit_codes(&self, value: &Spanned<DeValue<'_>>) -> Result<Vec<i32>, SpecError> {
        let field = "test_exit_codes";
        let expected = "an array of exit codes (integers from 1 to 255)";
        let items = self.array(field, value, expected)?;
        let mut codes = Vec::new();
        for item in items.iter() {
            let code = match item.get_ref() {
                DeValue::Integer(integer) => {
                    i32::from_str_radix(&integer.as_str().replace('_', ""), integer.radix())
                        .ok()
                        .filter(|code| (1..=255).contains(code))
                }
                _ => None,
            };
            match code {
                Some(code) if !codes.contains(&code) => codes.push(code),
                Some(code) => {
                    return Err(self.error(
                        item.span().start,
                        field,
                        format!("exit code {code} is listed twice"),
                    ));
                }
                None => {
                    return Err(self.error(
                        item.span().start,
                        field,
                        format!("expected {expected}, found {}", describe(item.get_ref())),
                    ));
                }
            }
        }
        Ok(codes)
    }

    /// The items of an array field, or an error saying `expected`.
    fn array<'v>(
        &self,
        field: &str,
        value: &'v Spanned<DeValue<'v>>,
        expected: &str,
    ) -> Result<&'v DeArray<'v>, SpecError> {
        match value.get_ref() {
            DeValue::Array(items) => Ok(items),
            other => Err(self.error(
                value.span().start,
                field,
                format!("expected {expected}, found {}", describe(other)),
            )),
        }
    }

    /// An array-of-strings field.
    fn strings(&self, field: &str, value: &Spanned<DeValue<'_>>) -> Result<Vec<String>, SpecError> {
        let expected = "an array of strings";
        self.array(field, value, expected)?
            .iter()
            .enumerate()
            .map(|(index, item)| match item.get_ref() {
                DeValue::String(text) => Ok(text.to_string()),
                other => Err(self.error(
                    item.span().start,
                    field,
                    format!(
                        "expected {expected}, found an array whose item {} is {}",
                        index + 1,
                        describe(other)
                    ),
                )),
            })
            .collect()
    }
}

impl Reader<'_> {
    fn top_level(&self, key: &Spanned<Cow<'_, str>>, message: &str) -> SpecError {
        SpecError::Recipe {
            file: self.file.to_owned(),
            line: line_column(self.text, key.span().start).0,
            entry: None,
            repo: None,
            field: key.get_ref().to_string(),
            message: message.to_owned(),
        }
    }

    /// Reads the `number`th `[[recipe]]` entry.
    fn entry(&self, number: usize, item: &Spanned<DeValue<'_>>) -> Result<RecipeEntry, SpecError> {
        let start = item.span().start;
        let mut context = EntryContext {
            number,
            repo: None,
            reader: self,
        };
        let DeValue::Table(table) = item.get_ref() else {
            let found = describe(item.get_ref());
            return Err(context.error(start, "recipe", format!("expected a table, found {found}")));
        };
        let field = |name: &str| {
            table
                .iter()
                .find(|(key, _)| key.get_ref() == name)
                .map(|(_, value)| value)
        };
        if let Some(DeValue::String(repo)) = field("repo").map(Spanned::get_ref) {
            context.repo = Some(repo.to_string());
        }
        for (key, _) in table {
            if !FIELDS.contains(&key.get_ref().as_ref()) {
                let message = format!("unknown field; expected one of {}", FIELDS.join(", "));
                return Err(context.error(key.span().start, key.get_ref(), message));
            }
        }

        let owner_name = "the repository as \"owner/name\"";
        let repo = match field("repo") {
            Some(value) => {
                let repo = context.non_empty("repo", value, owner_name)?;
                let valid = repo.split_once('/').is_some_and(|(owner, name)| {
                    !owner.is_empty() && !name.is_empty() && !name.contains('/')
                });
                if !valid {
                    return Err(context.error(
                        value.span().start,
                        "repo",
                        format!("{repo:?} is not of the form \"owner/name\""),
                    ));
                }
                repo
            }
            None => {
                return Err(context.error(
                    start,
                    "repo",
                    format!("required but missing; add {owner_name}"),
                ));
            }
        };
        let versions = match field("versions") {
            Some(value) => {
                let versions = context.strings("versions", value)?;
                if versions.is_empty() || versions.iter().any(|v| v.trim().is_empty()) {
                    return Err(context.error(
                        value.span().start,
                        "versions",
                        "needs at least one non-empty version; use [\"*\"] for every version",
                    ));
                }
                versions
            }
            None => {
                return Err(context.error(
                    start,
                    "versions",
                    "required but missing; add the task versions it covers, such as [\"4.2\"], or [\"*\"]",
                ));
            }
        };

        let optional_string = |name: &str, expected: &str| -> Result<Option<String>, SpecError> {
            field(name)
                .map(|value| context.non_empty(name, value, expected))
                .transpose()
        };
        let strings = |name: &str| -> Result<Vec<String>, SpecError> {
            field(name)
                .map(|value| context.strings(name, value))
                .transpose()
                .map(Option::unwrap_or_default)
        };
        let at = |name: &str| field(name).map_or(start, |value| value.span().start);

        let test_cmd = optional_string("test_cmd", "a shell command")?;
        let log_parser = match optional_string("log_parser", "a log parser name")? {
            Some(name) => Some(canonical_log_parser(&name).ok_or_else(|| {
                context.error(at("log_parser"), "log_parser", unknown_parser(&name))
            })?),
            None => None,
        };
        let eval_type = match optional_string("eval_type", "\"pass_and_fail\" or \"fail_only\"")? {
            Some(name) => Some(parse_eval_type(&name).ok_or_else(|| {
                context.error(at("eval_type"), "eval_type", unknown_eval_type(&name))
            })?),
            None => None,
        };
        let directives = match optional_string("directives", "paths, modules, django or none")? {
            Some(name) => Some(DirectiveStyle::from_name(&name).ok_or_else(|| {
                context.error(
                    at("directives"),
                    "directives",
                    format!(
                        "unknown directive style {name:?}; expected paths, modules, django or none"
                    ),
                )
            })?),
            None => None,
        };
        if let Some(value) = field("note") {
            context.string("note", value, "a string")?;
        }
        let submodules = match field("submodules") {
            None => true,
            Some(value) => match value.get_ref() {
                DeValue::Boolean(flag) => *flag,
                other => {
                    let message = format!("expected true or false, found {}", describe(other));
                    return Err(context.error(value.span().start, "submodules", message));
                }
            },
        };
        let recipe = Recipe {
            python: optional_string("python", "a string such as \"3.9\"")?,
            packages: strings("packages")?,
            requirements: strings("requirements")?,
            environment_files: strings("environment_files")?,
            exclude_newer: match optional_string("exclude_newer", "a date such as \"2024-08-01\"")?
            {
                Some(date) if !is_date(&date) => {
                    return Err(context.error(
                        at("exclude_newer"),
                        "exclude_newer",
                        format!(
                            "{date:?} is not a date such as \"2024-08-01\" (or an RFC 3339 time)"
                        ),
                    ));
                }
                date => date,
            },
            system_packages: strings("system_packages")?,
            pip_args: strings("pip_args")?,
            pre_install: strings("pre_install")?,
            install: optional_string("install", "a shell command")?,
            env: match field("env") {
                Some(value) => context.env(value)?,
                None => Default::default(),
            },
            services: match field("services") {
                Some(value) => context.services(value)?,
                None => Vec::new(),
            },
            test_exit_codes: match field("test_exit_codes") {
                Some(value) => context.exit_codes(value)?,
                None => Vec::new(),
            },
        };
        Ok(RecipeEntry {
            repo,
            versions,
            test_cmd,
            log_parser,
            eval_type,
            directives,
            recipe,
            submodules,
            source: EntrySource {
                file: self.file.to_owned(),
                number,
                line: line_column(self.text, start).0,
            },
            layer: 0,
        })
    }
}

impl EntryContext<'_> {
    /// The `env` table: variable names to string values.
    fn env(&self, value: &Spanned<DeValue<'_>>) -> Result<BTreeMap<String, String>, SpecError> {
        let DeValue::Table(table) = value.get_ref() else {
            let found = describe(value.get_ref());
            return Err(self.error(
                value.span().start,
                "env",
                format!("expected a table of strings, found {found}"),
            ));
        };
        let mut env = BTreeMap::new();
        for (name, item) in table {
            if !is_env_name(name.get_ref()) {
                let message = format!(
                    "{:?} is not a valid environment variable name (letters, digits and _, not starting with a digit)",
                    name.get_ref()
                );
                return Err(self.error(name.span().start, "env", message));
            }
            let text = match item.get_ref() {
                DeValue::String(text) => text.to_string(),
                other => {
                    let message = format!(
                        "variable {:?}: expected a string, found {}",
                        name.get_ref(),
                        describe(other)
                    );
                    return Err(self.error(item.span().start, "env", message));
                }
            };
            env.insert(name.get_ref().to_string(), text);
        }
        Ok(env)
    }
}

/// True for a portable environment variable name: `[A-Za-z_][A-Za-z0-9_]*`.
pub(super) fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// True for `YYYY-MM-DD`, alone or starting an RFC 3339 time (`2024-08-01T00:00:00Z`), the
/// forms uv's `--exclude-newer` takes.
fn is_date(text: &str) -> bool {
    let bytes = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        bytes
            .get(range)
            .is_some_and(|part| part.iter().all(u8::is_ascii_digit))
    };
    digits(0..4)
        && bytes.get(4) == Some(&b'-')
        && digits(5..7)
        && bytes.get(7) == Some(&b'-')
        && digits(8..10)
        && (bytes.len() == 10
            || (bytes[10] == b'T'
                && text[11..]
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || ":.+-".contains(c))))
}

/// A TOML value's kind with an article, for "found …" in messages.
fn describe(value: &DeValue<'_>) -> &'static str {
    match value {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a datetime",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

/// The 1-based line and column (in characters) of byte offset `at` in `text`.
fn line_column(text: &str, at: usize) -> (usize, usize) {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |newline| newline + 1);
    (line, before[line_start..].chars().count() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_table_parses() {
        let table = RecipeTable::shipped();
        assert!(table.lookup("django/django", Some("4.2")).is_some());
    }

    #[test]
    fn exclude_newer_takes_dates() {
        assert!(is_date("2024-08-01"));
        assert!(is_date("2024-08-01T00:00:00Z"));
        for bad in [
            "",
            "2024-8-1",
            "2024-08-01 x",
            "yesterday",
            "2024-08-01T\u{e9}",
        ] {
            assert!(!is_date(bad), "{bad}");
        }
        let text = "[[recipe]]\nrepo = \"a/b\"\nversions = [\"*\"]\nexclude_newer = \"soon\"\n";
        let error = RecipeTable::parse(text, "r.toml").unwrap_err().to_string();
        assert!(error.contains("exclude_newer"), "{error}");
        let text = "[[recipe]]\nrepo = \"a/b\"\nversions = [\"*\"]\nenvironment_files = [\"environment.yml\"]\nexclude_newer = \"2024-08-01\"\n";
        let table = RecipeTable::parse(text, "r.toml").unwrap();
        let recipe = &table.lookup("a/b", None).unwrap().recipe;
        assert_eq!(recipe.environment_files, ["environment.yml"]);
        assert_eq!(recipe.exclude_newer.as_deref(), Some("2024-08-01"));
    }

    #[test]
    fn submodules_are_checked_out_unless_an_entry_says_the_images_hold_none() {
        let text = "[[recipe]]\nrepo = \"a/b\"\nversions = [\"*\"]\n\n[[recipe]]\nrepo = \"a/c\"\nversions = [\"*\"]\nsubmodules = false\n";
        let table = RecipeTable::parse(text, "r.toml").unwrap();
        assert!(table.lookup("a/b", None).unwrap().submodules);
        assert!(!table.lookup("a/c", None).unwrap().submodules);
        let text = "[[recipe]]\nrepo = \"a/b\"\nversions = [\"*\"]\nsubmodules = \"no\"\n";
        let error = RecipeTable::parse(text, "r.toml").unwrap_err().to_string();
        assert!(
            error.contains("submodules") && error.contains("true or false"),
            "{error}"
        );
        let moto = RecipeTable::shipped();
        assert!(!moto.lookup("getmoto/moto", Some("4.1")).unwrap().submodules);
    }

    #[test]
    fn line_column_counts_characters() {
        assert_eq!(line_column("ab\ncé\nx", 0), (1, 1));
        assert_eq!(line_column("ab\ncé\nx", 6), (2, 3));
        assert_eq!(line_column("ab\ncé\nx", 7), (3, 1));
        assert_eq!(line_column("ab", 99), (1, 3));
    }
}
