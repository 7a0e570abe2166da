//! Test directives: the arguments appended to the test command, from the test patch.

use serde::Serialize;

use super::patch::directive_paths;

/// How the files of a test patch become arguments of the test command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DirectiveStyle {
    /// The file paths (pytest and its wrappers, SymPy's `bin/test`): `tests/test_x.py`.
    Paths,
    /// Dotted module names of the `.py` files other than `__init__.py` (unittest,
    /// `manage.py test`): `tests/test_x.py` → `tests.test_x`.
    Modules,
    /// SWE-bench's rule for Django's `tests/runtests.py`: drop `.py` and a leading `tests/`,
    /// then `/` → `.`: `tests/queries/tests.py` → `queries.tests`.
    Django,
    /// No arguments: the whole suite runs (`cargo test`, `go test`, `npm test`).
    None,
}

impl DirectiveStyle {
    /// Every style, in the order of [`DirectiveStyle::name`]s in messages.
    pub const ALL: [DirectiveStyle; 4] = [
        DirectiveStyle::Paths,
        DirectiveStyle::Modules,
        DirectiveStyle::Django,
        DirectiveStyle::None,
    ];

    /// The style's name in recipe files: `paths`, `modules`, `django` or `none`.
    pub fn name(self) -> &'static str {
        match self {
            DirectiveStyle::Paths => "paths",
            DirectiveStyle::Modules => "modules",
            DirectiveStyle::Django => "django",
            DirectiveStyle::None => "none",
        }
    }

    /// The style with this [`name`](DirectiveStyle::name).
    pub fn from_name(name: &str) -> Option<DirectiveStyle> {
        DirectiveStyle::ALL
            .into_iter()
            .find(|style| style.name() == name)
    }

    /// The style a runner takes, from the repository, the (canonical) log parser and the
    /// test command: Django's rule for `django/django` and any `tests/runtests.py`, dotted
    /// modules for other Django runners and unittest, nothing for cargo, go and junit
    /// (npm), paths otherwise.
    pub(super) fn for_runner(repo: &str, log_parser: &str, test_cmd: &str) -> DirectiveStyle {
        match log_parser {
            "django" if repo == "django/django" || test_cmd.contains("tests/runtests.py") => {
                DirectiveStyle::Django
            }
            "django" | "unittest" => DirectiveStyle::Modules,
            "cargo" | "cargo_exact" | "gotest" | "junit" => DirectiveStyle::None,
            _ => DirectiveStyle::Paths,
        }
    }
}

/// The test directives for `test_patch` in `style` (see the module docs of
/// [`crate::spec`]): SWE-bench's `get_test_directives`, generalised to other runners.
pub fn test_directives(test_patch: &str, style: DirectiveStyle) -> Vec<String> {
    let paths = directive_paths(test_patch);
    match style {
        DirectiveStyle::Paths => paths,
        DirectiveStyle::None => Vec::new(),
        DirectiveStyle::Django => paths
            .iter()
            .map(|path| {
                let path = path.strip_suffix(".py").unwrap_or(path);
                let path = path.strip_prefix("tests/").unwrap_or(path);
                path.replace('/', ".")
            })
            .collect(),
        DirectiveStyle::Modules => paths
            .iter()
            .filter(|path| path.rsplit('/').next() != Some("__init__.py"))
            .filter_map(|path| path.strip_suffix(".py"))
            .map(|module| module.replace('/', "."))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATCH: &str = "diff --git a/tests/queries/tests.py b/tests/queries/tests.py\n\
                         diff --git a/tests/queries/__init__.py b/tests/queries/__init__.py\n\
                         diff --git a/tests/templates/x.html b/tests/templates/x.html\n\
                         diff --git a/docs/notes.txt b/docs/notes.txt\n";

    #[test]
    fn styles_transform_paths() {
        let run = |style| test_directives(PATCH, style);
        assert_eq!(
            run(DirectiveStyle::Paths),
            [
                "tests/queries/tests.py",
                "tests/queries/__init__.py",
                "tests/templates/x.html"
            ]
        );
        assert_eq!(
            run(DirectiveStyle::Django),
            ["queries.tests", "queries.__init__", "templates.x.html"]
        );
        assert_eq!(run(DirectiveStyle::Modules), ["tests.queries.tests"]);
        assert!(run(DirectiveStyle::None).is_empty());
    }

    #[test]
    fn names_round_trip() {
        for style in DirectiveStyle::ALL {
            assert_eq!(DirectiveStyle::from_name(style.name()), Some(style));
        }
    }
}
