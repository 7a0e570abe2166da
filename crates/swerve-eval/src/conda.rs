//! Conda environment files (`environment.yml`) approximated with pip: [`convert`] turns
//! their `dependencies` into pip requirement strings, for recipes whose SWE-bench
//! specification builds the environment with `conda env create` / `conda env update`
//! (xarray's `ci/requirements/environment.yml`).
//!
//! The conversion, entry by entry:
//!
//! - a conda match spec (`name`, `channel::name`, `name=1.2`, `name 1.2.*`, `name>=1,<2`,
//!   `name=1.2=build`) becomes `pypi-name` with the version in pip's syntax: conda's fuzzy
//!   `=1.2` and bare `1.2` are `==1.2.*`, `1.2.*` is `==1.2.*`, the operators `==`, `!=`,
//!   `>=`, `<=`, `>`, `<` and `~=` stay, and a build string is dropped (a note says so);
//! - names that differ between conda-forge and PyPI are renamed ([`PYPI_NAMES`]);
//! - `python` and `pip` are skipped (the recipe's interpreter is used), as are compilers,
//!   system libraries and conda-only packages ([`NOT_ON_PYPI`]): each skipped entry is
//!   listed with its reason, and the environment build writes the list to its log;
//! - the `pip:` sub-list is kept as written, but for pip option lines (`-r`, `-e`,
//!   `--index-url`), which are skipped.
//!
//! Files that are not an environment file (not YAML, `dependencies` not a list, an entry
//! neither a string nor a `pip:` list) are an [`EnvironmentFileError`] naming the file and the
//! entry; no input panics.

use std::fmt;

use yaml_rust2::{Yaml, YamlLoader};

/// Conda-forge package names whose PyPI distribution is named differently, as
/// `(conda, pypi)`; compared case-insensitively with `-`, `_` and `.` alike.
pub const PYPI_NAMES: &[(&str, &str)] = &[
    ("dask-core", "dask"),
    ("iris", "scitools-iris"),
    ("matplotlib-base", "matplotlib"),
    ("msgpack-python", "msgpack"),
    ("netcdf4", "netCDF4"),
    ("pytables", "tables"),
    ("python-graphviz", "graphviz"),
    ("pytorch", "torch"),
    ("pyqt", "PyQt5"),
];

/// Conda packages that pip cannot install, with why: compilers, system libraries and tools,
/// and Python packages published only on conda channels.
pub const NOT_ON_PYPI: &[(&str, &str)] = &[
    ("c-compiler", "a compiler toolchain"),
    ("cxx-compiler", "a compiler toolchain"),
    ("fortran-compiler", "a compiler toolchain"),
    ("compilers", "a compiler toolchain"),
    ("make", "a system tool"),
    ("pkg-config", "a system tool"),
    ("nodejs", "a system tool"),
    ("git", "a system tool"),
    (
        "graphviz",
        "a system tool (its Python bindings are python-graphviz)",
    ),
    ("hdf4", "a system library"),
    ("hdf5", "a system library"),
    ("libnetcdf", "a system library"),
    ("netcdf-fortran", "a system library"),
    ("libgdal", "a system library"),
    ("proj", "a system library"),
    ("geos", "a system library"),
    ("zlib", "a system library"),
    ("openblas", "a system library"),
    ("libblas", "a system library"),
    ("eccodes", "a system library (ecCodes)"),
    ("cdms2", "a conda-only package (not on PyPI)"),
    ("pynio", "a conda-only package (not on PyPI)"),
    // On PyPI, but useless without a C library conda installs with them and pip cannot:
    // they install, then fail at import with an error other than ImportError, which breaks
    // test collection where the tests only skip on ImportError (xarray's).
    ("cfgrib", NEEDS_ECCODES),
    ("python-eccodes", NEEDS_ECCODES),
];

/// Why `cfgrib` and `python-eccodes` are left out.
const NEEDS_ECCODES: &str = "needs the ecCodes C library, which pip does not install (its import fails with a RuntimeError)";

/// An environment file's dependencies as pip requirements.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Converted {
    /// pip requirement strings: the converted conda entries, then the `pip:` entries.
    pub requirements: Vec<String>,
    /// Entries left out, with why (`"hdf5: a system library"`).
    pub skipped: Vec<String>,
    /// Entries converted with a loss (a dropped build string or `|` alternative).
    pub notes: Vec<String>,
}

