//! One task record as a JSON object, both ways: [`Task::from_object`] and [`Task::to_json`].
//!
//! A [`Layout`] remembers how the source object spelled the task (key order, `null`
//! values, test lists as lists or JSON-encoded strings) so writing a loaded task back
//! gives the same JSON. Tasks built in code get SWE-bench's key order and plain lists.

use std::fmt;

use serde_json::{Map, Value};

use super::Task;
use super::error::{TaskFileErrorKind, describe};
use super::field::Field;

/// What `FAIL_TO_PASS` and `PASS_TO_PASS` must hold.
const TEST_LIST: &str = "a list of test names or a JSON-encoded string of one";

/// How a test list was written in the source.
#[derive(Debug, Clone)]
enum ListForm {
    /// A JSON list of strings (also how new tasks are written).
    List,
    /// A JSON-encoded string of a list, kept verbatim (Hugging Face SWE-bench style).
    Encoded(String),
    /// `null`.
    Null,
}

/// How the source object spelled a task, so writing it back changes nothing.
#[derive(Debug, Clone)]
pub(super) struct Layout {
    /// Every key of the source object, typed and extra, in source order.
    order: Vec<String>,
    /// Optional typed fields that were `null` (rather than absent).
    nulls: Vec<Field>,
    fail_to_pass: ListForm,
    pass_to_pass: ListForm,
    /// Fields an image row or a Multi-SWE-bench row lacked or named differently, with the
    /// value derived for them (see [`Task::image`] and [`super::multi_swe_bench`]); written
    /// back only if changed.
    derived: Vec<(Field, Value)>,
    /// The source's own values of keys a derived field took the place of (a
    /// Multi-SWE-bench row's bare `repo` name), written back while the field is unchanged.
    replaced: Vec<(Field, Value)>,
}

impl Layout {
    /// The layout of a task built in code: SWE-bench's key order, lists as lists.
    pub(super) fn canonical() -> Self {
        Self {
            order: Field::ALL
                .iter()
                .map(|field| field.name().to_owned())
                .collect(),
            nulls: Vec::new(),
            fail_to_pass: ListForm::List,
            pass_to_pass: ListForm::List,
            derived: Vec::new(),
            replaced: Vec::new(),
        }
    }

    /// Whether `value` is what was derived for `field` (and so not the source's own).
    fn derived_unchanged(&self, field: Field, value: &Value) -> bool {
        self.derived
            .iter()
            .any(|(f, derived)| *f == field && derived == value)
    }
}

/// Why a JSON object is not a valid task: the field and what is wrong with it.
#[derive(Debug)]
pub(super) struct FieldError {
    /// The record's `instance_id`, when it is a string.
    pub(super) instance_id: Option<String>,
    pub(super) field: Field,
    pub(super) kind: TaskFileErrorKind,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.instance_id {
            Some(id) => write!(f, "task {id:?}: ")?,
            None => f.write_str("task: ")?,
        }
        write!(f, "field {:?}: {}", self.field.name(), self.kind)
    }
}

