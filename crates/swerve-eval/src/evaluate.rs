//! `evaluate(task, patch)`: grade one patch by running the task's tests in a fresh sandbox.
//!
//! Phases (each timed in the report): prepare the base checkout and the test spec;
//! prepare the spec's environment (cached) and create a workspace with it layered in, both
//! through [`TaskEnvironments`], the place rollouts prepare their workspaces too (a task with
//! an image gets a workspace in it instead; every workspace is made by
//! [`workspaces::create`]); probe, in the untouched workspace, that the test command can
//! start ([`probe_script`]); apply the patch with the SWE-bench cascade; run the eval
//! script (reset test files, apply test_patch, run the tests between output markers) under
//! a timeout, keeping the full log; parse and grade by SWE-bench 5.x's rules. Nothing here
//! returns an error: every failure becomes a classified error in the [`InstanceReport`], so
//! a run goes on with the other tasks; a failure of the machinery (a probe that fails before
//! the patch is applied included) is `infra` ([`InfraReason`]), which earns no reward.
//! Results are cached by (task, patch hash, spec, the sandbox's settings and time allowed,
//! the grading code's version), with the instance's logs: a changed patch, spec or sandbox
//! (another userland, other limits) is never graded from a stale cache, and a hit still
//! writes its logs into the run's log directory.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use swerve_core::Task;
use swerve_core::grading::TestMachineryChange;
use swerve_sandbox::{Cache, ImageRoot, RepoMap, SandboxError, Workspace, WorkspaceOptions};

use crate::apply::{apply_patch, write_file};
use crate::fixtures::{Fixtures, StartError};
use crate::grading::{LogRejection, check_log, grade};
use crate::guard::canary::Draws;
use crate::guard::{Guard, GuardReport, GuardVerdict, TestRun};
use crate::prepare::{FIXTURES_START_TIMEOUT, PreparedTask, ResolvedTask, TaskEnvironments};
use crate::report::{ErrorClass, InfraReason, InstanceReport};
use crate::rule::{self, RewardRule};
use crate::spec::{RecipeTable, TestSpec, eval_script, probe_script, resolve_spec};
use crate::workspaces::{self, Origin};
use crate::{EvalType, parsers};

/// The grading code's own version, part of every cached result's key (with the package's):
/// raised when a change would grade a log or a workspace differently, so results cached by
/// the old code are not reused.
const GRADING_FORMAT: u32 = 2;

/// Where the eval script is written inside the sandbox.
const SCRIPT_PATH: &str = "/tmp/swerve-eval.sh";

/// How evaluations run.
#[derive(Debug, Clone)]
pub struct EvalSettings {
    /// Workspace and sandbox settings for evaluation sandboxes.
    pub workspace: WorkspaceOptions,
    /// Time allowed for the tests (SWE-bench: 1,800 s).
    pub test_timeout: Duration,
    /// Whether environment builds may use the network (package registries).
    pub environment_network: bool,
    /// Time allowed for each environment build step.
    pub environment_timeout: Duration,
    /// Where each instance's logs go (`<dir>/<instance_id>/…`); `None` keeps none.
    pub log_dir: Option<PathBuf>,
    /// Reuse cached results for the same (task, patch, spec).
    pub use_cache: bool,
    /// What a patch's change to the test machinery does to its grade
    /// (`reward.test_machinery_change`; [`crate::guard`]).
    pub test_machinery: TestMachineryChange,
    /// Whether the guard runs ([`crate::guard`]). No configuration key turns it off: only
    /// the adversarial corpus's controls (which show each hack rewarded without it, as
    /// SWE-bench's harness rewards it) and the benchmark of its cost do.
    pub guard: bool,
}

impl Default for EvalSettings {
    fn default() -> Self {
        let mut workspace = WorkspaceOptions::default();
        workspace.sandbox.output_cap_bytes = 64 << 20;
        Self {
            workspace,
            test_timeout: Duration::from_secs(1800),
            environment_network: true,
            environment_timeout: Duration::from_secs(1800),
            log_dir: None,
            use_cache: true,
            test_machinery: TestMachineryChange::default(),
            guard: true,
        }
    }
}

/// Supplies the images tasks run in (the CLI implements it over `swerve-image`).
pub trait ImageProvider: Sync {
    /// The unpacked image `task` runs in; `None` when it uses a base checkout.
    fn image_root(&self, task: &Task) -> Option<Result<ImageRoot, String>>;
}