/// A file that is not a conda environment file swerve can read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvironmentFileError {
    /// The file, as named by the recipe.
    pub file: String,
    /// The entry at fault (`dependencies[3]`), if one is.
    pub entry: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for EnvironmentFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.entry {
            Some(entry) => write!(f, "{}: {entry}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

impl std::error::Error for EnvironmentFileError {}

/// Converts the conda environment file `text` (named `file` in errors) to pip requirements.
pub fn convert(text: &str, file: &str) -> Result<Converted, EnvironmentFileError> {
    let error = |entry: Option<String>, message: String| EnvironmentFileError {
        file: file.to_owned(),
        entry,
        message,
    };
    let documents = YamlLoader::load_from_str(text)
        .map_err(|scan| error(None, format!("not valid YAML: {scan}")))?;
    let document = match documents.as_slice() {
        [document] => document,
        [] => return Err(error(None, "is empty".into())),
        _ => {
            return Err(error(
                None,
                format!(
                    "holds {} YAML documents; an environment file holds one",
                    documents.len()
                ),
            ));
        }
    };
    let Yaml::Hash(top) = document else {
        return Err(error(
            None,
            format!(
                "expected a mapping (name, channels, dependencies), found {}",
                kind(document)
            ),
        ));
    };
    let mut converted = Converted::default();
    let dependencies = match top.get(&Yaml::String("dependencies".into())) {
        None | Some(Yaml::Null) => return Ok(converted),
        Some(Yaml::Array(items)) => items,
        Some(other) => {
            return Err(error(
                Some("dependencies".into()),
                format!("expected a list, found {}", kind(other)),
            ));
        }
    };
    let mut pip = Vec::new();
    for (index, item) in dependencies.iter().enumerate() {
        let entry = format!("dependencies[{}]", index + 1);
        match item {
            Yaml::String(spec) => match conda_requirement(spec) {
                Ok(Conversion::Requirement(requirement, note)) => {
                    converted.requirements.push(requirement);
                    converted.notes.extend(note);
                }
                Ok(Conversion::Skipped(reason)) => {
                    converted.skipped.push(format!("{}: {reason}", spec.trim()));
                }
                Err(message) => return Err(error(Some(format!("{entry} ({spec:?})")), message)),
            },
            Yaml::Hash(map) => {
                for (key, value) in map {
                    if key.as_str() != Some("pip") {
                        return Err(error(
                            Some(entry.clone()),
                            format!(
                                "expected a package or a `pip:` list, found a mapping with key {}",
                                describe_key(key)
                            ),
                        ));
                    }
                    let items = match value {
                        Yaml::Array(items) => items.as_slice(),
                        Yaml::Null => &[],
                        other => {
                            return Err(error(
                                Some(format!("{entry}.pip")),
                                format!("expected a list, found {}", kind(other)),
                            ));
                        }
                    };
                    for (pip_index, pip_item) in items.iter().enumerate() {
                        let pip_entry = format!("{entry}.pip[{}]", pip_index + 1);
                        let Yaml::String(requirement) = pip_item else {
                            return Err(error(
                                Some(pip_entry),
                                format!("expected a requirement string, found {}", kind(pip_item)),
                            ));
                        };
                        let requirement = requirement.trim();
                        if requirement.starts_with('-') {
                            converted.skipped.push(format!(
                                "pip: {requirement}: a pip option line, not a requirement"
                            ));
                        } else if !requirement.is_empty() {
                            pip.push(requirement.to_owned());
                        }
                    }
                }
            }
            other => {
                return Err(error(
                    Some(entry),
                    format!("expected a package or a `pip:` list, found {}", kind(other)),
                ));
            }
        }
    }
    converted.requirements.extend(pip);
    Ok(converted)
}

/// What one conda entry becomes.
#[derive(Debug, PartialEq, Eq)]
enum Conversion {
    /// A pip requirement, with a note if something was dropped.
    Requirement(String, Option<String>),
    /// Nothing: pip cannot install it, for this reason.
    Skipped(String),
}

/// Converts one conda match spec; an error message if it is not one.
fn conda_requirement(spec: &str) -> Result<Conversion, String> {
    let spec = spec.trim();
    // `conda-forge::numpy`, `conda-forge/label/dev::numpy`.
    let spec = spec.rsplit_once("::").map_or(spec, |(_, rest)| rest).trim();
    let name_end = spec
        .find(|c: char| !(c.is_ascii_alphanumeric() || "-_.".contains(c)))
        .unwrap_or(spec.len());
    let (name, rest) = spec.split_at(name_end);
    if name.is_empty() || !name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return Err("expected a conda package name such as `numpy` or `numpy>=1.20`".into());
    }
    let key = normalize(name);
    if key == "python" {
        return Ok(Conversion::Skipped(
            "the interpreter: the recipe's Python is used".into(),
        ));
    }
    if key == "pip" {
        return Ok(Conversion::Skipped("installed with the interpreter".into()));
    }
    if let Some((_, reason)) = NOT_ON_PYPI
        .iter()
        .find(|(conda, _)| normalize(conda) == key)
    {
        return Ok(Conversion::Skipped((*reason).to_owned()));
    }
    let pypi = PYPI_NAMES
        .iter()
        .find(|(conda, _)| normalize(conda) == key)
        .map_or(name, |(_, pypi)| pypi);
    let rest = rest.trim();
    if rest.starts_with('[') {
        return Ok(Conversion::Requirement(
            pypi.to_owned(),
            Some(format!(
                "{spec}: conda's bracket syntax dropped, installed unpinned"
            )),
        ));
    }
    let (version, build) = split_version(rest);
    let mut note = build.map(|build| format!("{spec}: build string {build:?} dropped"));
    let requirement = match pip_version(&version) {
        Ok(pip) => format!("{pypi}{pip}"),
        Err(why) => {
            note = Some(format!("{spec}: {why}; installed unpinned"));
            pypi.to_owned()
        }
    };
    Ok(Conversion::Requirement(requirement, note))
}

/// Splits what follows the name into the version spec and the build string, if any:
/// `=1.2=py_0`, `1.2 py_0`, `>= 1.2`.
fn split_version(rest: &str) -> (String, Option<String>) {
    // `=1.2=build`: a single `=`, then the version, then the build after another `=`.
    if let Some(after) = rest.strip_prefix('=')
        && !after.starts_with('=')
        && let Some((version, build)) = after.split_once('=')
    {
        return (
            format!("={}", version.trim()),
            Some(build.trim().to_owned()),
        );
    }
    let mut words = rest.split_whitespace();
    let mut version = words.next().unwrap_or_default().to_owned();
    // `>= 1.2`: an operator alone takes the next word.
    if !version.is_empty() && version.chars().all(|c| "<>=!~".contains(c)) {
        version.push_str(words.next().unwrap_or_default());
    }
    let build: Vec<&str> = words.collect();
    let build = (!build.is_empty()).then(|| build.join(" "));
    (version, build)
}

/// A conda version spec (`=1.2`, `1.2.*`, `>=1,<2`) in pip's syntax (`==1.2.*`, `>=1,<2`),
/// with a leading operator; empty for none. An error says why it cannot be converted.
fn pip_version(version: &str) -> Result<String, String> {
    if version.is_empty() {
        return Ok(String::new());
    }
    if version.contains('|') {
        return Err("pip has no `|` (or) in versions".into());
    }
    let mut clauses = Vec::new();
    for clause in version.split(',') {
        let clause = clause.trim();
        let operator_end = clause
            .find(|c: char| !"<>=!~".contains(c))
            .unwrap_or(clause.len());
        let (operator, number) = clause.split_at(operator_end);
        let valid_number = !number.is_empty()
            && number
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || ".*+!_-".contains(c));
        if !valid_number {
            return Err(format!("cannot convert the version {version:?}"));
        }
        let fuzzy = |number: &str| {
            if number.ends_with('*') {
                format!("=={number}")
            } else {
                format!("=={number}.*")
            }
        };
        clauses.push(match operator {
            "" | "=" => fuzzy(number),
            "==" | "!=" | ">=" | "<=" | ">" | "<" | "~=" => format!("{operator}{number}"),
            _ => return Err(format!("unknown operator {operator:?} in {version:?}")),
        });
    }
    Ok(clauses.join(","))
}

