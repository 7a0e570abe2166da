//! Environments built for real, offline: a venv from the machine's Python with a package
//! from a local wheel directory, the install step's repository changes layered into later
//! workspaces, the dependencies shared by commits with a thin layer per commit, caching, and
//! the errors that name what to install; and, from PyPI, an install step bounded by the
//! recipe's `exclude_newer` date.

use std::path::Path;
use std::time::{Duration, Instant};

use swerve_core::Shell;
use swerve_eval::environment::{
    ENV_MOUNT_POINT, EnvironmentError, EnvironmentRecipe, Environments,
};
use swerve_eval::workspaces::{self, Origin};
use swerve_sandbox::{BaseCheckout, Cache, Isolation, SandboxConfig, WorkspaceOptions};
use swerve_testing::sh;

/// A repository holding `wheels/helper-1.0-py3-none-any.whl` (a pure-Python wheel made here).
fn repository(dir: &Path) -> String {
    std::fs::create_dir_all(dir.join("wheels")).unwrap();
    sh(
        dir,
        r#"python3 - <<'EOF'
import zipfile
files = {
    "helper/__init__.py": "X = 42\n",
    "helper-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: helper\nVersion: 1.0\n",
    "helper-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: swerve-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = "".join(f"{name},,\n" for name in files) + "helper-1.0.dist-info/RECORD,,\n"
with zipfile.ZipFile("wheels/helper-1.0-py3-none-any.whl", "w") as wheel:
    for name, text in files.items():
        wheel.writestr(name, text)
    wheel.writestr("helper-1.0.dist-info/RECORD", record)
EOF"#,
    );
    std::fs::write(dir.join("app.py"), "import helper\nVALUE = helper.X\n").unwrap();
    std::fs::write(dir.join(".gitignore"), "build/\n").unwrap();
    sh(
        dir,
        "git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm base && git rev-parse HEAD",
    )
}

fn options() -> WorkspaceOptions {
    WorkspaceOptions {
        sandbox: SandboxConfig {
            isolation: Isolation::Namespaces,
            ..SandboxConfig::default()
        },
        ..WorkspaceOptions::default()
    }
}

fn recipe() -> EnvironmentRecipe {
    EnvironmentRecipe {
        key: "helper-recipe".into(),
        python: Some("3.11".into()),
        packages: vec!["helper==1.0".into()],
        pip_args: vec![
            "--no-index".into(),
            "--find-links".into(),
            "/testbed/wheels".into(),
        ],
        install: Some("mkdir -p /testbed/build && echo built > /testbed/build/artifact".into()),
        ..EnvironmentRecipe::default()
    }
}

#[test]
fn an_environment_is_built_once_and_layered_into_later_workspaces() {
    let scratch = tempfile::tempdir().unwrap();
    let repo = scratch.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    let commit = repository(&repo);
    let cache = Cache::open(scratch.path().join("cache")).unwrap();
    let base: BaseCheckout = cache
        .prepare_base(
            "t/helper",
            &swerve_sandbox::RepoSource::Local(repo),
            &commit,
        )
        .unwrap();

    let built = Environments {
        cache: &cache,
        template: &options(),
        network: false,
        timeout: Duration::from_secs(300),
    }
    .prepare(&base, &recipe())
    .unwrap();
    let started = Instant::now();
    let again = Environments {
        cache: &cache,
        template: &options(),
        network: false,
        timeout: Duration::from_secs(300),
    }
    .prepare(&base, &recipe())
    .unwrap();
    assert_eq!(built, again);
    assert!(
        started.elapsed() < Duration::from_millis(500),
        "a cached environment is not rebuilt"
    );

    let mut with_env = options();
    built.apply(&mut with_env);
    for _ in 0..2 {
        let workspace = workspaces::create(&cache, Origin::Checkout(&base), &with_env).unwrap();
        let outcome = workspace
            .sandbox()
            .run("python -c 'import app, sys; print(app.VALUE, sys.prefix)'; cat build/artifact; pip install -q --no-index --find-links wheels --force-reinstall helper && echo reinstalled", Duration::from_secs(120))
            .unwrap();
        assert_eq!(
            outcome.stdout_text(),
            format!("42 {ENV_MOUNT_POINT}\nbuilt\nreinstalled\n"),
            "{}",
            outcome.stderr_text()
        );
        // Changes to the environment stay in the workspace.
        assert!(
            workspace
                .patch(&Default::default())
                .unwrap()
                .files
                .is_empty()
        );
    }
}

#[test]
fn missing_interpreters_and_system_packages_say_what_to_install() {
    let scratch = tempfile::tempdir().unwrap();
    let repo = scratch.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    let commit = repository(&repo);
    let cache = Cache::open(scratch.path().join("cache")).unwrap();
    let base = cache
        .prepare_base(
            "t/helper",
            &swerve_sandbox::RepoSource::Local(repo),
            &commit,
        )
        .unwrap();
    let old = EnvironmentRecipe {
        python: Some("3.2".into()),
        ..recipe()
    };
    let error = Environments {
        cache: &cache,
        template: &options(),
        network: false,
        timeout: Duration::from_secs(60),
    }
    .prepare(&base, &old)
    .unwrap_err();
    assert!(matches!(error, EnvironmentError::MissingInterpreter { .. }));
    assert!(
        error.to_string().starts_with("Python 3.2 not found ("),
        "{error}"
    );
    assert!(error.to_string().contains("pyenv install 3.2"), "{error}");
    let system = EnvironmentRecipe {
        system_packages: vec!["swerve-no-such-package".into()],
        ..recipe()
    };
    let error = Environments {
        cache: &cache,
        template: &options(),
        network: false,
        timeout: Duration::from_secs(60),
    }
    .prepare(&base, &system)
    .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("apt-get install swerve-no-such-package"),
        "{error}"
    );
    let broken = EnvironmentRecipe {
        key: "broken".into(),
        packages: vec!["no-such-wheel".into()],
        ..recipe()
    };
    let error = Environments {
        cache: &cache,
        template: &options(),
        network: false,
        timeout: Duration::from_secs(120),
    }
    .prepare(&base, &broken)
    .unwrap_err();
    assert!(
        matches!(error, EnvironmentError::BuildFailed { .. }),
        "{error}"
    );
    assert!(
        error.to_string().contains("python -m pip install"),
        "{error}"
    );
    let left: Vec<String> = std::fs::read_dir(cache.root().join("envs"))
        .unwrap()
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| {
            let dir = cache.root().join("envs").join(name);
            dir.is_dir() && !cache.root().join(format!("envs/{name}.ready")).exists()
        })
        .collect();
    assert!(
        left.is_empty(),
        "a failed build leaves nothing behind: {left:?}"
    );
}

