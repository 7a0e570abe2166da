//! The router of the world environment: for each tool call, whether it runs on the
//! sandbox, is simulated by the transition model, is refused, or is answered as a
//! successful package install.
//!
//! File tools always run on the sandbox. An `execute_bash` command is parsed
//! ([`crate::shell`]), unwrapped into the programs it starts ([`crate::invocation`]), and
//! each program is looked up in the command table; the line gets the strongest route of
//! its programs: blocked > simulated > install > sandbox. Nothing is decided by substring
//! search, so `skip ` is not `ip `, `grep -r "rm -rf"` is a read and `echo pytest` does
//! not run pytest.

mod table;

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use serde::{Deserialize, Serialize};
use swerve_core::ToolCall;
use swerve_tools::{ToolResult, bash_error_code};

use crate::invocation::{Invocation, PythonRun, Unit, is_python, name_forms, python_run, units};
use crate::observation::bash_result;
use crate::shell::{Script, Word};

/// Where an action goes, weakest first: a line's route is the strongest of its programs'.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Route {
    /// Runs for real on the sandbox (reads, searches, navigation, edits).
    Sandbox,
    /// Answered as a successful install; nothing runs.
    Install,
    /// Answered by the transition model; nothing runs.
    Simulated,
    /// Refused with a message; nothing runs.
    Blocked,
}

impl fmt::Display for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Route::Sandbox => "sandbox",
            Route::Install => "install",
            Route::Simulated => "simulated",
            Route::Blocked => "blocked",
        })
    }
}

/// The router's answer for one action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    /// Where the action goes.
    pub route: Route,
    /// Why, naming the program and the rule, e.g. ``"`pytest` runs project code …"``.
    pub reason: String,
    /// The command-table key (or program) that decided, e.g. `rm` or `pip install`.
    pub command: Option<String>,
}

/// The router's settings (the `[world.router]` table).
///
/// `commands` entries apply over the built-in table (unless `builtin = false`), so a
/// configuration only lists what it changes. A key is a program name, optionally followed
/// by its subcommand words: `"pip install" = "install"` is looked up before `pip`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RouterConfig {
    /// Start from the built-in table (see `docs/world.md`).
    pub builtin: bool,
    /// Command keys and their routes, over the built-in table.
    pub commands: BTreeMap<String, Route>,
    /// The route of programs in neither table (including scripts of the repository run by
    /// path, and program names only known at run time).
    pub default: Route,
    /// The route of a command line that cannot be parsed (an unclosed quote, …).
    pub unparsable: Route,
    /// What an install prints (exit code 0). SWE-World: `Successfully installed packages.`
    pub install_reply: String,
    /// What a blocked command prints (exit code 1); `{command}` is replaced by the
    /// program. SWE-World: `This command {command} is not allowed. Please try other
    /// approaches.`
    pub blocked_reply: String,
}

impl Default for RouterConfig {
    fn default() -> Self {
        Self {
            builtin: true,
            commands: BTreeMap::new(),
            default: Route::Simulated,
            unparsable: Route::Simulated,
            install_reply: "Successfully installed packages.".to_owned(),
            blocked_reply: "This command {command} is not allowed. Please try other approaches."
                .to_owned(),
        }
    }
}

/// A router configuration that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RouterConfigError {
    /// A `commands` key is empty or only whitespace.
    #[error(
        "world.router.commands: the key {key:?} names no command; use a program name, optionally followed by subcommand words (e.g. \"pip install\")"
    )]
    EmptyKey {
        /// The key as written.
        key: String,
    },
}

/// One command-table entry.
#[derive(Debug, Clone)]
struct Entry {
    route: Route,
    why: String,
}

/// Routes tool calls (see the module documentation).
#[derive(Debug, Clone)]
pub struct Router {
    table: HashMap<String, Entry>,
    config: RouterConfig,
}

/// The route of one program, with its explanation.
struct Verdict {
    route: Route,
    reason: String,
    command: Option<String>,
}

impl Default for Router {
    fn default() -> Self {
        Self::build(RouterConfig::default())
    }
}

impl Router {
    /// A router with these settings.
    pub fn from_config(config: &RouterConfig) -> Result<Router, RouterConfigError> {
        if let Some(key) = config
            .commands
            .keys()
            .find(|key| key.split_whitespace().next().is_none())
        {
            return Err(RouterConfigError::EmptyKey { key: key.clone() });
        }
        Ok(Self::build(config.clone()))
    }

    fn build(config: RouterConfig) -> Router {
        let mut table = HashMap::new();
        if config.builtin {
            for group in &table::BUILTIN {
                for key in group.keys {
                    let entry = Entry {
                        route: group.route,
                        why: group.why.to_owned(),
                    };
                    table.insert((*key).to_owned(), entry);
                }
            }
        }
        for (key, route) in &config.commands {
            let entry = Entry {
                route: *route,
                why: format!("is configured as {route}"),
            };
            table.insert(normalize_key(key), entry);
        }
        Router { table, config }
    }

