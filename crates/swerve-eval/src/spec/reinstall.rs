//! Whether the eval script must re-run the recipe's install command, or can keep the
//! editable install the environment was built with.
//!
//! SWE-bench's eval script re-runs the install (`pip install -e .`) before the tests. Under
//! an editable install the project's sources are imported from the checkout itself, so the
//! re-run changes nothing unless the patch changes what the install *builds*: packaging
//! metadata (`setup.py`, `setup.cfg`, `pyproject.toml`, …), compiled extension sources
//! (`.c`, `.pyx`, …), or a new package (`__init__.py`) that an editable finder maps by
//! name. Skipping it otherwise saves one to several seconds per evaluation (a PEP 517
//! build, `setup.py develop`) with the same tree and the same interpreter state.
//!
//! The rule is deliberately conservative: any install command that is not one plain
//! editable `pip install` or `setup.py develop`, any patch whose files cannot be read from
//! `diff --git` headers, and any build input touched keeps the re-install.

use super::patch::touched_files;

/// Why the eval script re-runs the install command, or that it may keep the environment's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reinstall {
    /// The install is editable and no patch changes a build input: keep it.
    Keep,
    /// Re-run it, for the reason given (shown in the script as a comment).
    Run(&'static str),
}

/// File names whose change alters what an install builds or registers.
const BUILD_FILES: [&str; 8] = [
    "setup.py",
    "setup.cfg",
    "pyproject.toml",
    "MANIFEST.in",
    "meson.build",
    "meson_options.txt",
    "CMakeLists.txt",
    "build.py",
];

/// Endings of sources an install compiles (C/C++, Cython, Fortran, Rust, SWIG, CUDA).
const COMPILED_ENDINGS: [&str; 17] = [
    ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".pyx", ".pxd", ".pxi", ".f", ".f90", ".rs",
    ".i", ".swg", ".cu", ".in",
];

/// Whether `install` must run again before the tests, given the patches applied to the
/// checkout after the environment was built (the model's patch; the test patch is applied
/// after the install, as in SWE-bench, so it never reaches the install).
pub fn reinstall(install: &str, patch: Option<&str>) -> Reinstall {
    if !is_editable_install(install) {
        return Reinstall::Run("not a plain editable install");
    }
    let Some(patch) = patch.filter(|patch| !patch.trim().is_empty()) else {
        return Reinstall::Keep;
    };
    let files = touched_files(patch);
    if files.existing.is_empty() && files.created.is_empty() {
        return Reinstall::Run("the patch's files are not named by diff --git headers");
    }
    let builds = |path: &String| {
        let name = path.rsplit('/').next().unwrap_or(path);
        BUILD_FILES.contains(&name) || COMPILED_ENDINGS.iter().any(|end| name.ends_with(end))
    };
    if files.existing.iter().chain(&files.created).any(builds) {
        return Reinstall::Run("the patch changes a build input");
    }
    if files
        .created
        .iter()
        .any(|path| path.rsplit('/').next() == Some("__init__.py"))
    {
        return Reinstall::Run("the patch adds a package");
    }
    Reinstall::Keep
}

/// Whether `install` is exactly one editable install of the checkout: `[python[3]] -m pip
/// install` or `pip install` with `-e .` / `--editable .` (extras allowed, as `.[test]`) and
/// only flags that do not change what is installed, or `python setup.py develop`.
fn is_editable_install(install: &str) -> bool {
    if install.contains(['&', '|', ';', '`', '$', '>', '<', '\n']) {
        return false;
    }
    let words: Vec<&str> = install.split_whitespace().collect();
    let rest = match words.as_slice() {
        [python, "setup.py", "develop", flags @ ..] if is_python(python) => {
            return flags.iter().all(|flag| matches!(*flag, "-q" | "--quiet"));
        }
        [python, "-m", "pip", "install", rest @ ..] if is_python(python) => rest,
        ["pip" | "pip3", "install", rest @ ..] => rest,
        _ => return false,
    };
    let mut editable = false;
    let mut words = rest.iter();
    while let Some(word) = words.next() {
        match *word {
            "-e" | "--editable" => match words.next() {
                Some(target) if is_checkout(target) => editable = true,
                _ => return false,
            },
            "-v"
            | "--verbose"
            | "-q"
            | "--quiet"
            | "--no-build-isolation"
            | "--no-use-pep517"
            | "--no-deps"
            | "--no-index" => {}
            _ => return false,
        }
    }
    editable
}