impl Task {
    /// Reads a task from one JSON object; unknown keys go to [`Task::extra`].
    pub(super) fn from_object(mut object: Map<String, Value>) -> Result<Task, FieldError> {
        let known_id = object
            .get(Field::InstanceId.name())
            .and_then(Value::as_str)
            .map(str::to_owned);
        let fail = |(field, kind)| FieldError {
            instance_id: known_id.clone(),
            field,
            kind,
        };
        let mut reader = Reader {
            order: object.keys().cloned().collect(),
            object: &mut object,
            nulls: Vec::new(),
        };
        // A row naming its image (R2E-Gym, SWE-smith, SWE-rebench) may lack the fields a
        // base checkout needs: the repository's commit is whatever the image holds. A
        // Multi-SWE-bench row names them its own way.
        let derived: Vec<(Field, Value)> = super::image::derive_missing(reader.object)
            .into_iter()
            .map(|(field, value)| (field, Value::String(value)))
            .chain(super::multi_swe_bench::derive_missing(reader.object))
            .collect();
        let replaced: Vec<(Field, Value)> = derived
            .iter()
            .filter_map(|(field, _)| Some((*field, reader.object.get(field.name())?.clone())))
            .collect();
        let take_derived = |reader: &mut Reader, field: Field| {
            let (_, value) = derived.iter().find(|(f, _)| *f == field)?;
            reader.object.shift_remove(field.name());
            Some(value.clone())
        };
        let mut derive = |field: Field, what| match take_derived(&mut reader, field) {
            Some(Value::String(value)) => Ok(value),
            _ => reader.required(field, what),
        };
        let instance_id = derive(
            Field::InstanceId,
            "the task's unique id, e.g. \"django__django-11099\"",
        )
        .map_err(fail)?;
        let repo = derive(Field::Repo, "the GitHub repository as \"owner/name\"").map_err(fail)?;
        let base_commit = derive(
            Field::BaseCommit,
            "the commit id to check out before applying patches",
        )
        .map_err(fail)?;
        let problem_statement =
            derive(Field::ProblemStatement, "the issue text the agent is given").map_err(fail)?;
        let patch = match take_derived(&mut reader, Field::Patch) {
            Some(Value::String(patch)) => Some(patch),
            _ => reader.optional(Field::Patch).map_err(fail)?,
        };
        let test_patch = reader.optional(Field::TestPatch).map_err(fail)?;
        let hints_text = reader.optional(Field::HintsText).map_err(fail)?;
        let created_at = reader.optional(Field::CreatedAt).map_err(fail)?;
        let version = reader.optional(Field::Version).map_err(fail)?;
        let environment_setup_commit = reader
            .optional(Field::EnvironmentSetupCommit)
            .map_err(fail)?;
        let mut tests = |field: Field| match take_derived(&mut reader, field) {
            Some(value) => Reader::test_list(field, value).map(|tests| (tests, ListForm::List)),
            None => reader.tests(field),
        };
        let (fail_to_pass, fail_form) = tests(Field::FailToPass).map_err(fail)?;
        let (pass_to_pass, pass_form) = tests(Field::PassToPass).map_err(fail)?;
        let layout = Layout {
            order: reader.order,
            nulls: reader.nulls,
            fail_to_pass: fail_form,
            pass_to_pass: pass_form,
            derived,
            replaced,
        };
        Ok(Task {
            instance_id,
            repo,
            base_commit,
            patch,
            test_patch,
            problem_statement,
            hints_text,
            created_at,
            version,
            environment_setup_commit,
            fail_to_pass,
            pass_to_pass,
            extra: object,
            layout,
        })
    }

    /// The task as a JSON object. A loaded task comes out as it was read (key order,
    /// `null`s, string-encoded test lists), apart from the fields changed since; fields
    /// that were absent and are now set come after the source's keys, and new extra keys
    /// after those. Entries of [`Task::extra`] named like a typed field are not written.
    pub fn to_json(&self) -> Map<String, Value> {
        let mut out = Map::new();
        for key in &self.layout.order {
            let value = match Field::from_name(key) {
                Some(field) => self.value_of(field, true),
                None => self.extra.get(key).cloned(),
            };
            if let Some(value) = value {
                out.insert(key.clone(), value);
            }
        }
        for field in Field::ALL {
            if !self.layout.order.iter().any(|key| key == field.name())
                && let Some(value) = self.value_of(field, false)
            {
                out.insert(field.name().to_owned(), value);
            }
        }
        for (key, value) in &self.extra {
            if !out.contains_key(key) && Field::from_name(key).is_none() {
                out.insert(key.clone(), value.clone());
            }
        }
        out
    }

    /// The JSON value to write for `field`, if any. `listed`: the source had the key.
    fn value_of(&self, field: Field, listed: bool) -> Option<Value> {
        let text = |value: &str| Some(Value::String(value.to_owned()));
        // For a value still as derived, what to write: the source's own value where it had
        // one, nothing where the field was absent. `None` for every other value.
        let as_derived = |value: Value| {
            if !self.layout.derived_unchanged(field, &value) {
                return None;
            }
            let original = self.layout.replaced.iter().find(|(f, _)| *f == field);
            match (original, listed) {
                (Some((_, original)), _) => Some(Some(original.clone())),
                (None, false) => Some(None),
                (None, true) => None,
            }
        };
        let optional = |value: &Option<String>| match value {
            Some(value) => as_derived(Value::String(value.clone())).unwrap_or_else(|| text(value)),
            None if listed && self.layout.nulls.contains(&field) => Some(Value::Null),
            None => None,
        };
        let tests = |tests: &[String], form: &ListForm| {
            let list = || tests_value(tests, &ListForm::List);
            if let Some(derived) = as_derived(list()) {
                return derived;
            }
            if listed {
                Some(tests_value(tests, form))
            } else {
                (!tests.is_empty()).then(list)
            }
        };
        let required = |value: &String| {
            as_derived(Value::String(value.clone())).unwrap_or_else(|| text(value))
        };
        match field {
            Field::Repo => required(&self.repo),
            Field::InstanceId => required(&self.instance_id),
            Field::BaseCommit => required(&self.base_commit),
            Field::ProblemStatement => required(&self.problem_statement),
            Field::Patch => optional(&self.patch),
            Field::TestPatch => optional(&self.test_patch),
            Field::HintsText => optional(&self.hints_text),
            Field::CreatedAt => optional(&self.created_at),
            Field::Version => optional(&self.version),
            Field::EnvironmentSetupCommit => optional(&self.environment_setup_commit),
            Field::FailToPass => tests(&self.fail_to_pass, &self.layout.fail_to_pass),
            Field::PassToPass => tests(&self.pass_to_pass, &self.layout.pass_to_pass),
        }
    }
}