/// Grades patches for tasks.
pub struct Evaluator<'a> {
    /// The cache directory shared by runs: base checkouts and built environments.
    pub cache: &'a Cache,
    /// Where each task's repository is cloned from.
    pub repos: &'a RepoMap,
    /// How each repository and version is installed and tested.
    pub recipes: &'a RecipeTable,
    /// Time limits, isolation and the other knobs of a run.
    pub settings: EvalSettings,
    /// Where tasks that name an image get it; `None`: every task uses a base checkout.
    pub images: Option<&'a dyn ImageProvider>,
}

impl Evaluator<'_> {
    /// Grades `patch` (`None`: the model produced none) for `task`.
    pub fn evaluate(&self, task: &Task, patch: Option<&str>) -> InstanceReport {
        let mut report = InstanceReport::new(patch);
        report.patch_hash = patch.map(sha256);
        if let Some(root) = self.images.and_then(|images| images.image_root(task)) {
            self.evaluate_in_image(task, patch, root, &mut report);
            return report;
        }
        let started = Instant::now();
        let prepared = self.prepare(task, &mut report);
        report.timings.workspace = Some(started.elapsed().as_secs_f64());
        let Some(resolved) = prepared else {
            return report;
        };
        let cache_path = self.cache_path(task, patch, &resolved.spec);
        if self.settings.use_cache
            && let Some(cached) = self.cached(task, &cache_path)
        {
            return cached;
        }
        self.run(task, patch, resolved, &mut report);
        if report.error_class != Some(ErrorClass::Infra) {
            self.store(task, &cache_path, &report);
        }
        report
    }

    /// The cached report at `cache_path`, with its logs copied into this run's log
    /// directory and `log_path` pointing there (`None` without a log directory). `None`
    /// (a miss) when there is no entry, or when this run keeps logs and the entry has none
    /// (it was graded by a run that kept none): the instance is graded again so that every
    /// instance of the run has its logs.
    fn cached(&self, task: &Task, cache_path: &Path) -> Option<InstanceReport> {
        let mut report: InstanceReport =
            serde_json::from_slice(&std::fs::read(cache_path).ok()?).ok()?;
        report.log_path = None;
        let Some(dir) = self.log_dir(task) else {
            return Some(report);
        };
        let cached_logs = std::fs::read_dir(cache_logs(cache_path)).ok()?;
        for entry in cached_logs {
            let entry = entry.ok()?;
            std::fs::copy(entry.path(), dir.join(entry.file_name())).ok()?;
        }
        let test_output = dir.join("test_output.txt");
        report.log_path = test_output.exists().then_some(test_output);
        if dir.join("report.json").exists() {
            save_report(&Some(dir), task, &report);
        }
        Some(report)
    }

    /// Caches `report` at `cache_path`, with this run's logs of `task` beside it (in
    /// `<entry>.logs/`) when it keeps logs. The logs are copied before the report is
    /// written, so an entry with a report has its logs.
    fn store(&self, task: &Task, cache_path: &Path, report: &InstanceReport) {
        let Ok(json) = serde_json::to_vec_pretty(report) else {
            return;
        };
        let _ = std::fs::create_dir_all(cache_path.parent().unwrap_or(Path::new(".")));
        if let Some(dir) = self.log_dir(task) {
            let logs = cache_logs(cache_path);
            let staging = logs.with_extension(format!("logs.{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&staging);
            let copied = std::fs::create_dir_all(&staging).is_ok()
                && std::fs::read_dir(&dir).is_ok_and(|entries| {
                    entries.flatten().all(|entry| {
                        std::fs::copy(entry.path(), staging.join(entry.file_name())).is_ok()
                    })
                });
            let _ = std::fs::remove_dir_all(&logs);
            if !copied || std::fs::rename(&staging, &logs).is_err() {
                let _ = std::fs::remove_dir_all(&staging);
                return;
            }
        }
        let _ = swerve_core::atomic::write_atomically(cache_path, |out| {
            std::io::Write::write_all(out, &json)
        });
    }

    /// How this evaluator prepares tasks: the same place rollouts prepare theirs.
    pub fn environments(&self) -> TaskEnvironments<'_> {
        TaskEnvironments {
            cache: self.cache,
            repos: self.repos,
            recipes: self.recipes,
            workspace: &self.settings.workspace,
            network: self.settings.environment_network,
            timeout: self.settings.environment_timeout,
        }
    }

    /// The base checkout and the test spec, or an infra error in `report`.
    fn prepare(&self, task: &Task, report: &mut InstanceReport) -> Option<ResolvedTask> {
        let resolved = self
            .environments()
            .resolve(task)
            .map_err(|error| {
                report.record_infra(InfraReason::EnvironmentUnavailable, error.to_string())
            })
            .ok()?;
        report.spec = Some(resolved.spec.summary(task));
        Some(resolved)
    }

    fn run(
        &self,
        task: &Task,
        patch: Option<&str>,
        resolved: ResolvedTask,
        report: &mut InstanceReport,
    ) {
        let has_recipe = resolved.spec.recipe.is_some();
        let started = Instant::now();
        let prepared = self.environments().environment(resolved);
        if has_recipe {
            report.timings.environment = Some(started.elapsed().as_secs_f64());
        }
        let prepared = match prepared {
            Ok(prepared) => prepared,
            Err(error) => {
                return report.record_infra(InfraReason::EnvironmentUnavailable, error.to_string());
            }
        };
        let PreparedTask {
            spec,
            base,
            fixtures,
            workspace_options: options,
            ..
        } = &prepared;
        report.services = fixtures.services().to_vec();
        let started = Instant::now();
        let workspace = match workspaces::create(self.cache, Origin::Checkout(base), options) {
            Ok(workspace) => workspace,
            Err(error) => {
                return report.record_infra(
                    InfraReason::SandboxFault,
                    format!("creating the workspace: {error}"),
                );
            }
        };
        *report.timings.workspace.get_or_insert(0.0) += started.elapsed().as_secs_f64();
        let repo_dir = options.sandbox.mount_point.to_string_lossy();
        let scripts = Scripts {
            fixtures: fixtures.clone(),
            probe: probe_script(spec, &repo_dir),
            eval: eval_script(spec, task, &repo_dir, patch),
        };
        self.test(task, patch, spec, workspace, scripts, report);
    }

    /// Grades `patch` in `task`'s image: the workspace's root is the image, the repository
    /// where the image has it, no environment is built (the image has it), and the eval
    /// script activates the image's conda environment as SWE-bench's does. A task without
    /// a base commit is graded against the repository's `HEAD` in the image; an R2E-Gym row
    /// (`expected_output_json`, no test lists) runs `run_tests.sh` and must reproduce every
    /// expected status, as R2E-Gym's reward does ([`RewardRule::R2eGym`]).
    fn evaluate_in_image(
        &self,
        task: &Task,
        patch: Option<&str>,
        root: Result<ImageRoot, String>,
        report: &mut InstanceReport,
    ) {
        let started = Instant::now();
        let root = match root {
            Ok(root) => root,
            Err(error) => {
                return report.record_infra(
                    InfraReason::EnvironmentUnavailable,
                    format!("image: {error}"),
                );
            }
        };
        let options = self.settings.workspace.clone();
        // SWE-smith: the task starts from the image's code with the bug applied, committed
        // alone. A bug that does not apply means the task's starting state cannot be made:
        // the environment is unavailable, whatever the patch under test is.
        let origin = Origin::Image {
            root: &root,
            starting_patch: rule::starting_patch(task),
        };
        let workspace = match workspaces::create(self.cache, origin, &options) {
            Ok(workspace) => workspace,
            Err(error @ SandboxError::StartingPatch { .. }) => {
                return report.record_infra(InfraReason::EnvironmentUnavailable, error.to_string());
            }
            Err(error) => {
                return report.record_infra(
                    InfraReason::SandboxFault,
                    format!(
                        "creating the workspace in image {}: {error}",
                        root.reference
                    ),
                );
            }
        };
        report.timings.workspace = Some(started.elapsed().as_secs_f64());
        let task = image_task(task, &workspace.base().commit);
        let spec = match resolve_spec(&task, workspace.host_root(), self.recipes) {
            Ok(spec) => spec,
            Err(error) => {
                return report.record_infra(
                    InfraReason::EnvironmentUnavailable,
                    format!("working out how to test the task: {error}"),
                );
            }
        };
        report.spec = Some(spec.summary(&task));
        let repo_dir = options.sandbox.mount_point.to_string_lossy();
        let scripts = Scripts {
            fixtures: Fixtures::default(),
            probe: probe_script(&spec, &repo_dir).map(|probe| activate_conda(&probe)),
            eval: activate_conda(&eval_script(&spec, &task, &repo_dir, patch)),
        };
        self.test(&task, patch, &spec, workspace, scripts, report);
    }

    /// Probes the test runner on the untouched workspace, applies `patch` between the
    /// guard's two snapshots of the test machinery (putting back what the patch changed of
    /// it), runs the eval script's first part (install, test-file reset, test patch), kills
    /// what it left running, writes the guard's canaries, runs the tests and grades the log,
    /// then lets the guard judge it ([`crate::guard`]). A probe that fails makes the
    /// instance an `infra` error (after the patch was applied, so
    /// `patch_successfully_applied` still says whether it applies); the tests are not run.
    fn test(
        &self,
        task: &Task,
        patch: Option<&str>,
        spec: &TestSpec,
        workspace: Workspace,
        scripts: Scripts,
        report: &mut InstanceReport,
    ) {
        let shell = workspace.shell();
        let logs = self.log_dir(task);
        let short = Duration::from_secs(120);
        let repo_dir = self
            .settings
            .workspace
            .sandbox
            .mount_point
            .to_string_lossy();
        let mut guard = self.settings.guard.then(|| {
            let run = TestRun {
                command: spec.test_command(),
                log_parser: spec.log_parser.clone(),
                directives: spec.directives.clone(),
                test_files: spec
                    .test_files
                    .iter()
                    .chain(&spec.new_test_files)
                    .cloned()
                    .collect(),
            };
            Guard::new(run, self.settings.test_machinery, &repo_dir)
        });

        // Without a patch nothing can have changed the machinery: the guard lists none.
        let patched = patch.is_some_and(|patch| !patch.is_empty());
        let mut log = String::new();
        let fixtures = start_fixtures(shell.as_ref(), &scripts.fixtures, &mut log);
        let runner = fixtures
            .and_then(|()| match &scripts.probe {
                Some(probe) => probe_runner(shell.as_ref(), probe, short, &mut log),
                None => Ok(()),
            })
            .and_then(|()| match (&mut guard, patched) {
                (Some(guard), true) => guard
                    .before_patch(shell.as_ref(), short)
                    .map_err(|error| (InfraReason::SandboxFault, error)),
                _ => Ok(()),
            });
        let started = Instant::now();
        if let Some(patch) = patch.filter(|patch| !patch.is_empty()) {
            save(&logs, "patch.diff", patch);
            match apply_patch(shell.as_ref(), patch, short) {
                Ok(applied) => {
                    log.push_str(&applied.log);
                    if applied.method.is_none() {
                        report.timings.patch = Some(started.elapsed().as_secs_f64());
                        save(&logs, "run_instance.log", &log);
                        return report.record_error(
                            ErrorClass::PatchFailed,
                            "no attempt of the apply cascade applied the patch",
                        );
                    }
                }
                Err(error) => {
                    save(&logs, "run_instance.log", &log);
                    return report.record_infra(
                        InfraReason::SandboxFault,
                        format!("applying the patch: {error}"),
                    );
                }
            }
        }
        report.patch_successfully_applied = true;
        // GNU patch's fallback can run an ed script: nothing it started may watch, or trace,
        // the guard's listing and restore.
        let runner = runner.and_then(|()| match (&mut guard, patched) {
            (Some(guard), true) => {
                kill_leftovers(shell.as_ref(), &workspace, &scripts.fixtures, &mut log)?;
                guard
                    .after_patch(shell.as_ref(), patch, short)
                    .map_err(|error| (InfraReason::SandboxFault, error))
            }
            _ => Ok(()),
        });
        report.timings.patch = Some(started.elapsed().as_secs_f64());
        if let Err((reason, message)) = runner {
            save(&logs, "run_instance.log", &log);
            return report.record_infra(reason, message);
        }
        let script = scripts.eval;

        let started = Instant::now();
        save(&logs, "eval.sh", &script);
        let outcome = self.run_eval_script(
            shell.as_ref(),
            &workspace,
            &script,
            &scripts.fixtures,
            guard.as_mut(),
        );
        report.timings.tests = Some(started.elapsed().as_secs_f64());
        let (mut test_log, outcome) = match outcome {
            Ok(ran) => ran,
            Err(error) => {
                save(&logs, "run_instance.log", &log);
                return report.record_infra(InfraReason::SandboxFault, error);
            }
        };
        if outcome.timed_out {
            // SWE-bench's wording and marker, so a re-grade of the saved log classifies it the same way.
            test_log.push_str(&format!(
                "\nTimeout error: {} seconds exceeded.\n>>>>> Tests Timed Out\n",
                self.settings.test_timeout.as_secs()
            ));
        }
        save(&logs, "run_instance.log", &log);
        report.log_path = save(&logs, "test_output.txt", &test_log);
        drop(workspace);
        if outcome.timed_out {
            // Tests waiting on a network they do not have (retries, backoff) often end so.
            report.needs_network = crate::offline::network_evidence(&test_log);
            return report.record_error(
                ErrorClass::Timeout,
                format!(
                    "the tests ran longer than {:?} and were killed",
                    self.settings.test_timeout
                ),
            );
        }
        if let Some(quota) = outcome.disk_limit {
            return report.record_error(
                ErrorClass::DiskLimit,
                format!(
                    "the tests wrote more than the workspace's disk quota of {quota} bytes \
                     (disk_limit) and were stopped; raise sandbox.limits.disk_bytes if they need more"
                ),
            );
        }

        let started = Instant::now();
        report.guard = guard.map(Guard::into_report);
        grade_guarded(
            report,
            &test_log,
            &spec.log_parser,
            spec.eval_type,
            task,
            Some(&script),
        );
        report.timings.parsing = Some(started.elapsed().as_secs_f64());
        save_report(&logs, task, report);
    }

    /// Runs `script` in `shell`: its first part (up to the tests' start marker), then, with
    /// every process it left killed and the guard's canaries written, the part that runs
    /// the tests; without a guard, or without the marker, the script runs whole, with no
    /// canaries. Returns the
    /// whole log and the last part's outcome (a first part that timed out ends the run
    /// there). `Err`: the sandbox failed.
    fn run_eval_script(
        &self,
        shell: &dyn swerve_core::Shell,
        workspace: &Workspace,
        script: &str,
        fixtures: &Fixtures,
        guard: Option<&mut Guard>,
    ) -> Result<(String, swerve_core::ExecOutcome), String> {
        let short = Duration::from_secs(120);
        let run = |script: &str, timeout: Duration| {
            write_file(shell, SCRIPT_PATH, script, short)
                .and_then(|()| shell.run(&format!("bash {SCRIPT_PATH} 2>&1"), timeout))
                .map_err(|error| format!("running the tests: {error}"))
        };
        let started = Instant::now();
        let split = crate::guard::split_eval_script(script);
        let (Some(guard), Some((prepare, tests))) = (guard, split) else {
            let outcome = run(script, self.settings.test_timeout)?;
            return Ok((outcome.stdout_text(), outcome));
        };
        let first = run(&prepare, self.settings.test_timeout)?;
        let mut log = first.stdout_text();
        if first.timed_out || first.disk_limit.is_some() {
            return Ok((log, first));
        }
        // Nothing the install step started may watch the canaries being written, and the
        // first part (with the test patch in it) leaves the sandbox before the tests run.
        // (The fixtures' start-up lines stay out of the test log.)
        kill_leftovers(shell, workspace, fixtures, &mut String::new())
            .map_err(|(_, message)| message)?;
        shell
            .run(&format!("rm -f {SCRIPT_PATH}"), short)
            .map_err(|error| format!("removing the eval script's first part: {error}"))?;
        guard.place_canaries(shell, &mut Draws::fresh(), short)?;
        let left = self
            .settings
            .test_timeout
            .saturating_sub(started.elapsed())
            .max(Duration::from_secs(1));
        let second = run(&tests, left)?;
        log.push_str(&second.stdout_text());
        Ok((log, second))
    }

    /// `<log_dir>/<instance_id>`, created.
    fn log_dir(&self, task: &Task) -> Option<PathBuf> {
        let dir = self.settings.log_dir.as_ref()?.join(&task.instance_id);
        std::fs::create_dir_all(&dir).ok()?;
        Some(dir)
    }

    /// Where the result for (task, patch, spec) is cached.
    fn cache_path(&self, task: &Task, patch: Option<&str>, spec: &TestSpec) -> PathBuf {
        // Where the spec came from (file names, line numbers) does not change the result.
        let mut spec_value = serde_json::to_value(spec).unwrap_or_default();
        if let Some(fields) = spec_value.as_object_mut() {
            fields.remove("source");
        }
        let spec_text = spec_value.to_string();
        // And how the tests ran: a result from another userland, other limits or another
        // time allowed is not this configuration's, nor one graded by other code.
        let sandbox = serde_json::to_string(&self.settings.workspace.sandbox).unwrap_or_default();
        let key = sha256(&format!(
            "{}\0{}\0{}\0{}\0{sandbox}\0{}\0{}\0{}/{GRADING_FORMAT}",
            task.instance_id,
            patch.unwrap_or("\u{0}none"),
            spec_text,
            cache_salt(task),
            self.settings.test_timeout.as_millis(),
            self.settings.test_machinery.as_str(),
            env!("CARGO_PKG_VERSION"),
        ));
        self.cache.root().join("evals").join(format!("{key}.json"))
    }
}

