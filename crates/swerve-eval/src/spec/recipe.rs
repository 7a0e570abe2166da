//! [`Recipe`]: the environment a task's tests run in, and its cache key.

use std::collections::BTreeMap;

use serde::Serialize;

use super::service::Service;

/// How to build the environment for a task's tests: SWE-bench's `MAP_REPO_VERSION_TO_SPECS`
/// entry without Docker and conda. Environments are cached per [`Recipe::key`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Recipe {
    /// The Python version, such as `"3.9"`; `None` for whatever `python3` is on `PATH`.
    pub python: Option<String>,
    /// pip requirement strings to install, such as `"numpy==1.25.2"` (SWE-bench's
    /// `pip_packages`, and its conda `packages` where pip has them).
    pub packages: Vec<String>,
    /// Requirement files in the checkout; each that exists is installed with `pip install
    /// -r`, in order (SWE-bench's `packages = "requirements.txt"` with
    /// `MAP_REPO_TO_REQS_PATHS`, where it takes the first that exists, and SWE-rebench's
    /// `reqs_path`, which lists files that together make the environment).
    pub requirements: Vec<String>,
    /// Conda environment files in the checkout (`ci/requirements/environment.yml`); the
    /// first that exists is installed, approximated with pip ([`crate::conda`]), before
    /// [`packages`](Recipe::packages), as SWE-bench's `packages = "environment.yml"`
    /// (`MAP_REPO_TO_ENV_YML_PATHS` lists the candidates).
    pub environment_files: Vec<String>,
    /// Resolve packages as of this date (`2024-08-01`, or an RFC 3339 time): uv's
    /// `--exclude-newer`, so what unpinned requirements resolve to does not drift as PyPI
    /// moves. pip, where it installs instead, cannot apply it (the build log says so).
    pub exclude_newer: Option<String>,
    /// OS packages (Debian names) that SWE-bench installs with `apt-get`, such as
    /// `"graphviz"`; swerve does not install them, the environment builder can check them.
    pub system_packages: Vec<String>,
    /// Extra arguments for every `pip install`: index options (`--index-url URL`),
    /// `--no-build-isolation`, ….
    pub pip_args: Vec<String>,
    /// Shell commands run in the checkout before [`install`](Recipe::install), such as
    /// `sed` edits that pin dependencies in `setup.py`.
    pub pre_install: Vec<String>,
    /// The shell command that installs the project from the checkout, such as
    /// `python -m pip install -e .`; the eval script runs it again, as SWE-bench's does.
    pub install: Option<String>,
    /// Environment variables for building and testing.
    pub env: BTreeMap<String, String>,
    /// Network fixtures served in the evaluation sandbox ([`crate::fixtures`]): local
    /// stand-ins for public test services. Not part of [`Recipe::key`]: they are built and
    /// cached apart and change nothing in the task's environment.
    pub services: Vec<Service>,
    /// Exit codes of the test command, besides 0, that mean it ended as the command
    /// intends, not that tests failed unreported: SWE-bench Multilingual wraps some test
    /// commands in `timeout` because the runner does not exit after its last test, so
    /// `timeout`'s 124 is expected there. The eval script records such a code as 0 (and says
    /// so in the log), so a log whose tests all passed is graded instead of rejected for a
    /// failing command with no failed test ([`crate::grading::LogRejection`]). Not part of
    /// [`Recipe::key`]: the environment is the same.
    pub test_exit_codes: Vec<i32>,
}

impl Recipe {
    /// True if the recipe sets nothing.
    pub fn is_empty(&self) -> bool {
        self == &Recipe::default()
    }

    /// A stable key for caching environments: 16 hex digits of a 64-bit FNV-1a hash of every
    /// field, in a fixed, unambiguous encoding (each value length-prefixed and tagged). The
    /// same recipe gives the same key on every platform and run.
    pub fn key(&self) -> String {
        let mut hash = Fnv64::new();
        hash.field("python", self.python.iter());
        hash.field("packages", self.packages.iter());
        hash.field("requirements", self.requirements.iter());
        // Hashed only when set, so the keys of recipes without them stay as they were.
        if !self.environment_files.is_empty() {
            hash.field("environment_files", self.environment_files.iter());
        }
        if self.exclude_newer.is_some() {
            hash.field("exclude_newer", self.exclude_newer.iter());
        }
        hash.field("system_packages", self.system_packages.iter());
        hash.field("pip_args", self.pip_args.iter());
        hash.field("pre_install", self.pre_install.iter());
        hash.field("install", self.install.iter());
        hash.field(
            "env",
            self.env.iter().flat_map(|(name, value)| [name, value]),
        );
        format!("{:016x}", hash.0)
    }
}

/// 64-bit FNV-1a, which is simple, fixed by its specification and needs no dependency.
struct Fnv64(u64);

impl Fnv64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;

    fn new() -> Self {
        Fnv64(Self::OFFSET)
    }

    fn bytes(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 ^= u64::from(*byte);
            self.0 = self.0.wrapping_mul(Self::PRIME);
        }
    }

    /// A length-prefixed string.
    fn text(&mut self, text: &str) {
        self.bytes(&(text.len() as u64).to_le_bytes());
        self.bytes(text.as_bytes());
    }

    /// A named field: its name, then the number of values, then each value.
    fn field<'a>(&mut self, name: &str, values: impl Iterator<Item = &'a String>) {
        self.text(name);
        let values: Vec<&String> = values.collect();
        self.bytes(&(values.len() as u64).to_le_bytes());
        for value in values {
            self.text(value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_is_stable_and_sensitive() {
        let empty = Recipe::default();
        assert_eq!(empty.key(), Recipe::default().key());
        assert_eq!(empty.key().len(), 16);
        let python = Recipe {
            python: Some("3.9".into()),
            ..Recipe::default()
        };
        assert_ne!(python.key(), empty.key());
        // Moving a value between fields changes the key.
        let packages = Recipe {
            packages: vec!["3.9".into()],
            ..Recipe::default()
        };
        assert_ne!(packages.key(), python.key());
        // Splitting a value differently changes the key.
        let one = Recipe {
            packages: vec!["ab".into()],
            ..Recipe::default()
        };
        let two = Recipe {
            packages: vec!["a".into(), "b".into()],
            ..Recipe::default()
        };
        assert_ne!(one.key(), two.key());
        // The newer fields change the key when set, and leave it alone when not.
        let environment = Recipe {
            environment_files: vec!["environment.yml".into()],
            ..Recipe::default()
        };
        assert_ne!(environment.key(), empty.key());
        let dated = Recipe {
            exclude_newer: Some("2024-08-01".into()),
            ..Recipe::default()
        };
        assert_ne!(dated.key(), empty.key());
        // The key of the empty recipe before the newer fields existed.
        assert_eq!(empty.key(), "cbdf1bc8eb54b13b");
    }
}
