//! Context assembly over real files: a workspace and an original checkout on disk, read
//! through `WorkspaceFs` as the world environment will.

use std::fs;
use std::path::Path;

use serde_json::json;
use swerve_core::Task;
use swerve_tools::WorkspaceFs;
use swerve_world::context::{
    Budgets, ContextConfig, IssueInputs, PromptStyle, Sources, SwrContext, TransitionContext,
};
use swerve_world::tokens::{ApproxTokens, TokenCounter};
use tempfile::TempDir;

const GOLD: &str = "\
diff --git a/src/pkg/core.py b/src/pkg/core.py
--- a/src/pkg/core.py
+++ b/src/pkg/core.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b
";

const AGENT: &str = "\
diff --git a/src/pkg/core.py b/src/pkg/core.py
--- a/src/pkg/core.py
+++ b/src/pkg/core.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return b + a
diff --git a/reproduce.py b/reproduce.py
new file mode 100644
--- /dev/null
+++ b/reproduce.py
@@ -0,0 +1,2 @@
+from pkg.core import add
+print(add(1, 2))
";

const TEST_PATCH: &str = "\
diff --git a/tests/test_core.py b/tests/test_core.py
--- a/tests/test_core.py
+++ b/tests/test_core.py
@@ -1,2 +1,4 @@
 from pkg.core import add
+def test_add():
+    assert add(1, 2) == 3
";

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// The agent's workspace (patch applied) and the original checkout.
struct Repo {
    workspace: TempDir,
    original: TempDir,
    task: Task,
}

impl Repo {
    fn new() -> Self {
        let workspace = TempDir::new().unwrap();
        let original = TempDir::new().unwrap();
        for root in [workspace.path(), original.path()] {
            write(root, "src/pkg/__init__.py", "");
            write(
                root,
                "src/pkg/core.py",
                "def add(a, b):\n    return a - b\n",
            );
            write(root, "tests/helpers.py", "HELP = 1\n");
            write(
                root,
                "tests/sub/test_deep.py",
                "def test_deep():\n    pass\n",
            );
            write(root, "docs/index.rst", "Docs\n");
        }
        write(
            workspace.path(),
            "src/pkg/core.py",
            "def add(a, b):\n    return b + a\n",
        );
        write(
            workspace.path(),
            "reproduce.py",
            "from pkg.core import add\nprint(add(1, 2))\n",
        );
        write(
            workspace.path(),
            "tests/test_core.py",
            "from pkg.core import add\ndef test_add():\n    assert add(1, 2) == 3\n",
        );
        write(
            original.path(),
            "tests/test_core.py",
            "from pkg.core import add\n",
        );
        let mut task = Task::new("octo__pkg-1", "octo/pkg", "abc123", "add() subtracts.");
        task.patch = Some(GOLD.to_owned());
        task.test_patch = Some(TEST_PATCH.to_owned());
        task.hints_text = Some("Look at core.py".to_owned());
        task.fail_to_pass = vec!["tests/test_core.py::test_add".to_owned()];
        task.pass_to_pass = (0..50)
            .map(|i| format!("tests/sub/test_deep.py::test_{i}"))
            .collect();
        Repo {
            workspace,
            original,
            task,
        }
    }

    fn transition(&self, command: &str, config: &ContextConfig) -> TransitionContext {
        let workspace = WorkspaceFs::new(self.workspace.path());
        let original = WorkspaceFs::new(self.original.path());
        let sources = Sources {
            workspace: &workspace,
            original: &original,
            counter: &ApproxTokens,
        };
        let inputs = IssueInputs {
            task: &self.task,
            initial_analysis: Some("- add() uses `-` instead of `+`."),
            agent_patch: AGENT,
        };
        TransitionContext::assemble(&inputs, command, &sources, config)
            .with_prompts(PromptStyle::Swerve)
    }

    fn evaluation(&self, task: &Task, config: &ContextConfig) -> SwrContext {
        let workspace = WorkspaceFs::new(self.workspace.path());
        let original = WorkspaceFs::new(self.original.path());
        let sources = Sources {
            workspace: &workspace,
            original: &original,
            counter: &ApproxTokens,
        };
        let inputs = IssueInputs {
            task,
            initial_analysis: None,
            agent_patch: AGENT,
        };
        SwrContext::assemble(&inputs, "pytest -rA tests/test_core.py", &sources, config)
            .with_prompts(PromptStyle::Swerve)
    }
}

fn paths(context: &TransitionContext) -> Vec<&str> {
    context
        .executed_files
        .iter()
        .map(|file| file.path.as_str())
        .collect()
}