/// The scripts an evaluation runs: the network fixtures' start and the runner probe
/// (before the patch), and the eval script (after it).
struct Scripts {
    /// The network fixtures, started first (none for most tasks).
    fixtures: Fixtures,
    /// [`probe_script`]'s check that the test command can start; `None` when there is
    /// nothing to check.
    probe: Option<String>,
    /// The eval script.
    eval: String,
}

/// Kills every process of `workspace`'s sandbox (what the patch's code may have left
/// running), then starts `fixtures` again, which the kill took too; what they print goes to
/// `log`. `Err`: they did not come back (the machinery's failure).
fn kill_leftovers(
    shell: &dyn swerve_core::Shell,
    workspace: &Workspace,
    fixtures: &Fixtures,
    log: &mut String,
) -> Result<(), (InfraReason, String)> {
    workspace.sandbox().kill_all();
    start_fixtures(shell, fixtures, log)
}

/// Where the runner probe is written inside the sandbox.
const PROBE_PATH: &str = "/tmp/swerve-probe.sh";

/// Starts `fixtures` in the untouched workspace of `shell` and appends what they printed
/// to `log`. `Err` when they do not answer or the script cannot run: the machinery's
/// failure (`environment_unavailable`, or `sandbox_fault` when the script could not run),
/// since nothing of the model's is in the workspace yet.
fn start_fixtures(
    shell: &dyn swerve_core::Shell,
    fixtures: &Fixtures,
    log: &mut String,
) -> Result<(), (InfraReason, String)> {
    if fixtures.services().is_empty() {
        return Ok(());
    }
    log.push_str(">>>>> swerve: network fixtures (before the patch)\n");
    match fixtures.start(shell, FIXTURES_START_TIMEOUT) {
        Ok(printed) => {
            log.push_str(&printed);
            Ok(())
        }
        Err(error @ StartError::Sandbox(_)) => Err((InfraReason::SandboxFault, error.to_string())),
        Err(error @ StartError::NoAnswer { .. }) => {
            if let StartError::NoAnswer { printed, .. } = &error {
                log.push_str(printed);
            }
            Err((InfraReason::EnvironmentUnavailable, error.to_string()))
        }
    }
}