/// A test list in its source form: the verbatim string if it still decodes to `tests`,
/// `null` if it was `null` and is still empty, otherwise as the form asks.
fn tests_value(tests: &[String], form: &ListForm) -> Value {
    match form {
        ListForm::Encoded(raw) if decode_tests(raw).as_deref() == Some(tests) => {
            Value::String(raw.clone())
        }
        ListForm::Encoded(_) => Value::String(encode_tests(tests)),
        ListForm::Null if tests.is_empty() => Value::Null,
        ListForm::List | ListForm::Null => tests.iter().cloned().map(Value::String).collect(),
    }
}

/// A list of strings, decoded from a JSON-encoded string.
fn decode_tests(raw: &str) -> Option<Vec<String>> {
    serde_json::from_str(raw).ok()
}

/// JSON-encodes a list the way Python's `json.dumps` spaces it: `["a", "b"]`.
fn encode_tests(tests: &[String]) -> String {
    let items: Vec<String> = tests
        .iter()
        .map(|test| Value::from(test.as_str()).to_string())
        .collect();
    format!("[{}]", items.join(", "))
}

/// Takes typed fields out of a JSON object, leaving the extra ones.
struct Reader<'a> {
    object: &'a mut Map<String, Value>,
    order: Vec<String>,
    nulls: Vec<Field>,
}

type FieldResult<T> = Result<T, (Field, TaskFileErrorKind)>;

impl Reader<'_> {
    /// Takes a string field that must be present; `what` says what it should hold.
    fn required(&mut self, field: Field, what: &'static str) -> FieldResult<String> {
        match self.object.shift_remove(field.name()) {
            Some(Value::String(value)) => Ok(value),
            Some(other) => Err((field, wrong_type("a string", describe(&other)))),
            None => Err((field, TaskFileErrorKind::MissingField { what })),
        }
    }

    /// Takes a field that may be a string, `null` or absent.
    fn optional(&mut self, field: Field) -> FieldResult<Option<String>> {
        match self.object.shift_remove(field.name()) {
            Some(Value::String(value)) => Ok(Some(value)),
            Some(Value::Null) => {
                self.nulls.push(field);
                Ok(None)
            }
            Some(other) => Err((field, wrong_type("a string or null", describe(&other)))),
            None => Ok(None),
        }
    }

    /// Takes a test list: a list of strings, a JSON-encoded string of one, `null` or absent.
    fn tests(&mut self, field: Field) -> FieldResult<(Vec<String>, ListForm)> {
        let wrong = |found: String| (field, wrong_type(TEST_LIST, found));
        match self.object.shift_remove(field.name()) {
            None => Ok((Vec::new(), ListForm::List)),
            Some(Value::Null) => Ok((Vec::new(), ListForm::Null)),
            Some(list @ Value::Array(_)) => {
                Self::test_list(field, list).map(|tests| (tests, ListForm::List))
            }
            Some(Value::String(raw)) => match decode_tests(&raw) {
                Some(tests) => Ok((tests, ListForm::Encoded(raw))),
                None => Err(wrong(format!(
                    "a string that does not decode to a list of strings: {:?}",
                    excerpt(&raw)
                ))),
            },
            Some(other) => Err(wrong(describe(&other).to_owned())),
        }
    }
}

impl Reader<'_> {
    /// The strings of a JSON list of test names.
    fn test_list(field: Field, list: Value) -> FieldResult<Vec<String>> {
        let Value::Array(items) = list else {
            return Err((field, wrong_type(TEST_LIST, describe(&list))));
        };
        let mut tests = Vec::with_capacity(items.len());
        for (index, item) in items.into_iter().enumerate() {
            match item {
                Value::String(test) => tests.push(test),
                other => {
                    let found = format!("a list whose item {} is {}", index + 1, describe(&other));
                    return Err((field, wrong_type(TEST_LIST, found)));
                }
            }
        }
        Ok(tests)
    }
}

fn wrong_type(expected: &'static str, found: impl Into<String>) -> TaskFileErrorKind {
    TaskFileErrorKind::WrongType {
        expected,
        found: found.into(),
    }
}

/// The start of `text`, at most 60 characters, with "…" if cut.
fn excerpt(text: &str) -> String {
    const MAX: usize = 60;
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}
