//! [`resolve_spec`]: a task's [`TestSpec`] from its fields, the recipe table and the
//! checkout, with the [`SpecSource`] of each part.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use serde::Serialize;

use swerve_core::task::Task;

use super::detect::{Detection, detect_language, detect_project};
use super::directives::{DirectiveStyle, test_directives};
use super::error::SpecError;
use super::fields::{Fields, Given};
use super::names::parser_for_command;
use super::patch::touched_files;
use super::recipe::Recipe;
use super::shell::quote;
use super::table::{EntrySource, RecipeEntry, RecipeTable};
use crate::report::SpecSummary;
use crate::status::EvalType;

/// How to test one task. Serializes (as JSON, say) for logs and cache keys.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TestSpec {
    /// The task's `instance_id`.
    pub instance_id: String,
    /// The shell command that runs the tests, without directives (`pytest -rA`).
    pub test_cmd: String,
    /// Arguments appended to [`test_cmd`](TestSpec::test_cmd): test files or modules from
    /// the test patch, in [`directive_style`](TestSpec::directive_style).
    pub directives: Vec<String>,
    /// How the directives were made from the test patch's files.
    pub directive_style: DirectiveStyle,
    /// Files the test patch changes that exist at the base commit: reset them with
    /// `git checkout <base_commit> -- <files>` before applying the test patch and after the
    /// tests.
    pub test_files: Vec<String>,
    /// Files the test patch creates: remove them to reset.
    pub new_test_files: Vec<String>,
    /// The log parser, one of [`crate::parsers::PARSER_NAMES`].
    pub log_parser: String,
    /// How FAIL_TO_PASS and PASS_TO_PASS are judged.
    pub eval_type: EvalType,
    /// The environment, if the task or a recipe entry says anything about it; `None` means
    /// the tools on `PATH` as they are.
    pub recipe: Option<Recipe>,
    /// The task's own SWE-bench 5.x eval script, which [`super::eval_script`] returns as is.
    pub eval_script: Option<String>,
    /// The container image the task names (`image`, `docker_image` or `image_name`), for
    /// information: swerve runs tests without Docker.
    pub image: Option<String>,
    /// Where each part came from.
    pub source: SpecSource,
}

impl TestSpec {
    /// The full test command: [`test_cmd`](TestSpec::test_cmd) and the directives, each
    /// quoted for the shell if it needs it.
    pub fn test_command(&self) -> String {
        let mut command = self.test_cmd.clone();
        for directive in &self.directives {
            command.push(' ');
            command.push_str(&quote(directive));
        }
        command
    }

    /// What a report of `task` says it was tested with.
    pub fn summary(&self, task: &Task) -> SpecSummary {
        SpecSummary {
            repo: task.repo.clone(),
            version: task.version.clone(),
            log_parser: self.log_parser.clone(),
            eval_type: self.eval_type,
            test_command: Some(self.test_cmd.clone()),
        }
    }
}

/// Where a part of a [`TestSpec`] came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// A task field, by its JSON name (`test_cmd`, `install_config.python`).
    Task(String),
    /// A recipe table entry.
    Recipe(EntrySource),
    /// Inferred from the test command (the parser it implies, the directives its runner
    /// takes).
    Inferred,
    /// The default of the project type detected in the checkout.
    Detected(Detection),
    /// swerve's default (the `pass_and_fail` eval type).
    Default,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Task(field) => write!(f, "task field {field:?}"),
            Origin::Recipe(source) => write!(f, "{source}"),
            Origin::Inferred => f.write_str("inferred from the test command"),
            Origin::Detected(detection) => write!(f, "{detection}"),
            Origin::Default => f.write_str("default"),
        }
    }
}

/// Where each part of a [`TestSpec`] came from, for `--explain`-style messages. `Display`
/// writes one `part: origin` line per part.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SpecSource {
    /// Of [`TestSpec::test_cmd`].
    pub test_cmd: Origin,
    /// Of [`TestSpec::log_parser`].
    pub log_parser: Origin,
    /// Of [`TestSpec::eval_type`].
    pub eval_type: Origin,
    /// Of [`TestSpec::directive_style`].
    pub directives: Origin,
    /// Of each field of [`TestSpec::recipe`] that is set, by its recipe-file name
    /// (`python`, `packages`, …).
    pub environment: BTreeMap<String, Origin>,
    /// The recipe entry that matched the task's repo and version, whether or not any part
    /// came from it.
    pub recipe_entry: Option<EntrySource>,
    /// True when [`TestSpec::eval_script`] is the task's own (field `eval_script`).
    pub task_eval_script: bool,
}