/// Runs the runner probe `probe` in the untouched workspace of `shell` and appends what it
/// printed to `log`. `Err` with the reason and a message when the test command cannot
/// start (the probe exits with 126 or 127), or when the probe itself cannot run or times
/// out: all of them the machinery's failures, since nothing of the model's is in the
/// workspace yet.
fn probe_runner(
    shell: &dyn swerve_core::Shell,
    probe: &str,
    timeout: Duration,
    log: &mut String,
) -> Result<(), (InfraReason, String)> {
    let outcome = write_file(shell, PROBE_PATH, probe, timeout)
        .and_then(|()| shell.run(&format!("bash {PROBE_PATH} 2>&1"), timeout))
        .map_err(|error| {
            (
                InfraReason::SandboxFault,
                format!("probing the test runner: {error}"),
            )
        })?;
    let printed = outcome.stdout_text();
    log.push_str(">>>>> swerve: test runner probe (before the patch)\n");
    log.push_str(&printed);
    if outcome.timed_out {
        return Err((
            InfraReason::HarnessTimeout,
            format!("probing the test runner took longer than {timeout:?}"),
        ));
    }
    match outcome.exit_code {
        Some(0) => Ok(()),
        Some(code @ (126 | 127)) => Err((
            InfraReason::TestRunnerMissing,
            format!(
                "the test command cannot start in the task's environment (exit {code} before \
                 the patch was applied): {}",
                printed.trim()
            ),
        )),
        code => Err((
            InfraReason::SandboxFault,
            format!(
                "the test runner probe failed (exit {code:?}): {}",
                printed.trim()
            ),
        )),
    }
}