#[test]
fn gathers_the_issue_the_patches_and_the_executed_code() {
    let repo = Repo::new();
    // Hints are off by default (SWE-World omits them); a budget turns them on.
    let mut with_hints = ContextConfig::default();
    assert_eq!(with_hints.budgets.hints, 0);
    assert_eq!(
        repo.transition("python reproduce.py", &with_hints)
            .issue
            .hints,
        None
    );
    with_hints.budgets.hints = 2_048;
    let context = repo.transition("cd /testbed && python reproduce.py", &with_hints);
    assert_eq!(paths(&context), ["/testbed/reproduce.py"]);
    assert_eq!(
        context.executed_files[0].content.as_deref(),
        Some("from pkg.core import add\nprint(add(1, 2))\n")
    );
    assert!(!context.inline_code);
    let issue = &context.issue;
    assert_eq!(issue.instance_id, "octo__pkg-1");
    assert_eq!(issue.problem_statement, "add() subtracts.");
    assert_eq!(issue.hints.as_deref(), Some("Look at core.py"));
    assert_eq!(issue.gold_patch.as_deref(), Some(GOLD));
    assert_eq!(issue.agent_patch, AGENT);
    // Originals of the files either patch modifies; the new reproduce.py has none.
    let originals: Vec<(&str, Option<&str>)> = issue
        .original_files
        .iter()
        .map(|file| (file.path.as_str(), file.content.as_deref()))
        .collect();
    assert_eq!(
        originals,
        [(
            "/testbed/src/pkg/core.py",
            Some("def add(a, b):\n    return a - b\n")
        )]
    );
    assert!(issue.notes.is_empty(), "{:?}", issue.notes);

    let prompt = context.user_prompt();
    for expected in [
        "# Command to run\n\n```bash\ncd /testbed && python reproduce.py\n```\n",
        "# Issue\n\nadd() subtracts.\n",
        "# Initial analysis\n\n- add() uses `-` instead of `+`.\n",
        "# Hints from the issue discussion\n\nLook at core.py\n",
        "## /testbed/reproduce.py\n```python\nfrom pkg.core import add\n",
        "# The agent's changes so far\n\n```diff\ndiff --git a/src/pkg/core.py",
        "# Reference fix (hidden from the agent)\n\n```diff\n",
        "# Original contents of the files the patches modify\n\n## /testbed/src/pkg/core.py\n",
        "Answer with the JSON object only.",
    ] {
        assert!(
            prompt.contains(expected),
            "missing {expected:?} in\n{prompt}"
        );
    }
    let messages = context.messages();
    assert_eq!(messages.len(), 2);

    // Recorded contexts read back the same.
    let json = serde_json::to_value(&context).unwrap();
    assert_eq!(json["command"], "cd /testbed && python reproduce.py");
    assert_eq!(json["instance_id"], "octo__pkg-1");
    let back: TransitionContext = serde_json::from_value(json).unwrap();
    assert_eq!(back, context);
}

#[test]
fn expands_test_directories_globs_and_node_ids() {
    let repo = Repo::new();
    let config = ContextConfig::default();
    let context = repo.transition("python -m pytest tests -q", &config);
    assert_eq!(
        paths(&context),
        [
            "/testbed/tests/test_core.py",
            "/testbed/tests/sub/test_deep.py"
        ]
    );
    let context = repo.transition(
        "pytest tests/test_core.py::test_add tests/sub/test_*.py",
        &config,
    );
    assert_eq!(
        paths(&context),
        [
            "/testbed/tests/test_core.py",
            "/testbed/tests/sub/test_deep.py"
        ]
    );
    let context = repo.transition("cd src && python -m pkg.core", &config);
    assert_eq!(paths(&context), ["/testbed/src/pkg/core.py"]);
    let context = repo.transition("python -c 'import pkg'", &config);
    assert!(context.inline_code);
    assert!(context.executed_files.is_empty());
    assert!(
        context
            .user_prompt()
            .contains("(no files: the code to run is in the command itself)")
    );
    let capped = ContextConfig {
        max_files: 1,
        ..ContextConfig::default()
    };
    let context = repo.transition("pytest tests docs", &capped);
    assert_eq!(paths(&context), ["/testbed/tests/test_core.py"]);
    assert!(
        context
            .issue
            .notes
            .iter()
            .any(|note| note.contains("only the first 1 files")),
        "{:?}",
        context.issue.notes
    );
}