#[test]
fn environments_that_change_the_repository_are_specific_to_their_commit() {
    let scratch = tempfile::tempdir().unwrap();
    let repo = scratch.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    let first = repository(&repo);
    sh(
        &repo,
        "echo more >> app.py && git -c user.name=t -c user.email=t@t commit -qam second",
    );
    let second = sh(&repo, "git rev-parse HEAD");
    let cache = Cache::open(scratch.path().join("cache")).unwrap();
    let source = swerve_sandbox::RepoSource::Local(repo);
    let recipe = EnvironmentRecipe {
        key: "pre-install-only".into(),
        python: Some("3.11".into()),
        pre_install: vec!["echo $(git rev-parse HEAD) > /testbed/build-commit".into()],
        ..EnvironmentRecipe::default()
    };
    let mut seen = Vec::new();
    for commit in [&first, &second] {
        let base = cache.prepare_base("t/helper", &source, commit).unwrap();
        let environment = Environments {
            cache: &cache,
            template: &options(),
            network: false,
            timeout: Duration::from_secs(300),
        }
        .prepare(&base, &recipe)
        .unwrap();
        seen.push(
            std::fs::read_to_string(environment.repository_layer.join("build-commit")).unwrap(),
        );
    }
    assert_eq!(
        seen,
        [format!("{first}\n"), format!("{second}\n")],
        "pre_install ran once per commit"
    );
}