/// Parses `log` with `log_parser`, checks it and grades it for `task` into `report`
/// (also used to re-grade saved logs); an unresolved instance whose log shows the tests
/// tried the network gets [`InstanceReport::needs_network`].
pub fn grade_log(
    report: &mut InstanceReport,
    log: &str,
    log_parser: &str,
    eval_type: EvalType,
    task: &Task,
) {
    grade_log_without(report, log, log_parser, eval_type, task, &[]);
}

/// Grades `log` into `report` as an evaluation does, under the guard `report.guard` holds
/// (none: as [`grade_log`]): its canaries are left out of the grade, then judged with the
/// markers against `script` (the eval script that printed the log, when known), and an
/// instance the guard does not pass is not resolved. Evaluations grade through it, and so
/// does `swerve eval --regrade`, whose saved reports keep the guard's findings (a saved
/// tampered or rejected instance stays so).
pub fn grade_guarded(
    report: &mut InstanceReport,
    log: &str,
    log_parser: &str,
    eval_type: EvalType,
    task: &Task,
    script: Option<&str>,
) {
    let canaries = report
        .guard
        .as_ref()
        .map(GuardReport::canary_names)
        .unwrap_or_default();
    grade_log_without(report, log, log_parser, eval_type, task, &canaries);
    let Some(guard) = report.guard.as_mut() else {
        return;
    };
    let statuses = rule_parser(task, log_parser).map(|parser| {
        check_log(log, parser)
            .map(|checked| checked.statuses)
            .unwrap_or_else(|_| parser(log))
    });
    guard.judge(log, script, statuses.as_ref(), report.resolved, eval_type);
    if guard.verdict != GuardVerdict::Clean {
        report.resolved = false;
    }
}