fn is_python(word: &str) -> bool {
    matches!(word, "python" | "python3") || word.ends_with("/python") || word.ends_with("/python3")
}

/// `.` or `.[extras]`, quoted or not.
fn is_checkout(target: &str) -> bool {
    let target = target.trim_matches(|c| c == '"' || c == '\'');
    target == "." || (target.starts_with(".[") && target.ends_with(']'))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PY_ONLY: &str = "diff --git a/pkg/mod.py b/pkg/mod.py\n--- a/pkg/mod.py\n+++ b/pkg/mod.py\n@@ -1 +1 @@\n-a\n+b\n";

    fn patch_of(path: &str, created: bool) -> String {
        let old = if created {
            "/dev/null".to_owned()
        } else {
            format!("a/{path}")
        };
        let mode = if created {
            "new file mode 100644\n"
        } else {
            ""
        };
        format!("diff --git a/{path} b/{path}\n{mode}--- {old}\n+++ b/{path}\n@@ -0,0 +1 @@\n+x\n")
    }

    #[test]
    fn editable_installs_are_recognised() {
        for install in [
            "python -m pip install -e .",
            "python -m pip install -e .[test]",
            "python -m pip install -e .[test] --verbose",
            "python -m pip install -v --no-use-pep517 --no-build-isolation -e .",
            "python3 -m pip install --editable '.[dev]'",
            "pip install -e .",
            "python setup.py develop",
        ] {
            assert!(is_editable_install(install), "{install}");
        }
        for install in [
            "python -m pip install .",
            "python -m pip install -e . && python setup.py build_ext -i",
            "python setup.py install",
            "python -m pip install -e ./sub",
            "python -m pip install -e . pytest",
            "python -m pip install -r requirements.txt -e .",
            "pip install -e",
            "make install",
            "",
        ] {
            assert!(!is_editable_install(install), "{install}");
        }
    }

    #[test]
    fn a_python_only_patch_keeps_the_editable_install() {
        assert_eq!(
            reinstall("python -m pip install -e .", Some(PY_ONLY)),
            Reinstall::Keep
        );
        assert_eq!(
            reinstall("python -m pip install -e .", None),
            Reinstall::Keep
        );
        assert_eq!(
            reinstall("python -m pip install -e .", Some("")),
            Reinstall::Keep
        );
        let new_module = patch_of("pkg/new_module.py", true);
        assert_eq!(
            reinstall("python -m pip install -e .", Some(&new_module)),
            Reinstall::Keep
        );
    }

    #[test]
    fn build_inputs_and_new_packages_reinstall() {
        for (path, created) in [
            ("setup.py", false),
            ("setup.cfg", false),
            ("pyproject.toml", false),
            ("sub/pyproject.toml", false),
            ("astropy/wcs/src/wcslib_wrap.c", false),
            ("sklearn/tree/_tree.pyx", false),
            ("sklearn/tree/_tree.pxd", true),
            ("pkg/sub/__init__.py", true),
            ("src/version.py.in", false),
        ] {
            let patch = format!("{PY_ONLY}{}", patch_of(path, created));
            assert!(
                matches!(
                    reinstall("python -m pip install -e .", Some(&patch)),
                    Reinstall::Run(_)
                ),
                "{path}"
            );
        }
        // An existing __init__.py changed is ordinary source.
        let patch = patch_of("pkg/__init__.py", false);
        assert_eq!(
            reinstall("python -m pip install -e .", Some(&patch)),
            Reinstall::Keep
        );
    }

    #[test]
    fn unreadable_patches_and_other_installs_reinstall() {
        let plain = "--- pkg/mod.py\n+++ pkg/mod.py\n@@ -1 +1 @@\n-a\n+b\n";
        assert!(matches!(
            reinstall("python -m pip install -e .", Some(plain)),
            Reinstall::Run(_)
        ));
        assert!(matches!(
            reinstall("python -m pip install .", Some(PY_ONLY)),
            Reinstall::Run(_)
        ));
        assert!(matches!(
            reinstall("python -m pip install .", None),
            Reinstall::Run(_)
        ));
    }
}