#[test]
fn dependencies_are_built_once_and_each_commit_adds_a_thin_layer() {
    let scratch = tempfile::tempdir().unwrap();
    let repo = scratch.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    let first = repository(&repo);
    sh(
        &repo,
        "echo 'SECOND = 2' >> app.py && git -c user.name=t -c user.email=t@t commit -qam second",
    );
    let second = sh(&repo, "git rev-parse HEAD");
    let cache = Cache::open(scratch.path().join("cache")).unwrap();
    let source = swerve_sandbox::RepoSource::Local(repo);
    // An install that writes into the venv (as an editable install's .pth does) and the
    // repository.
    let recipe = EnvironmentRecipe {
        key: "thin-layer".into(),
        install: Some(
            "python -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])' > /tmp/purelib \
             && echo /testbed > \"$(cat /tmp/purelib)/testbed.pth\" \
             && git rev-parse HEAD > built-at"
                .into(),
        ),
        ..recipe()
    };
    let mut environments = Vec::new();
    let mut seconds = Vec::new();
    for commit in [&first, &second] {
        let base = cache.prepare_base("t/helper", &source, commit).unwrap();
        let started = Instant::now();
        let environment = Environments {
            cache: &cache,
            template: &options(),
            network: false,
            timeout: Duration::from_secs(300),
        }
        .prepare(&base, &recipe)
        .unwrap();
        seconds.push(started.elapsed().as_secs_f64());
        let mut with_env = options();
        environment.apply(&mut with_env);
        let workspace = workspaces::create(&cache, Origin::Checkout(&base), &with_env).unwrap();
        let outcome = workspace
            .sandbox()
            .run(
                "cd /tmp && python -c 'import helper, app; print(helper.X, getattr(app, \"SECOND\", 1))' && cat /testbed/built-at",
                Duration::from_secs(60),
            )
            .unwrap();
        assert_eq!(
            outcome.stdout_text(),
            format!("42 {}\n{commit}\n", if commit == &first { 1 } else { 2 }),
            "{}",
            outcome.stderr_text()
        );
        environments.push(environment);
    }
    assert_eq!(
        environments[0].prefix, environments[1].prefix,
        "one dependencies prefix for both commits"
    );
    assert_ne!(environments[0].prefix_layer, environments[1].prefix_layer);
    let layer = environments[1].prefix_layer.as_ref().unwrap();
    let files = sh(layer, "find . -type f | wc -l")
        .parse::<usize>()
        .unwrap();
    assert!(
        files < 10,
        "the commit layer holds only what the install wrote: {files} files"
    );
    assert!(
        seconds[1] < seconds[0],
        "the second commit reuses the dependencies: {seconds:?}"
    );
}