/// The parser the rule of `task` reads its log with (`log_parser` for SWE-bench's rule;
/// each family's own for the others); `None` for a name no parser has.
pub fn rule_parser(task: &Task, log_parser: &str) -> Option<parsers::Parser> {
    match RewardRule::for_task(task) {
        RewardRule::SweBench => parsers::parser(log_parser),
        RewardRule::SweSmith => Some(parsers::swe_smith::for_repo(&rule::swe_smith_repo(task))),
        RewardRule::MultiSweBench => parsers::multi_swe_bench::for_repo(&task.repo),
        RewardRule::R2eGym => Some(parsers::r2e_gym),
    }
}

/// [`grade_log`], with the tests named by `left_out` (the guard's canaries) dropped from the
/// statuses after the log's check (where they explain a non-zero exit) and before the rule
/// grades them (so a family's rule that counts every test never sees them).
pub fn grade_log_without(
    report: &mut InstanceReport,
    log: &str,
    log_parser: &str,
    eval_type: EvalType,
    task: &Task,
    left_out: &[String],
) {
    let keep = |mut statuses: parsers::StatusMap| {
        statuses.retain(|id, _| {
            !left_out
                .iter()
                .any(|name| crate::guard::canary::names_test(id, name))
        });
        statuses
    };
    report.rule = RewardRule::for_task(task);
    let Some(parser) = rule_parser(task, log_parser) else {
        return match report.rule {
            RewardRule::MultiSweBench => report.record_error(
                ErrorClass::Infra,
                format!(
                    "no Multi-SWE-bench log parser for {}: swerve has those of {}",
                    task.repo,
                    parsers::multi_swe_bench::repositories().join(", ")
                ),
            ),
            _ => report.record_error(
                ErrorClass::Infra,
                format!("unknown log parser \"{log_parser}\""),
            ),
        };
    };
    match report.rule {
        RewardRule::SweBench => match check_log(log, parser) {
            Ok(checked) => {
                report.test_exit_code = checked.exit_code;
                report.record_grade(grade(
                    &keep(checked.statuses),
                    &task.fail_to_pass,
                    &task.pass_to_pass,
                    eval_type,
                ));
            }
            Err(rejection) => report.record_rejection(rejection),
        },
        RewardRule::SweSmith => match check_log(log, parser) {
            Ok(checked) => {
                report.test_exit_code = checked.exit_code;
                report.record_grade(rule::grade_swe_smith(&keep(checked.statuses), task));
            }
            Err(rejection) => report.record_rejection(rejection),
        },
        RewardRule::MultiSweBench => {
            // A log whose tests did not build shows none: Multi-SWE-bench grades it (a report
            // without test results is not valid: not resolved), as the model's failure.
            let checked = match check_log(log, parser) {
                Ok(checked) => (checked.statuses, checked.exit_code),
                Err(LogRejection::NoTestsRan) => (
                    parsers::StatusMap::new(),
                    parsers::test_output(log).exit_code,
                ),
                Err(rejection) => return report.record_rejection(rejection),
            };
            report.test_exit_code = checked.1;
            match rule::grade_multi_swe_bench(&keep(checked.0), task) {
                Ok(graded) => report.record_grade(graded),
                Err(error) => return report.record_error(ErrorClass::Infra, error),
            }
        }
        RewardRule::R2eGym => {
            let expected = match rule::r2e_gym_expected(task) {
                Ok(expected) => expected,
                Err(error) => return report.record_error(ErrorClass::Infra, error),
            };
            match check_log(log, parser) {
                Ok(checked) => {
                    report.test_exit_code = checked.exit_code;
                    report.record_grade(rule::grade_r2e_gym(&keep(checked.statuses), &expected));
                }
                Err(rejection) => report.record_rejection(rejection),
            }
        }
    }
    report.needs_network = match report.resolved {
        true => None,
        false => crate::offline::network_evidence(log),
    };
}