impl fmt::Display for SpecSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.task_eval_script {
            writeln!(f, "eval script: task field \"eval_script\", used as is")?;
        }
        writeln!(f, "test_cmd: {}", self.test_cmd)?;
        writeln!(f, "log_parser: {}", self.log_parser)?;
        writeln!(f, "eval_type: {}", self.eval_type)?;
        writeln!(f, "directives: {}", self.directives)?;
        for (field, origin) in &self.environment {
            writeln!(f, "{field}: {origin}")?;
        }
        match &self.recipe_entry {
            Some(entry) => write!(f, "matching recipe entry: {entry}"),
            None => write!(f, "matching recipe entry: none"),
        }
    }
}

/// Resolves how to test `task` (see [`crate::spec`] for the order of sources).
/// `checkout` is the repository at the base commit, used only to detect the project type
/// when neither the task nor a recipe entry gives the test command or parser; it need not
/// exist. Fails on task fields of the wrong type, unknown log parsers or eval types, an
/// `eval_script` without SWE-bench's markers, and a `language` swerve has no default for
/// when the default is needed.
pub fn resolve_spec(
    task: &Task,
    checkout: &Path,
    recipes: &RecipeTable,
) -> Result<TestSpec, SpecError> {
    let fields = Fields::new(task)?;
    let entry = recipes.lookup(&task.repo, task.version.as_deref());
    let mut detector = Detector {
        checkout,
        language: fields.language()?,
        task,
        found: None,
    };

    let task_cmd = fields.test_cmd()?;
    let cmd_from_task = task_cmd.is_some();
    let (test_cmd, test_cmd_origin) = if let Some(given) = task_cmd {
        (given.value, Origin::Task(given.field))
    } else if let Some((entry, cmd)) = entry.and_then(|e| Some((e, e.test_cmd.clone()?))) {
        (cmd, Origin::Recipe(entry.source.clone()))
    } else {
        let detection = detector.detect()?;
        (detection.test_cmd.to_owned(), Origin::Detected(detection))
    };

    let entry_parser = entry.and_then(|e| Some((e.log_parser?, Origin::Recipe(e.source.clone()))));
    let (log_parser, log_parser_origin) = match fields.log_parser()? {
        Some(given) => (given.value, Origin::Task(given.field)),
        None => match (&test_cmd_origin, &entry_parser) {
            (Origin::Recipe(_), Some(from_entry)) => from_entry.clone(),
            _ => match (parser_for_command(&test_cmd), entry_parser) {
                (Some(parser), _) => (parser, Origin::Inferred),
                (None, Some(from_entry)) => from_entry,
                (None, None) => {
                    let detection = detector.detect()?;
                    (detection.log_parser, Origin::Detected(detection))
                }
            },
        },
    };

    let (eval_type, eval_type_origin) = match fields.eval_type()? {
        Some(given) => (given.value, Origin::Task(given.field)),
        None => match entry.and_then(|e| Some((e.eval_type?, e))) {
            Some((eval_type, entry)) => (eval_type, Origin::Recipe(entry.source.clone())),
            None => (EvalType::default(), Origin::Default),
        },
    };

    let (directive_style, directives_origin) = match entry.and_then(|e| Some((e.directives?, e))) {
        Some((style, entry)) if !cmd_from_task => (style, Origin::Recipe(entry.source.clone())),
        _ => (
            DirectiveStyle::for_runner(&task.repo, log_parser, &test_cmd),
            Origin::Inferred,
        ),
    };

    let test_patch = task.test_patch.as_deref().unwrap_or_default();
    let touched = touched_files(test_patch);
    let (recipe, environment) = environment(&fields, entry)?;
    let eval_script = fields.eval_script()?;
    Ok(TestSpec {
        instance_id: task.instance_id.clone(),
        directives: test_directives(test_patch, directive_style),
        directive_style,
        test_files: touched.existing,
        new_test_files: touched.created,
        log_parser: log_parser.to_owned(),
        eval_type,
        recipe,
        source: SpecSource {
            test_cmd: test_cmd_origin,
            log_parser: log_parser_origin,
            eval_type: eval_type_origin,
            directives: directives_origin,
            environment,
            recipe_entry: entry.map(|e| e.source.clone()),
            task_eval_script: eval_script.is_some(),
        },
        eval_script,
        image: fields.image()?,
        test_cmd,
    })
}

/// Detects the project type once, when first needed.
struct Detector<'a> {
    checkout: &'a Path,
    language: Option<Given<String>>,
    task: &'a Task,
    found: Option<Detection>,
}

impl Detector<'_> {
    fn detect(&mut self) -> Result<Detection, SpecError> {
        if let Some(found) = &self.found {
            return Ok(found.clone());
        }
        let detection = match &self.language {
            None => detect_project(self.checkout),
            Some(language) => detect_language(self.checkout, &language.value).ok_or_else(|| SpecError::Task {
                instance_id: self.task.instance_id.clone(),
                field: language.field.clone(),
                message: format!(
                    "swerve has no default test command for language {:?}; give \"test_cmd\" and \"log_parser\" in the task or a recipe",
                    language.value
                ),
            })?,
        };
        self.found = Some(detection.clone());
        Ok(detection)
    }
}