/// The environment is a real prefix, as the images' conda environments: an interpreter
/// reached through a symlink (tox-current-env links `.tox/py39/bin/python` to it) and a
/// `virtualenv --system-site-packages` made from it both find its packages; the host
/// installation's own packages are not in it. With a venv the symlinked interpreter failed
/// (`No module named helper`, sphinx 4.x's `No module named pytest`).
#[test]
fn the_environment_is_a_prefix_that_linked_interpreters_and_child_venvs_use() {
    let scratch = tempfile::tempdir().unwrap();
    let repo = scratch.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    let commit = repository(&repo);
    let cache = Cache::open(scratch.path().join("cache")).unwrap();
    let base = cache
        .prepare_base(
            "t/helper",
            &swerve_sandbox::RepoSource::Local(repo),
            &commit,
        )
        .unwrap();
    let environment = Environments {
        cache: &cache,
        template: &options(),
        network: false,
        timeout: Duration::from_secs(300),
    }
    .prepare(&base, &recipe())
    .unwrap();
    assert!(
        !environment.prefix.join("pyvenv.cfg").exists(),
        "a prefix, not a venv"
    );
    let mut with_env = options();
    environment.apply(&mut with_env);
    let workspace = workspaces::create(&cache, Origin::Checkout(&base), &with_env).unwrap();
    let probe = "mkdir -p /tmp/tox/bin && ln -s /swerve-env/bin/python /tmp/tox/bin/python \
         && /tmp/tox/bin/python -c 'import sys, helper; print(\"linked\", sys.prefix, helper.X)' \
         && python -m venv --system-site-packages /tmp/child \
         && /tmp/child/bin/python -c 'import sys, helper; print(\"child\", sys.base_prefix, helper.X)' \
         && python -c 'import sys, sysconfig; print(\"paths\", sysconfig.get_paths()[\"purelib\"], sysconfig.get_config_var(\"prefix\"))' \
         && head -1 /swerve-env/bin/pip* | grep '^#!' | sort -u \
         && python -m pip list --format=freeze | cut -d= -f1 | sort | tr '\\n' ' '";
    let outcome = workspace
        .sandbox()
        .run(probe, Duration::from_secs(120))
        .unwrap();
    let text = outcome.stdout_text();
    assert!(outcome.success(), "{text}{}", outcome.stderr_text());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "linked /swerve-env 42", "{text}");
    assert_eq!(lines[1], "child /swerve-env 42", "{text}");
    assert!(
        lines[2].starts_with("paths /swerve-env/lib/python3.11/site-packages /swerve-env"),
        "{text}"
    );
    assert!(lines[3].starts_with("#!/swerve-env/bin/python"), "{text}");
    // pip and the recipe's package (setuptools where ensurepip brings it); nothing of the
    // host installation's own site-packages.
    let packages: Vec<&str> = lines[4].split_whitespace().collect();
    assert!(
        packages.contains(&"helper") && packages.contains(&"pip"),
        "{text}"
    );
    assert!(
        packages.len() <= 4,
        "only the environment's packages: {text}"
    );
}

#[test]
fn a_conda_environment_file_is_installed_with_pip_and_what_is_left_out_is_logged() {
    let scratch = tempfile::tempdir().unwrap();
    let repo = scratch.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    repository(&repo);
    std::fs::create_dir_all(repo.join("ci")).unwrap();
    std::fs::write(
        repo.join("ci/environment.yml"),
        "name: t\nchannels:\n  - conda-forge\ndependencies:\n  - python=3.11\n  - hdf5\n  - helper=1.0\n  - no-such-wheel\n  - pip\n  - pip:\n    - helper==1.0\n",
    )
    .unwrap();
    std::fs::write(repo.join("bad.yml"), "dependencies:\n  - [numpy]\n").unwrap();
    let commit = sh(
        &repo,
        "git add -A && git -c user.name=t -c user.email=t@t commit -qm env && git rev-parse HEAD",
    );
    let cache = Cache::open(scratch.path().join("cache")).unwrap();
    let base = cache
        .prepare_base(
            "t/helper",
            &swerve_sandbox::RepoSource::Local(repo),
            &commit,
        )
        .unwrap();
    let environments = Environments {
        cache: &cache,
        template: &options(),
        network: false,
        timeout: Duration::from_secs(300),
    };
    let recipe = EnvironmentRecipe {
        key: "conda-file".into(),
        packages: Vec::new(),
        environment_files: vec!["environment.yml".into(), "ci/environment.yml".into()],
        install: None,
        ..recipe()
    };
    let environment = environments.prepare(&base, &recipe).unwrap();
    let mut with_env = options();
    environment.apply(&mut with_env);
    let workspace = workspaces::create(&cache, Origin::Checkout(&base), &with_env).unwrap();
    let outcome = workspace
        .sandbox()
        .run(
            "python -c 'import helper; print(helper.X)'",
            Duration::from_secs(60),
        )
        .unwrap();
    assert_eq!(outcome.stdout_text(), "42\n", "{}", outcome.stderr_text());
    let log = std::fs::read_dir(cache.root().join("envs"))
        .unwrap()
        .flatten()
        .map(|entry| entry.path())
        .find(|path| path.extension().is_some_and(|ext| ext == "log"))
        .map(|path| std::fs::read_to_string(path).unwrap())
        .unwrap();
    assert!(
        log.contains("# swerve: ci/environment.yml: conda environment file approximated with pip: helper==1.0.* no-such-wheel helper==1.0"),
        "{log}"
    );
    assert!(log.contains("hdf5: a system library"), "{log}");
    assert!(
        log.contains("left out, as they could not be installed: no-such-wheel"),
        "{log}"
    );

    let bad = EnvironmentRecipe {
        key: "bad-conda-file".into(),
        environment_files: vec!["bad.yml".into()],
        ..recipe
    };
    let error = environments.prepare(&base, &bad).unwrap_err();
    assert!(
        matches!(error, EnvironmentError::EnvironmentFile(_)),
        "{error}"
    );
    assert!(
        error.to_string().contains("bad.yml: dependencies[1]"),
        "{error}"
    );
}