/// `task` as graded in its image: the base commit (when the row has none) is the image's
/// `HEAD`; an R2E-Gym row ([`RewardRule::R2eGym`]) runs `run_tests.sh` and is graded by
/// R2E-Gym's parser and rule; a SWE-smith row without a `test_cmd` of its own runs
/// SWE-smith's command ([`rule::swe_smith_test_command`]).
fn image_task(task: &Task, head: &str) -> Task {
    let mut task = task.clone();
    if task.base_commit.trim().is_empty() {
        task.base_commit = head.to_owned();
    }
    match RewardRule::for_task(&task) {
        RewardRule::R2eGym => {
            for (field, value) in [("test_cmd", "bash run_tests.sh"), ("log_parser", "r2e_gym")] {
                task.extra
                    .entry(field)
                    .or_insert_with(|| serde_json::Value::String(value.into()));
            }
        }
        RewardRule::SweSmith => {
            let command = rule::swe_smith_test_command(&task).command;
            // The rule parses with SWE-smith's parser for the repository, whatever the spec
            // names; naming one keeps the spec from guessing from a command it may not know.
            for (field, value) in [("test_cmd", command), ("log_parser", "swe_smith".into())] {
                task.extra
                    .entry(field)
                    .or_insert_with(|| serde_json::Value::String(value));
            }
        }
        RewardRule::SweBench | RewardRule::MultiSweBench => {}
    }
    task
}