    /// Routes one tool call: file tools go to the sandbox, `execute_bash` by its command.
    pub fn route_call(&self, call: &ToolCall) -> Decision {
        if call.name != "execute_bash" {
            return Decision {
                route: Route::Sandbox,
                reason: format!("tool `{}` always runs on the sandbox", call.name),
                command: None,
            };
        }
        match bash_command(call) {
            Some(command) => self.route_command(&command),
            None => Decision {
                route: Route::Sandbox,
                reason: "no command given: the tool itself reports the missing argument".to_owned(),
                command: None,
            },
        }
    }

    /// Routes one shell command line.
    pub fn route_command(&self, command: &str) -> Decision {
        let script = match Script::parse(command) {
            Ok(script) => script,
            Err(error) => {
                return Decision {
                    route: self.config.unparsable,
                    reason: format!(
                        "the command cannot be parsed ({error}); unparsable commands are {}",
                        self.config.unparsable
                    ),
                    command: None,
                };
            }
        };
        let mut decision: Option<Verdict> = None;
        for unit in units(&script) {
            let verdict = self.classify(&unit);
            if decision
                .as_ref()
                .is_none_or(|best| verdict.route > best.route)
            {
                decision = Some(verdict);
            }
        }
        match decision {
            Some(verdict) => Decision {
                route: verdict.route,
                reason: verdict.reason,
                command: verdict.command,
            },
            None => Decision {
                route: Route::Sandbox,
                reason: "the command starts no program".to_owned(),
                command: None,
            },
        }
    }

    /// What the action prints instead of running, for the routes that answer at once
    /// (install and blocked), as the `execute_bash` tool result it stands for.
    /// `observation_lines` is the tools' setting of the same name.
    pub fn reply(&self, decision: &Decision, observation_lines: usize) -> Option<ToolResult> {
        match decision.route {
            Route::Install => Some(bash_result(
                &self.config.install_reply,
                &bash_error_code(0),
                observation_lines,
            )),
            Route::Blocked => {
                let command = decision.command.as_deref().unwrap_or("this");
                let text = self.config.blocked_reply.replace("{command}", command);
                Some(bash_result(&text, &bash_error_code(1), observation_lines))
            }
            Route::Sandbox | Route::Simulated => None,
        }
    }

    fn classify(&self, unit: &Unit) -> Verdict {
        match unit {
            Unit::Run(invocation) => self.classify_run(invocation),
            Unit::Computed(invocation) => Verdict {
                route: self.config.default,
                reason: format!(
                    "the program `{}` is only known at run time; unknown programs are {}",
                    invocation.program.text, self.config.default
                ),
                command: Some(invocation.program.text.clone()),
            },
            Unit::Unreadable { text, error } => Verdict {
                route: self.config.unparsable,
                reason: format!(
                    "the nested command {text:?} cannot be parsed ({error}); unparsable commands are {}",
                    self.config.unparsable
                ),
                command: None,
            },
        }
    }

    fn classify_run(&self, invocation: &Invocation) -> Verdict {
        let program = &invocation.program.text;
        if invocation.is_path_program() {
            return Verdict {
                route: self.config.default,
                reason: format!(
                    "`{program}` is a program of the repository; programs not in the command table are {}",
                    self.config.default
                ),
                command: Some(program.clone()),
            };
        }
        let forms = invocation.name_forms();
        if is_python(&forms)
            && let PythonRun::Module(module, args) = python_run(&invocation.args)
            && let Some((key, entry)) = self.lookup(&name_forms(module), args)
        {
            return Verdict {
                route: entry.route,
                reason: format!("`{program} -m {key}`: `{key}` {}", entry.why),
                command: Some(key),
            };
        }
        match self.lookup(&forms, &invocation.args) {
            Some((key, entry)) => Verdict {
                route: entry.route,
                reason: format!("`{key}` {}", entry.why),
                command: Some(key),
            },
            None => Verdict {
                route: self.config.default,
                reason: format!(
                    "`{program}` is not in the command table; unknown programs are {}",
                    self.config.default
                ),
                command: Some(invocation.name().to_owned()),
            },
        }
    }

    /// The longest key made of a name form and the first subcommand words.
    fn lookup(&self, forms: &[String], args: &[Word]) -> Option<(String, &Entry)> {
        let subcommands: Vec<&str> = args
            .iter()
            .filter(|word| !word.text.starts_with('-'))
            .take(2)
            .map(|word| word.text.as_str())
            .collect();
        for form in forms {
            for take in (0..=subcommands.len()).rev() {
                let mut key = form.clone();
                for word in &subcommands[..take] {
                    key.push(' ');
                    key.push_str(word);
                }
                if let Some(entry) = self.table.get(&key) {
                    return Some((key, entry));
                }
            }
        }
        None
    }
}

/// The command of an `execute_bash` call (`cmd`, or SWE-AGILE's `command`), unless blank.
pub fn bash_command(call: &ToolCall) -> Option<String> {
    call.text_arg("cmd")
        .or_else(|| call.text_arg("command"))
        .filter(|command| !command.trim().is_empty())
}

/// A key with its words separated by single spaces.
fn normalize_key(key: &str) -> String {
    key.split_whitespace().collect::<Vec<_>>().join(" ")
}