/// With `exclude_newer`, what the install step resolves is bounded by the date too, not only
/// the recipe's packages: a project that leaves `six` unpinned gets the newest release before
/// the date (1.16.0; 1.17.0 came out on 2024-12-04), as an image built that day had it. Needs
/// PyPI, as the builds of the CLI's network fixtures do.
#[test]
fn exclude_newer_bounds_what_the_install_step_resolves() {
    let scratch = tempfile::tempdir().unwrap();
    let repo = scratch.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    std::fs::write(
        repo.join("setup.py"),
        "from setuptools import setup\nsetup(name='dated-app', version='0.1', py_modules=['app'], \
         install_requires=['six'], extras_require={'test': ['six']})\n",
    )
    .unwrap();
    std::fs::write(repo.join("app.py"), "import six\nVALUE = six.__version__\n").unwrap();
    let commit = sh(
        &repo,
        "git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm base && git rev-parse HEAD",
    );
    let cache = Cache::open(scratch.path().join("cache")).unwrap();
    let base = cache
        .prepare_base("t/dated", &swerve_sandbox::RepoSource::Local(repo), &commit)
        .unwrap();
    let recipe = EnvironmentRecipe {
        key: "dated-install".into(),
        python: Some("3.11".into()),
        exclude_newer: Some("2024-06-01".into()),
        install: Some("python -m pip install -e .[test]".into()),
        ..EnvironmentRecipe::default()
    };
    let environment = Environments {
        cache: &cache,
        template: &options(),
        network: true,
        timeout: Duration::from_secs(600),
    }
    .prepare(&base, &recipe)
    .unwrap();
    let mut with_env = options();
    environment.apply(&mut with_env);
    let workspace = workspaces::create(&cache, Origin::Checkout(&base), &with_env).unwrap();
    let outcome = workspace
        .sandbox()
        .run(
            "cd /tmp && python -c 'import app; print(app.VALUE)'",
            Duration::from_secs(60),
        )
        .unwrap();
    assert_eq!(
        outcome.stdout_text(),
        "1.16.0\n",
        "{}",
        outcome.stderr_text()
    );
    let logs = sh(&cache.root().join("envs"), "cat *dated1.log");
    assert!(
        logs.contains("PIP_CONSTRAINT=/tmp/swerve-dated-constraints.txt: the project's requirements as of 2024-06-01"),
        "the build log says how the install step was bounded:\n{logs}"
    );
}
