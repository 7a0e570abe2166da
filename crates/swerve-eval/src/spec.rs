//! Test specs: how to test one task — the command, its arguments, the test files, the log
//! parser, the eval type and the environment — and the bash eval script built from them.
//!
//! [`resolve_spec`] makes a [`TestSpec`] for a [`Task`](swerve_core::task::Task). Each part
//! comes from the first of these that gives it (the issue's rule):
//!
//! 1. **The task's own fields** (in [`Task::extra`](swerve_core::task::Task::extra)):
//!
//!    | Field | Holds |
//!    |---|---|
//!    | `eval_script` | SWE-bench 5.x: the whole eval script, used verbatim by [`eval_script`]; must hold both output markers |
//!    | `image` (or `docker_image`, `image_name`) | the container image, kept for information |
//!    | `test_cmd` | the test command (shell text) |
//!    | `log_parser` | a parser name (SWE-bench's `parse_log_…` spellings accepted) |
//!    | `eval_type` | `pass_and_fail` or `fail_only` |
//!    | `language` | `python`, `rust`, `go`, `javascript`/`typescript`: chooses the default when one is needed |
//!    | `python` | the Python version, a string |
//!    | `packages` | pip requirement strings: a list, or one space-separated string |
//!    | `install` | the install command |
//!    | `pre_install` | a list of commands (or one) run before install |
//!    | `env` | an object of environment variables |
//!    | `install_config` | SWE-rebench's object: `test_cmd`, `log_parser`, `python`, `packages` (conda names, or `"requirements.txt"` with `reqs_path`), `pip_packages`, `install`, `pre_install`, `env_vars`; the flat fields above win over it |
//!
//!    `null` and `""` count as absent. An environment field the task gives replaces the
//!    recipe entry's field; the entry's other fields stay.
//! 2. **A recipe table** ([`RecipeTable`]) keyed by repository and version: the shipped
//!    `data/recipes.toml` ([`RecipeTable::shipped`]), extended by the user's
//!    `--recipes FILE`s ([`RecipeTable::load`], [`RecipeTable::extend`]).
//! 3. **Defaults by project type**, detected from the base checkout ([`detect_project`]):
//!    pytest configuration → `pytest -rA`; Django's `tests/runtests.py`, `manage.py` or
//!    `runtests.py` → Django's runner; `Cargo.toml` → `cargo test`; `go.mod` → `go test`;
//!    `package.json` → `npm test`; otherwise `python3 -m unittest -v`.
//!
//! The log parser follows the test command: the task's `log_parser` if it gives one, else
//! the parser of the recipe entry that gave the command, else the parser the command implies
//! (`pytest …` → `pytest`, `… -m unittest` → `unittest`, `cargo test` → `cargo`, …), else the
//! recipe entry's parser, else the detected project's. [`SpecSource`] records where each part
//! came from, for `--explain`-style messages.
//!
//! ## Directives
//!
//! As in SWE-bench's `get_test_directives`: every `diff --git a/X b/Y` header of the test
//! patch gives `Y`, except files ending in `.json .png csv .txt .md .jpg .jpeg .pkl .yml
//! .yaml .toml`. Then, by [`DirectiveStyle`]: file paths for pytest-like runners and SymPy's
//! `bin/test`; Django modules for Django's own runner (`tests/` and `.py` stripped, `/` →
//! `.`: `tests/queries/tests.py` → `queries.tests`); dotted modules for unittest and
//! `manage.py test` (`tests/test_x.py` → `tests.test_x`; only `.py` files other than
//! `__init__.py`); none for `cargo test`, `go test` and `npm test`, which run the whole suite
//! (their arguments are test-name filters, not files).
//!
//! SWE-bench's quirks are kept so directives match the ones its datasets were validated
//! with: the header pattern is not anchored to line starts (a patch line quoting
//! `diff --git a/… b/…` counts), a name containing ` b/` is cut at its last one, and Django
//! support modules (`tests/queries/models.py` → `queries.models`) stay (SWE-bench's newest
//! code drops them). Repeated paths are listed once and a trailing `\r` is dropped.
//!
//! ## Recipe files
//!
//! TOML, one `[[recipe]]` table per entry; `data/recipes.toml` documents every field at its
//! top. In short:
//!
//! ```toml
//! [[recipe]]
//! repo = "django/django"              # required, "owner/name"
//! versions = ["4.1", "4.2"]           # required; "*" matches any version
//! test_cmd = "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1"
//! log_parser = "django"               # pytest, pytest_options, pytest_v2, django, unittest,
//!                                     # sympy, cargo, cargo_exact, gotest, junit, r2e_gym, swe_smith, tap, jq
//! eval_type = "pass_and_fail"         # or "fail_only"
//! directives = "django"               # paths, modules, django, none
//! python = "3.9"
//! packages = ["setuptools"]           # pip requirement strings
//! requirements = ["tests/requirements/py3.txt"]  # each existing file: pip install -r
//! system_packages = ["locales"]       # OS packages SWE-bench installs with apt-get
//! pip_args = []                       # extra pip arguments (index options, ...)
//! pre_install = []                    # shell commands run in the checkout before install
//! install = "python -m pip install -e ."
//! env = { LANG = "en_US.UTF-8" }
//! test_exit_codes = []                # exit codes of test_cmd recorded as 0 (e.g. [124])
//! note = "free text, ignored"
//! ```
//!
//! A task's `version` selects the entry: the entry of the latest-added file wins (user files
//! over the shipped one), then an exact version over `"*"`, then the later entry in the file.
//! The winning entry is used whole; entries are not merged.
//!
//! ## Eval script
//!
//! [`eval_script`] writes SWE-bench's `eval.sh` shape (see its docs); a task's own v5
//! `eval_script` is returned unchanged.

#![warn(missing_docs)]

mod detect;
mod directives;
mod error;
mod fields;
mod names;
mod patch;
mod recipe;
mod reinstall;
mod resolve;
mod runner;
mod script;
mod service;
pub(crate) mod shell;
mod table;

pub use detect::{Detection, ProjectType, detect_project};
pub use directives::{DirectiveStyle, test_directives};
pub use error::SpecError;
pub use names::canonical_log_parser;
pub use patch::{NON_TEST_EXTS, TouchedFiles, touched_files};
pub use recipe::Recipe;
pub use reinstall::{Reinstall, reinstall};
pub use resolve::{Origin, SpecSource, TestSpec, resolve_spec};
pub use runner::{RunnerNeed, probe_script, runner_needs};
pub use script::{HEREDOC_DELIMITER, eval_script};
pub use service::Service;
pub(crate) use shell::quote;
pub use table::{EntrySource, RecipeEntry, RecipeTable};
