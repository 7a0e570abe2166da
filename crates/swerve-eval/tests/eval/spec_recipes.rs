//! Tests of `swerve_eval::spec::RecipeTable`: the shipped table, lookup precedence, and
//! load errors with their exact messages.

use std::fs;

use swerve_eval::EvalType;
use swerve_eval::spec::{DirectiveStyle, Recipe, RecipeTable};

fn parse_error(text: &str) -> String {
    RecipeTable::parse(text, "recipes.toml")
        .unwrap_err()
        .to_string()
}

// --- The shipped table ------------------------------------------------------------------

#[test]
fn shipped_table_covers_swe_bench_python_repos() {
    let table = RecipeTable::shipped();
    let cases = [
        ("django/django", "4.2", "django", "3.9"),
        ("sympy/sympy", "1.12", "sympy", "3.9"),
        ("pytest-dev/pytest", "8.0", "pytest", "3.9"),
        ("astropy/astropy", "5.2", "pytest_v2", "3.9"),
        ("astropy/astropy", "v5.3", "pytest_v2", "3.10"),
        ("scikit-learn/scikit-learn", "1.3", "pytest_v2", "3.9"),
        ("sphinx-doc/sphinx", "7.2", "pytest_v2", "3.9"),
        ("psf/requests", "2.31", "pytest_options", "3.9"),
        ("pylint-dev/pylint", "3.0", "pytest_options", "3.9"),
        ("pylint-dev/astroid", "2.15", "pytest", "3.9"),
        ("matplotlib/matplotlib", "3.7", "matplotlib", "3.11"),
        ("pydata/xarray", "2022.06", "pytest", "3.10"),
        ("mwaskom/seaborn", "0.12", "pytest_v2", "3.9"),
        ("pallets/flask", "2.3", "pytest", "3.11"),
    ];
    for (repo, version, parser, python) in cases {
        let entry = table
            .lookup(repo, Some(version))
            .unwrap_or_else(|| panic!("no entry for {repo} {version}"));
        // Listed, or covered by an entry for every version (xarray's: SWE-bench gives all its
        // versions one spec).
        assert!(
            entry.versions.iter().any(|v| v == version || v == "*"),
            "{repo} {version}"
        );
        assert!(entry.test_cmd.is_some(), "{repo} {version}");
        assert_eq!(entry.log_parser, Some(parser), "{repo} {version}");
        assert_eq!(
            entry.recipe.python.as_deref(),
            Some(python),
            "{repo} {version}"
        );
        assert!(entry.recipe.install.is_some(), "{repo} {version}");
        // Every repo also has a catch-all entry for versions the table does not list.
        let fallback = table.lookup(repo, Some("0.0.0-unlisted")).unwrap();
        assert_eq!(fallback.versions, ["*"]);
        assert_eq!(fallback.log_parser, Some(parser));
    }
}

#[test]
fn shipped_values_follow_swe_bench() {
    let table = RecipeTable::shipped();
    let django19 = table.lookup("django/django", Some("1.9")).unwrap();
    assert_eq!(
        django19.test_cmd.as_deref(),
        Some("./tests/runtests.py --verbosity 2")
    );
    let sphinx = table.lookup("sphinx-doc/sphinx", Some("4.1")).unwrap();
    assert_eq!(sphinx.directives, Some(DirectiveStyle::Paths));
    assert_eq!(
        sphinx.recipe.pre_install[0],
        "sed -i 's/pytest/pytest -rA/' tox.ini"
    );
    let astropy = table.lookup("astropy/astropy", Some("4.3")).unwrap();
    assert_eq!(
        astropy.recipe.pre_install,
        [
            r#"sed -i 's/requires = \["setuptools",/requires = \["setuptools==68.0.0",/' pyproject.toml"#
        ]
    );
    let old_astropy = table.lookup("astropy/astropy", Some("1.3")).unwrap();
    assert_eq!(
        old_astropy.test_cmd.as_deref(),
        Some("pytest -rA -vv -o console_output_style=classic --tb=no")
    );
    let pytest = table.lookup("pytest-dev/pytest", Some("5.4")).unwrap();
    assert!(
        pytest
            .recipe
            .packages
            .contains(&"pluggy==0.13.1".to_owned())
    );
    // Environments differ between versions, and so do their keys.
    let django42 = table.lookup("django/django", Some("4.2")).unwrap();
    let django41 = table.lookup("django/django", Some("4.1")).unwrap();
    assert_eq!(django42.recipe.key(), django41.recipe.key());
    assert_ne!(django42.recipe.key(), django19.recipe.key());
}