/// A package name compared as pip does: lowercase, `-`, `_` and `.` alike.
fn normalize(name: &str) -> String {
    name.to_ascii_lowercase().replace(['_', '.'], "-")
}

/// A YAML value's kind with an article, for "found …" in messages.
fn kind(value: &Yaml) -> &'static str {
    match value {
        Yaml::Real(_) => "a number",
        Yaml::Integer(_) => "an integer",
        Yaml::String(_) => "a string",
        Yaml::Boolean(_) => "a boolean",
        Yaml::Array(_) => "a list",
        Yaml::Hash(_) => "a mapping",
        Yaml::Alias(_) => "an alias",
        Yaml::Null => "nothing (null)",
        Yaml::BadValue => "an invalid value",
    }
}

/// A mapping key for messages.
fn describe_key(key: &Yaml) -> String {
    match key {
        Yaml::String(text) => format!("{text:?}"),
        other => kind(other).to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `ci/requirements/environment.yml` of pydata/xarray at 6bb2b85549 (the base commit of
    /// SWE-bench's pydata__xarray-6599).
    const XARRAY_2022_03: &str = include_str!("../tests/fixtures/conda/xarray-6bb2b85549.yml");
    /// `ci/requirements/environment.yml` of pydata/xarray at 41fef6f135 (the base commit of
    /// SWE-bench's pydata__xarray-7393).
    const XARRAY_2022_12: &str = include_str!("../tests/fixtures/conda/xarray-41fef6f135.yml");

    fn requirement(spec: &str) -> Conversion {
        conda_requirement(spec).unwrap()
    }

    #[test]
    fn match_specs_become_pip_requirements() {
        let plain = |text: &str| Conversion::Requirement(text.to_owned(), None);
        assert_eq!(requirement("numpy"), plain("numpy"));
        assert_eq!(requirement("numpy=1.2"), plain("numpy==1.2.*"));
        assert_eq!(requirement("numpy 1.2.*"), plain("numpy==1.2.*"));
        assert_eq!(requirement("numpy==1.2.3"), plain("numpy==1.2.3"));
        assert_eq!(requirement("numpy >=1.20,<2"), plain("numpy>=1.20,<2"));
        assert_eq!(requirement("numpy >= 1.20"), plain("numpy>=1.20"));
        assert_eq!(requirement("fsspec!=2021.7.0"), plain("fsspec!=2021.7.0"));
        assert_eq!(requirement("conda-forge::netcdf4"), plain("netCDF4"));
        assert_eq!(
            requirement("matplotlib-base>=3.5"),
            plain("matplotlib>=3.5")
        );
        assert_eq!(requirement("pytables"), plain("tables"));
        assert_eq!(requirement("iris"), plain("scitools-iris"));
        assert_eq!(requirement("python-dateutil"), plain("python-dateutil"));
        assert_eq!(requirement("pytest-env"), plain("pytest-env"));
        assert!(matches!(
            requirement("numpy=1.2=py38_0"),
            Conversion::Requirement(ref r, Some(_)) if r == "numpy==1.2.*"
        ));
        assert!(matches!(
            requirement("numpy 1.2|1.3"),
            Conversion::Requirement(ref r, Some(_)) if r == "numpy"
        ));
        for skipped in [
            "python=3.10",
            "pip",
            "hdf5",
            "libnetcdf",
            "c-compiler",
            "cdms2",
            "cfgrib",
        ] {
            assert!(
                matches!(requirement(skipped), Conversion::Skipped(_)),
                "{skipped}"
            );
        }
        assert!(conda_requirement(">=1.2").is_err());
        assert!(conda_requirement("").is_err());
    }

    #[test]
    fn xarray_2022_03() {
        let converted = convert(XARRAY_2022_03, "environment.yml").unwrap();
        let requirements = &converted.requirements;
        for wanted in [
            "bottleneck",
            "cftime",
            "dask",
            "netCDF4",
            "scitools-iris",
            "matplotlib",
        ] {
            assert!(
                requirements.iter().any(|r| r == wanted),
                "{wanted}: {requirements:?}"
            );
        }
        assert!(requirements.iter().any(|r| r == "fsspec!=2021.7.0"));
        assert_eq!(requirements.last().map(String::as_str), Some("numbagg"));
        for not_pip in ["hdf5", "pip", "cdms2"] {
            assert!(!requirements.iter().any(|r| r == not_pip), "{not_pip}");
            assert!(
                converted
                    .skipped
                    .iter()
                    .any(|s| s.starts_with(&format!("{not_pip}:"))),
                "{not_pip}: {:?}",
                converted.skipped
            );
        }
    }

    #[test]
    fn xarray_2022_12() {
        let converted = convert(XARRAY_2022_12, "environment.yml").unwrap();
        assert_eq!(
            converted.requirements.len(),
            39,
            "{:?}",
            converted.requirements
        );
        assert!(converted.requirements.iter().any(|r| r == "dask"));
        assert!(converted.requirements.iter().any(|r| r == "flox"));
        assert_eq!(
            converted.skipped,
            [
                "cdms2: a conda-only package (not on PyPI)",
                "cfgrib: needs the ecCodes C library, which pip does not install (its import fails with a RuntimeError)",
                "hdf5: a system library",
                "pip: installed with the interpreter"
            ]
        );
        assert!(converted.notes.is_empty());
    }

    #[test]
    fn pip_section_is_kept_but_options() {
        let text = "dependencies:\n  - numpy\n  - pip:\n    - foo[bar]>=1\n    - -e .\n";
        let converted = convert(text, "env.yml").unwrap();
        assert_eq!(converted.requirements, ["numpy", "foo[bar]>=1"]);
        assert_eq!(converted.skipped.len(), 1);
    }

    #[test]
    fn bad_files_name_file_and_entry() {
        let message = |text: &str| convert(text, "ci/env.yml").unwrap_err().to_string();
        assert!(message("").starts_with("ci/env.yml: is empty"));
        assert!(message("[1, 2]").contains("expected a mapping"));
        assert!(message("dependencies: numpy").contains("dependencies: expected a list"));
        let entry = message("dependencies:\n  - numpy\n  - 3\n");
        assert!(
            entry.contains("dependencies[2]: expected a package"),
            "{entry}"
        );
        let pip = message("dependencies:\n  - pip:\n    - {a: b}\n");
        assert!(pip.contains("dependencies[1].pip[1]"), "{pip}");
        let name = message("dependencies:\n  - '>=1'\n");
        assert!(name.contains("dependencies[1]"), "{name}");
        assert!(message("a: [").contains("not valid YAML"));
        assert!(message("name: x\n---\nname: y\n").contains("2 YAML documents"));
        assert_eq!(convert("name: x\n", "f").unwrap(), Converted::default());
    }

    proptest! {
        /// Any text, YAML-like or not, gives requirements or an error naming the file.
        #[test]
        fn arbitrary_text_never_panics(text in "(?s).{0,200}") {
            if let Err(error) = convert(&text, "fuzz.yml") {
                prop_assert_eq!(error.file, "fuzz.yml");
            }
        }

        /// Environment files with arbitrary entries convert or fail cleanly, and every
        /// requirement starts with a package name.
        #[test]
        fn arbitrary_entries_never_panic(
            entries in proptest::collection::vec("[ -~]{0,24}", 0..8),
            pip in proptest::collection::vec("[ -~]{0,24}", 0..4),
        ) {
            let mut text = String::from("name: t\ndependencies:\n");
            for entry in &entries {
                text.push_str(&format!("  - {entry:?}\n"));
            }
            text.push_str("  - pip:\n");
            for entry in &pip {
                text.push_str(&format!("    - {entry:?}\n"));
            }
            match convert(&text, "fuzz.yml") {
                Ok(converted) => {
                    for requirement in &converted.requirements {
                        prop_assert!(!requirement.trim().is_empty());
                    }
                }
                Err(error) => prop_assert!(error.to_string().starts_with("fuzz.yml: ")),
            }
        }

        /// Deeply nested or odd YAML (flow collections, anchors) never panics either.
        #[test]
        fn nested_yaml_never_panics(depth in 0usize..400, tail in "[\\[\\]{}:,&*!|>'\" a-z-]{0,40}") {
            let text = format!("dependencies: {}{}{}", "[".repeat(depth), tail, "]".repeat(depth));
            let _ = convert(&text, "fuzz.yml");
        }
    }
}