#[test]
fn shows_missing_scripts_and_files_the_command_writes() {
    let repo = Repo::new();
    let config = ContextConfig::default();
    let context = repo.transition("python missing.py data.csv", &config);
    assert_eq!(paths(&context), ["/testbed/missing.py"]);
    assert_eq!(context.executed_files[0].content, None);
    assert_eq!(
        context.executed_files[0].remark.as_deref(),
        Some("does not exist")
    );
    assert!(
        context
            .user_prompt()
            .contains("## /testbed/missing.py\n(does not exist)\n")
    );

    let command = "cat > /testbed/t.py <<'EOF'\nprint('hi')\nEOF\npython t.py";
    let context = repo.transition(command, &config);
    assert_eq!(paths(&context), ["/testbed/t.py"]);
    assert_eq!(
        context.executed_files[0].content.as_deref(),
        Some("print('hi')\n")
    );
    assert_eq!(
        context.executed_files[0].remark.as_deref(),
        Some("written by the command itself")
    );
}

#[test]
fn keeps_every_section_within_its_budget() {
    let repo = Repo::new();
    write(
        repo.workspace.path(),
        "big.py",
        &"x = 1  # padding\n".repeat(2_000),
    );
    write(repo.workspace.path(), "small.py", "print('small')\n");
    let budgets = Budgets {
        code: 300,
        command: 10,
        agent_patch: 20,
        problem_statement: 2,
        ..Budgets::default()
    };
    let config = ContextConfig {
        budgets,
        ..ContextConfig::default()
    };
    let command = format!("python big.py && python small.py # {}", "y".repeat(200));
    let context = repo.transition(&command, &config);
    let counter = ApproxTokens;
    assert!(counter.count(&context.command) <= 10, "{}", context.command);
    assert!(counter.count(&context.issue.agent_patch) <= 20);
    assert!(counter.count(&context.issue.problem_statement) <= 2);
    let small = &context.executed_files[1];
    assert_eq!(small.content.as_deref(), Some("print('small')\n"));
    let big = &context.executed_files[0];
    assert_eq!(big.remark.as_deref(), Some("cut to fit the context budget"));
    let code: usize = context
        .executed_files
        .iter()
        .map(|file| counter.count(file.content.as_deref().unwrap_or_default()))
        .sum();
    assert!(code <= 300, "{code}");
    assert!(code > 200, "the budget is used: {code}");
    for section in [
        "command cut",
        "agent patch cut",
        "problem statement cut",
        "big.py cut",
    ] {
        assert!(
            context
                .issue
                .notes
                .iter()
                .any(|note| note.contains(section)),
            "{section}: {:?}",
            context.issue.notes
        );
    }
}

#[test]
fn evaluation_context_adds_the_tests() {
    let repo = Repo::new();
    let budgets = Budgets {
        pass_to_pass: 60,
        ..Budgets::default()
    };
    let config = ContextConfig {
        budgets,
        ..ContextConfig::default()
    };
    let context = repo.evaluation(&repo.task, &config);
    assert_eq!(context.test_command, "pytest -rA tests/test_core.py");
    let files: Vec<&str> = context.test_files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(files, ["/testbed/tests/test_core.py"]);
    assert!(
        context.test_files[0]
            .content
            .as_deref()
            .unwrap()
            .contains("def test_add")
    );
    assert_eq!(context.test_patch, None);
    assert_eq!(context.fail_to_pass.tests, ["tests/test_core.py::test_add"]);
    assert_eq!(context.fail_to_pass.omitted, 0);
    let shown = context.pass_to_pass.tests.len();
    assert!(shown > 0 && shown < 50, "{shown}");
    assert_eq!(context.pass_to_pass.omitted, 50 - shown);
    let prompt = context.user_prompt();
    for expected in [
        "# Test command\n\n```bash\npytest -rA tests/test_core.py\n```\n",
        "# FAIL_TO_PASS tests (all must pass for reward 1)\n\n- tests/test_core.py::test_add\n",
        &format!("- … and {} more not shown\n", 50 - shown),
        "# Test files\n\n## /testbed/tests/test_core.py\n",
        "# The agent's patch\n\n```diff\n",
        "Reason inside <think>...</think>",
    ] {
        assert!(
            prompt.contains(expected),
            "missing {expected:?} in\n{prompt}"
        );
    }
    assert!(
        context
            .issue
            .notes
            .iter()
            .any(|note| note.starts_with("PASS_TO_PASS:")),
        "{:?}",
        context.issue.notes
    );

    // R2E-Gym rows carry the test files' contents.
    let mut task = repo.task.clone();
    task.extra.insert(
        "test_exec_content".to_owned(),
        json!({"r2e_tests/test_1.py": "def test_1():\n    assert True\n"}),
    );
    let context = repo.evaluation(&task, &ContextConfig::default());
    let files: Vec<(&str, Option<&str>)> = context
        .test_files
        .iter()
        .map(|f| (f.path.as_str(), f.content.as_deref()))
        .collect();
    assert_eq!(
        files,
        [(
            "/testbed/r2e_tests/test_1.py",
            Some("def test_1():\n    assert True\n")
        )]
    );

    // Without readable test files the test patch itself is shown.
    let mut task = repo.task.clone();
    task.test_patch = Some(TEST_PATCH.replace("tests/test_core.py", "tests/test_new.py"));
    let context = repo.evaluation(&task, &ContextConfig::default());
    assert!(context.test_files.is_empty());
    assert!(
        context
            .test_patch
            .as_deref()
            .unwrap()
            .contains("tests/test_new.py")
    );
    assert!(
        context
            .user_prompt()
            .contains("# Test patch (applied before the tests run)")
    );
}