#[test]
fn recipe_key_is_pinned() {
    // Changing the encoding changes every cache key; do it on purpose only.
    assert_eq!(Recipe::default().key(), "cbdf1bc8eb54b13b");
    let recipe = Recipe {
        python: Some("3.9".into()),
        install: Some("python -m pip install -e .".into()),
        ..Recipe::default()
    };
    assert_eq!(recipe.key(), "a030cb0790d8cbe4");
}

// --- Lookup -----------------------------------------------------------------------------

const BASE: &str = r#"
[[recipe]]
repo = "octo/demo"
versions = ["*"]
test_cmd = "wild"

[[recipe]]
repo = "octo/demo"
versions = ["1.0", "1.1"]
test_cmd = "exact"

[[recipe]]
repo = "octo/demo"
versions = ["1.1"]
test_cmd = "later"
"#;

fn cmd(table: &RecipeTable, version: Option<&str>) -> Option<String> {
    table
        .lookup("octo/demo", version)
        .and_then(|entry| entry.test_cmd.clone())
}

#[test]
fn exact_versions_beat_wildcards_and_later_entries_win() {
    let table = RecipeTable::parse(BASE, "base.toml").unwrap();
    assert_eq!(cmd(&table, Some("1.0")).as_deref(), Some("exact"));
    assert_eq!(cmd(&table, Some("1.1")).as_deref(), Some("later"));
    assert_eq!(cmd(&table, Some("2.0")).as_deref(), Some("wild"));
    assert_eq!(cmd(&table, None).as_deref(), Some("wild"));
    assert!(table.lookup("octo/other", Some("1.0")).is_none());
    assert_eq!(table.entries().count(), 3);
}

#[test]
fn extended_files_override_earlier_ones() {
    let mut table = RecipeTable::parse(BASE, "base.toml").unwrap();
    let user = "[[recipe]]\nrepo = \"octo/demo\"\nversions = [\"*\"]\ntest_cmd = \"user\"\neval_type = \"fail_only\"\n";
    table.extend(RecipeTable::parse(user, "user.toml").unwrap());
    // The user's wildcard beats the base file's exact entries.
    assert_eq!(cmd(&table, Some("1.0")).as_deref(), Some("user"));
    let entry = table.lookup("octo/demo", Some("1.1")).unwrap();
    assert_eq!(entry.eval_type, Some(EvalType::FailOnly));
    assert_eq!(entry.source.file, "user.toml");
    // A third file on top of the two.
    let third = "[[recipe]]\nrepo = \"octo/demo\"\nversions = [\"1.0\"]\ntest_cmd = \"third\"\n";
    table.extend(RecipeTable::parse(third, "third.toml").unwrap());
    assert_eq!(cmd(&table, Some("1.0")).as_deref(), Some("third"));
    assert_eq!(cmd(&table, Some("1.1")).as_deref(), Some("user"));
    // Extending an empty table keeps the order of layers.
    let mut empty = RecipeTable::default();
    empty.extend(table.clone());
    assert_eq!(cmd(&empty, Some("1.0")).as_deref(), Some("third"));
}

#[test]
fn load_reads_a_file_and_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mine.toml");
    fs::write(&path, BASE).unwrap();
    let table = RecipeTable::load(&path).unwrap();
    let entry = table.lookup("octo/demo", Some("1.0")).unwrap();
    assert_eq!(entry.source.file, path.display().to_string());
    assert_eq!((entry.source.number, entry.source.line), (2, 7));

    let missing = dir.path().join("missing.toml");
    assert_eq!(
        RecipeTable::load(&missing).unwrap_err().to_string(),
        format!(
            "{}: cannot read the recipe file: No such file or directory (os error 2)",
            missing.display()
        )
    );
}

#[test]
fn empty_file_is_an_empty_table() {
    let table = RecipeTable::parse("# nothing yet\n", "recipes.toml").unwrap();
    assert_eq!(table.entries().count(), 0);
}

// --- Load errors ------------------------------------------------------------------------

#[test]
fn syntax_errors_give_line_and_column() {
    assert_eq!(
        parse_error("[[recipe]]\nrepo = \"octo/demo\nversions = [\"*\"]\n"),
        "recipes.toml line 2 column 18: invalid TOML: invalid basic string, expected `\"`"
    );
    assert_eq!(
        parse_error("[[recipe]]\nrepo = \"a/b\"\nrepo = \"c/d\"\n"),
        "recipes.toml line 3 column 1: invalid TOML: duplicate key"
    );
}