/// The environment: the recipe entry's, with each field the task gives replacing the
/// entry's; `None` if empty. Also the origin of each set field.
fn environment(
    fields: &Fields<'_>,
    entry: Option<&RecipeEntry>,
) -> Result<(Option<Recipe>, BTreeMap<String, Origin>), SpecError> {
    let mut recipe = entry.map(|e| e.recipe.clone()).unwrap_or_default();
    let mut origins = BTreeMap::new();
    if let Some(entry) = entry {
        for name in set_fields(&entry.recipe) {
            origins.insert(name.to_owned(), Origin::Recipe(entry.source.clone()));
        }
    }
    let mut task_gives = |name: &str, field: String| {
        origins.insert(name.to_owned(), Origin::Task(field));
    };
    if let Some(given) = fields.python()? {
        recipe.python = Some(given.value);
        task_gives("python", given.field);
    }
    if let Some(given) = fields.packages()? {
        recipe.packages = given.value;
        task_gives("packages", given.field);
    }
    if let Some(given) = fields.requirements()? {
        recipe.requirements = given.value;
        task_gives("requirements", given.field);
    }
    if let Some(given) = fields.pre_install()? {
        recipe.pre_install = given.value;
        task_gives("pre_install", given.field);
    }
    if let Some(given) = fields.install()? {
        recipe.install = Some(given.value);
        task_gives("install", given.field);
    }
    if let Some(given) = fields.env()? {
        recipe.env = given.value;
        task_gives("env", given.field);
    }
    // apt-get steps cannot run in a sandbox (its system directories are read-only): the
    // packages they install become system packages, checked on the host.
    let (pre_install, apt) = split_apt(&recipe.pre_install);
    if !apt.is_empty() {
        recipe.pre_install = pre_install;
        for package in apt {
            if !recipe.system_packages.contains(&package) {
                recipe.system_packages.push(package);
            }
        }
        if let Some(origin) = origins.get("pre_install").cloned() {
            origins.insert("system_packages".to_owned(), origin);
        }
    }
    let set = set_fields(&recipe);
    origins.retain(|name, _| set.contains(&name.as_str()));
    Ok(((!recipe.is_empty()).then_some(recipe), origins))
}

/// `commands` without their `apt-get update` / `apt-get install` steps (also `apt`, with
/// options, `sudo` and `DEBIAN_FRONTEND=…`, inside `&&` chains), and the packages those
/// steps install.
fn split_apt(commands: &[String]) -> (Vec<String>, Vec<String>) {
    let mut kept = Vec::new();
    let mut packages = Vec::new();
    for command in commands {
        let mut rest = Vec::new();
        for part in command.split("&&") {
            let words: Vec<&str> = part
                .split_whitespace()
                .filter(|word| *word != "sudo" && !word.starts_with("DEBIAN_FRONTEND="))
                .collect();
            match words.as_slice() {
                [tool, "update", ..] if matches!(*tool, "apt-get" | "apt") => {}
                [tool, "install", arguments @ ..] if matches!(*tool, "apt-get" | "apt") => {
                    packages.extend(
                        arguments
                            .iter()
                            .filter(|word| !word.starts_with('-'))
                            .map(|word| (*word).to_owned()),
                    );
                }
                _ => rest.push(part.trim().to_owned()),
            }
        }
        if !rest.is_empty() {
            kept.push(rest.join(" && "));
        }
    }
    (kept, packages)
}

/// The recipe-file names of the fields `recipe` sets.
fn set_fields(recipe: &Recipe) -> Vec<&'static str> {
    [
        ("python", recipe.python.is_some()),
        ("packages", !recipe.packages.is_empty()),
        ("requirements", !recipe.requirements.is_empty()),
        ("environment_files", !recipe.environment_files.is_empty()),
        ("exclude_newer", recipe.exclude_newer.is_some()),
        ("system_packages", !recipe.system_packages.is_empty()),
        ("pip_args", !recipe.pip_args.is_empty()),
        ("pre_install", !recipe.pre_install.is_empty()),
        ("install", recipe.install.is_some()),
        ("env", !recipe.env.is_empty()),
        ("test_exit_codes", !recipe.test_exit_codes.is_empty()),
    ]
    .into_iter()
    .filter_map(|(name, set)| set.then_some(name))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::split_apt;

    #[test]
    fn apt_steps_become_system_packages() {
        let commands = [
            "apt-get update".to_owned(),
            "apt-get install -y gcc".to_owned(),
            "apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y libx11-dev && sed -i s/a/b/ setup.cfg".to_owned(),
            "sed -i 's/>=>=/>=/' setup.cfg".to_owned(),
        ];
        let (kept, packages) = split_apt(&commands);
        assert_eq!(
            kept,
            ["sed -i s/a/b/ setup.cfg", "sed -i 's/>=>=/>=/' setup.cfg"]
        );
        assert_eq!(packages, ["gcc", "libx11-dev"]);
    }
}