#[test]
fn configuration_reads_from_toml() {
    let config: ContextConfig =
        toml::from_str("sandbox_root = \"/repo\"\nmax_files = 3\n[budgets]\ncode = 100\n").unwrap();
    assert_eq!(config.sandbox_root, "/repo");
    assert_eq!(config.max_files, 3);
    assert_eq!(config.budgets.code, 100);
    assert_eq!(config.budgets.gold_patch, Budgets::default().gold_patch);
    let error = toml::from_str::<ContextConfig>("[budgets]\ncodes = 1").unwrap_err();
    assert!(error.to_string().contains("codes"), "{error}");
    let world: swerve_world::WorldConfig = toml::from_str(
        "[router.commands]\nrm = \"sandbox\"\n[swt]\nstyle = \"swe_world\"\n[swr]\nvotes = 5\n[swr.sampling]\ntemperature = 0.0\n",
    )
    .unwrap();
    assert_eq!(world.swr.votes, 5);
    assert_eq!(world.swr.sampling.temperature, Some(0.0));
    assert_eq!(world.swt.style, swerve_world::ObservationStyle::SweWorld);
    assert_eq!(world.swt.sampling.temperature, Some(0.0));
}

/// SWE-World's templates (Figs. G.2 and G.3), the default: the paper's system prompts and
/// numbered sections in the paper's order, filled from the same context.
#[test]
fn paper_prompts_follow_figures_g2_and_g3() {
    let repo = Repo::new();
    let context = repo
        .transition("python reproduce.py", &ContextConfig::default())
        .with_prompts(PromptStyle::default());
    assert_eq!(context.prompts, PromptStyle::Paper);
    let messages = context.messages();
    assert!(messages[0].text().starts_with(
        "You are an expert Python code execution simulator and a world-class software engineer."
    ));
    let user = messages[1].text();
    let order = [
        "### 1. Initial Analysis of the Problem\n- add() uses `-` instead of `+`.\n\n",
        "### 2. Problem Description\nadd() subtracts.\n\n",
        "### 3. Command to Simulate\n```bash\npython reproduce.py\n```\n\n",
        "### 4. Content of Code to be Executed\n## /testbed/reproduce.py\n",
        "### 5. Agent's Current Code Modifications (Patch)\n```diff\n",
        "### 6. Gold Standard Patch (For Your Reference)\n```diff\n",
        "### YOUR TASK\nBased on all the context above, provide the simulated output for the given\ncommand.",
    ];
    let mut at = 0;
    for section in order {
        let found = user[at..]
            .find(section)
            .unwrap_or_else(|| panic!("{section:?} after {at} in\n{user}"));
        at += found + section.len();
    }
    assert!(
        !user.contains("Look at core.py"),
        "no hints in the paper's templates"
    );

    let mut task = repo.task.clone();
    task.test_patch = None;
    let swr = repo
        .evaluation(&task, &ContextConfig::default())
        .with_prompts(PromptStyle::Paper);
    let messages = swr.messages();
    assert!(
        messages[0]
            .text()
            .starts_with("You are an expert software engineering test runner and evaluator.")
    );
    let user = messages[1].text();
    for section in [
        "### 3. Command to Simulate\n```bash\npytest -rA tests/test_core.py\n```",
        "### 7. FAIL_TO_PASS Tests (Must All Pass for reward=1)\n- tests/test_core.py::test_add\n",
        "### 8. PASS_TO_PASS Tests (Must All Pass for reward=1)\n- tests/sub/test_deep.py::test_0\n",
        "keys 'test_report' and 'reward'.",
    ] {
        assert!(user.contains(section), "{section:?} in\n{user}");
    }
}