#[test]
fn structure_errors_name_the_key() {
    assert_eq!(
        parse_error("\n[recipes]\nrepo = \"a/b\"\n"),
        "recipes.toml line 2: key \"recipes\": unknown key; a recipe file holds only [[recipe]] entries"
    );
    assert_eq!(
        parse_error("[recipe]\nrepo = \"a/b\"\n"),
        "recipes.toml line 1: key \"recipe\": expected [[recipe]] entries (an array of tables), found a table"
    );
    assert_eq!(
        parse_error("recipe = [1]\n"),
        "recipes.toml line 1: recipe 1: field \"recipe\": expected a table, found an integer"
    );
}

#[test]
fn entry_errors_name_entry_and_field() {
    let entry = |body: &str| {
        parse_error(&format!(
            "[[recipe]]\nrepo = \"a/b\"\nversions = [\"*\"]\n\n[[recipe]]\n{body}"
        ))
    };
    let cases = [
        (
            "versions = [\"1\"]\n",
            "recipes.toml line 5: recipe 2: field \"repo\": required but missing; add the repository as \"owner/name\"",
        ),
        (
            "repo = \"django\"\nversions = [\"1\"]\n",
            "recipes.toml line 6: recipe 2 (repo \"django\"): field \"repo\": \"django\" is not of the form \"owner/name\"",
        ),
        (
            "repo = 7\nversions = [\"1\"]\n",
            "recipes.toml line 6: recipe 2: field \"repo\": expected the repository as \"owner/name\", found an integer",
        ),
        (
            "repo = \"c/d\"\n",
            "recipes.toml line 5: recipe 2 (repo \"c/d\"): field \"versions\": required but missing; add the task versions it covers, such as [\"4.2\"], or [\"*\"]",
        ),
        (
            "repo = \"c/d\"\nversions = []\n",
            "recipes.toml line 7: recipe 2 (repo \"c/d\"): field \"versions\": needs at least one non-empty version; use [\"*\"] for every version",
        ),
        (
            "repo = \"c/d\"\nversions = \"4.2\"\n",
            "recipes.toml line 7: recipe 2 (repo \"c/d\"): field \"versions\": expected an array of strings, found a string",
        ),
        (
            "repo = \"c/d\"\nversions = [\"1\"]\npython = 3.10\n",
            "recipes.toml line 8: recipe 2 (repo \"c/d\"): field \"python\": expected a string such as \"3.9\", found a float",
        ),
        (
            "repo = \"c/d\"\nversions = [\"1\"]\npackages = [\"a\",\n  2]\n",
            "recipes.toml line 9: recipe 2 (repo \"c/d\"): field \"packages\": expected an array of strings, found an array whose item 2 is an integer",
        ),
        (
            "repo = \"c/d\"\nversions = [\"1\"]\npyhton = \"3.9\"\n",
            "recipes.toml line 8: recipe 2 (repo \"c/d\"): field \"pyhton\": unknown field; expected one of repo, versions, test_cmd, log_parser, eval_type, directives, python, packages, requirements, environment_files, exclude_newer, system_packages, pip_args, pre_install, install, env, services, submodules, test_exit_codes, note",
        ),
        (
            "repo = \"c/d\"\nversions = [\"1\"]\nlog_parser = \"nose\"\n",
            "recipes.toml line 8: recipe 2 (repo \"c/d\"): field \"log_parser\": unknown log parser \"nose\"; known: pytest, pytest_options, pytest_v2, matplotlib, django, unittest, sympy, cargo, cargo_exact, gotest, junit, r2e_gym, swe_smith, tap, jq",
        ),
        (
            "repo = \"c/d\"\nversions = [\"1\"]\neval_type = \"all\"\n",
            "recipes.toml line 8: recipe 2 (repo \"c/d\"): field \"eval_type\": unknown eval type \"all\"; expected \"pass_and_fail\" or \"fail_only\"",
        ),
        (
            "repo = \"c/d\"\nversions = [\"1\"]\ndirectives = \"files\"\n",
            "recipes.toml line 8: recipe 2 (repo \"c/d\"): field \"directives\": unknown directive style \"files\"; expected paths, modules, django or none",
        ),
        (
            "repo = \"c/d\"\nversions = [\"1\"]\ntest_cmd = \"  \"\n",
            "recipes.toml line 8: recipe 2 (repo \"c/d\"): field \"test_cmd\": is empty; expected a shell command",
        ),
        (
            "repo = \"c/d\"\nversions = [\"1\"]\nenv = { \"MY-VAR\" = \"1\" }\n",
            "recipes.toml line 8: recipe 2 (repo \"c/d\"): field \"env\": \"MY-VAR\" is not a valid environment variable name (letters, digits and _, not starting with a digit)",
        ),
        (
            "repo = \"c/d\"\nversions = [\"1\"]\n[recipe.env]\nLANG = 1\n",
            "recipes.toml line 9: recipe 2 (repo \"c/d\"): field \"env\": variable \"LANG\": expected a string, found an integer",
        ),
    ];
    for (body, expected) in cases {
        assert_eq!(entry(body), expected, "entry body {body:?}");
    }
}