/// `script` with SWE-bench's conda activation after its first line, where the image has
/// conda at SWE-bench's path (`source /opt/miniconda3/bin/activate; conda activate testbed`).
fn activate_conda(script: &str) -> String {
    let (first, rest) = script.split_once('\n').unwrap_or((script, ""));
    format!(
        "{first}\nif [ -f /opt/miniconda3/bin/activate ]; then source /opt/miniconda3/bin/activate && conda activate testbed; fi\n{rest}"
    )
}

/// What else the result depends on: the tests themselves and the expected lists.
fn cache_salt(task: &Task) -> String {
    let field = |name: &str| task.extra.get(name).map(ToString::to_string);
    let mut salt = format!(
        "{}\0{:?}\0{:?}\0{}\0{}",
        task.test_patch.as_deref().unwrap_or(""),
        task.fail_to_pass,
        task.pass_to_pass,
        rule::starting_patch(task).unwrap_or(""),
        field(crate::rule::EXPECTED_FIELD).unwrap_or_default()
    );
    // What Multi-SWE-bench's rule reads besides the lists (other rows' salts stay as they were).
    for name in rule::MULTI_SWE_BENCH_FIELDS {
        if let Some(value) = field(name) {
            salt.push_str(&format!("\0{name}={value}"));
        }
    }
    salt
}

/// Where the logs of the cache entry `cache_path` are kept: `<entry>.logs/`.
fn cache_logs(cache_path: &Path) -> PathBuf {
    cache_path.with_extension("logs")
}

/// Writes SWE-bench's per-instance `report.json` (`{instance_id: report}`) under `dir`, if
/// logs are kept.
fn save_report(dir: &Option<PathBuf>, task: &Task, report: &InstanceReport) {
    let file = crate::report::ReportFile::from([(task.instance_id.clone(), report.clone())]);
    if let Ok(json) = serde_json::to_string_pretty(&file) {
        save(dir, "report.json", &json);
    }
}

/// Writes `name` under `dir` (if logs are kept); returns its path.
fn save(dir: &Option<PathBuf>, name: &str, content: &str) -> Option<PathBuf> {
    let path = dir.as_ref()?.join(name);
    swerve_core::atomic::write_atomically(&path, |out| {
        std::io::Write::write_all(out, content.as_bytes())
    })
    .ok()?;
    Some(path)
}

/// The SHA-256 of `text`, in hex.
pub fn sha256(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}