// --- Network fixtures ---------------------------------------------------------------------

#[test]
fn services_name_network_fixtures_and_bad_ones_are_errors() {
    use swerve_eval::spec::Service;
    let table = RecipeTable::parse(
        "[[recipe]]\nrepo = \"a/b\"\nversions = [\"*\"]\nservices = [\"tarpit\", \"httpbin\"]\n",
        "recipes.toml",
    )
    .unwrap();
    let entry = table.lookup("a/b", None).unwrap();
    assert_eq!(entry.recipe.services, [Service::Tarpit, Service::Httpbin]);
    // Not part of the environment's key: the fixtures are built apart.
    let mut without = entry.recipe.clone();
    without.services.clear();
    assert_eq!(entry.recipe.key(), without.key());
    // The shipped requests entries ask for both.
    for version in ["2.0", "2.26", "9.9"] {
        let requests = RecipeTable::shipped();
        let entry = requests.lookup("psf/requests", Some(version)).unwrap();
        assert_eq!(
            entry.recipe.services,
            [Service::Httpbin, Service::Tarpit],
            "{version}"
        );
    }
    let entry = |services: &str| {
        parse_error(&format!(
            "[[recipe]]\nrepo = \"a/b\"\nversions = [\"*\"]\nservices = {services}\n"
        ))
    };
    assert_eq!(
        entry("[\"httpbin.org\"]"),
        "recipes.toml line 4: recipe 1 (repo \"a/b\"): field \"services\": unknown service \"httpbin.org\"; expected one of httpbin, tarpit"
    );
    assert_eq!(
        entry("[\"httpbin\", \"httpbin\"]"),
        "recipes.toml line 4: recipe 1 (repo \"a/b\"): field \"services\": \"httpbin\" is listed twice"
    );
    assert_eq!(
        entry("\"httpbin\""),
        "recipes.toml line 4: recipe 1 (repo \"a/b\"): field \"services\": expected an array of strings, found a string"
    );
}

// --- Expected exit codes of the test command ----------------------------------------------

#[test]
fn test_exit_codes_are_exit_codes_each_once_and_not_in_the_key() {
    let table = RecipeTable::parse(
        "[[recipe]]\nrepo = \"a/b\"\nversions = [\"*\"]\ntest_exit_codes = [124, 0x7f]\n",
        "recipes.toml",
    )
    .unwrap();
    let entry = table.lookup("a/b", None).unwrap();
    assert_eq!(entry.recipe.test_exit_codes, [124, 127]);
    let mut without = entry.recipe.clone();
    without.test_exit_codes.clear();
    assert_eq!(entry.recipe.key(), without.key());
    // The shipped SWE-bench Multilingual entry whose command SWE-bench wraps in `timeout`.
    let shipped = RecipeTable::shipped();
    let axios = shipped.lookup("axios/axios", Some("4738")).unwrap();
    assert_eq!(axios.recipe.test_exit_codes, [124]);
    assert!(
        axios
            .test_cmd
            .as_deref()
            .unwrap()
            .starts_with("timeout 10s ")
    );
    let entry = |codes: &str| {
        parse_error(&format!(
            "[[recipe]]\nrepo = \"a/b\"\nversions = [\"*\"]\ntest_exit_codes = {codes}\n"
        ))
    };
    for bad in ["[0]", "[256]", "[-1]", "[\"124\"]", "124"] {
        assert!(
            entry(bad).contains("field \"test_exit_codes\": expected"),
            "{bad}: {}",
            entry(bad)
        );
    }
    assert!(entry("[124, 124]").ends_with("exit code 124 is listed twice"));
}
