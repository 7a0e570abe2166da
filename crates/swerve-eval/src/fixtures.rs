//! Hermetic network fixtures: local stand-ins, inside the evaluation sandbox's own network
//! namespace, for the public test services a test suite talks to, so instances whose tests
//! need them grade offline with the official verdict. Opt-in per recipe (`services = [...]`
//! in a recipe table), recorded in each report ([`InstanceReport::services`]). The names are [`Service`]s.
//!
//! - [`Service::Httpbin`]: the `httpbin` package from PyPI ([`HTTPBIN_PACKAGES`], resolved as
//!   of [`HTTPBIN_EXCLUDE_NEWER`]) in its own cached environment (built once per Python
//!   version, as the tasks' dependencies are: [`Environments::prepare`]), shown read-only at
//!   [`HTTPBIN_MOUNT_POINT`], served by gunicorn at `127.0.0.1:80`, with `httpbin.org` naming
//!   `127.0.0.1` in the sandbox's `/etc/hosts`. Plain HTTP only: `https://httpbin.org` is
//!   refused (port 443 is closed), since serving it would need a certificate authority the
//!   tests trust, which means changing the trust store they see (`REQUESTS_CA_BUNDLE`),
//!   which the official harness does not. Other names (`www.google.co.uk`) do not resolve.
//! - [`Service::Tarpit`]: IPv4 packets to addresses outside the sandbox are dropped rather
//!   than refused (`SandboxConfig::drop_outbound`), so a connection to an unroutable address
//!   such as requests' `TARPIT` (`10.255.255.1`) times out, as it does on the official
//!   harness's network, instead of failing at once with `Network is unreachable`.
//!
//! They are part of a task's prepared environment ([`TaskEnvironments::environment`]), so
//! the agent's workspace has them as its grade's has: rollouts, the gym, `swerve env` and
//! grading alike ([`PreparedTask::workspace`] starts them). The fixtures are started by their
//! own command in the fresh workspace ([`Fixtures::start`]), before the runner probe and
//! before the patch is applied, with their own
//! interpreter in isolated mode (`python -I`, from `/`): nothing the patch or the tests change
//! reaches them, and a fixture that does not answer is the machinery's failure (`infra`,
//! `environment_unavailable`), not the model's. They stop with the workspace, after the tests.
//!
//! [`InstanceReport::services`]: crate::report::InstanceReport::services
//! [`TaskEnvironments::environment`]: crate::prepare::TaskEnvironments::environment
//! [`PreparedTask::workspace`]: crate::prepare::PreparedTask::workspace

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use swerve_core::Shell;
use swerve_sandbox::{BaseCheckout, ExtraLayer, LayerAccess, WorkspaceOptions};

use crate::apply::write_file;
use crate::environment::{
    Environment, EnvironmentError, EnvironmentRecipe, Environments, expose_interpreter,
};
use crate::spec::Service;

/// The packages of the httpbin fixture, pinned: httpbin (its current maintainers' release,
/// for current Flask) and the WSGI server that serves it.
pub const HTTPBIN_PACKAGES: [&str; 2] = ["httpbin==0.10.2", "gunicorn==23.0.0"];

/// httpbin's own dependencies (Flask, Werkzeug, flasgger, …) resolve as of this date.
pub const HTTPBIN_EXCLUDE_NEWER: &str = "2025-01-01";

/// Where the httpbin fixture's environment appears in the sandbox (read-only).
pub const HTTPBIN_MOUNT_POINT: &str = "/swerve-fixtures/httpbin";

/// The name the httpbin fixture serves under.
pub const HTTPBIN_HOST: &str = "httpbin.org";

/// The httpbin fixture's address and port in the sandbox.
const HTTPBIN_BIND: &str = "127.0.0.1:80";

/// Seconds the start script waits for httpbin to answer.
const START_SECONDS: u32 = 60;

/// Where the fixtures' start script is written inside the sandbox.
const START_PATH: &str = "/tmp/swerve-fixtures.sh";

/// Why the fixtures did not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The start script could not be written or run: the sandbox's fault.
    #[error("starting the network fixtures: {0}")]
    Sandbox(#[source] std::io::Error),
    /// The script ran, but the fixtures did not answer.
    #[error("the network fixtures did not start (exit {exit:?}{}): {}", if *.timed_out { ", timed out" } else { "" }, .printed.trim())]
    NoAnswer {
        /// The script's exit code (`None` when it was killed).
        exit: Option<i32>,
        /// Whether it ran out of time.
        timed_out: bool,
        /// What it printed (the fixture's log).
        printed: String,
    },
}

/// The fixtures of one task, built and ready to layer into its workspaces.
#[derive(Debug, Clone, Default)]
pub struct Fixtures {
    /// The services, sorted, each once.
    services: Vec<Service>,
    /// The httpbin fixture's environment, when [`Service::Httpbin`] is asked for.
    httpbin: Option<Environment>,
}

impl Fixtures {
    /// Builds (or finds cached) what `services` need, in `environments`' cache, over `base`
    /// (the build's working tree; nothing of it is used). `python` is the Python version of
    /// the httpbin fixture's interpreter: the task's own, so no other interpreter is needed.
    pub fn prepare(
        environments: &Environments<'_>,
        base: &BaseCheckout,
        services: &[Service],
        python: Option<&str>,
    ) -> Result<Fixtures, EnvironmentError> {
        let mut services = services.to_vec();
        services.sort();
        services.dedup();
        let httpbin = match services.contains(&Service::Httpbin) {
            true => Some(environments.prepare(base, &httpbin_recipe(python))?),
            false => None,
        };
        Ok(Fixtures { services, httpbin })
    }

    /// The services, sorted.
    pub fn services(&self) -> &[Service] {
        &self.services
    }

    /// Adds the fixtures to workspace options: httpbin's environment read-only at
    /// [`HTTPBIN_MOUNT_POINT`] (and its interpreter's installation), `httpbin.org` in
    /// `/etc/hosts`; for the tarpit, outbound packets dropped.
    pub fn apply(&self, options: &mut WorkspaceOptions) {
        if let Some(httpbin) = &self.httpbin {
            expose_interpreter(&mut options.sandbox, &httpbin.installation);
            options.extra_layers.push(ExtraLayer {
                source: httpbin.prefix.clone(),
                mount_point: HTTPBIN_MOUNT_POINT.into(),
                access: LayerAccess::ReadOnly,
                layers: Vec::new(),
            });
            options
                .sandbox
                .hosts
                .insert(HTTPBIN_HOST.into(), IpAddr::V4(Ipv4Addr::LOCALHOST));
        }
        if self.services.contains(&Service::Tarpit) {
            options.sandbox.drop_outbound = true;
        }
    }

    /// Starts the fixtures in the fresh workspace `shell` runs in and waits until they
    /// answer; returns what the start printed (empty when no fixture needs starting).
    pub fn start(&self, shell: &dyn Shell, timeout: Duration) -> Result<String, StartError> {
        let Some(script) = self.start_script() else {
            return Ok(String::new());
        };
        let outcome = write_file(shell, START_PATH, &script, timeout)
            .and_then(|()| shell.run(&format!("bash {START_PATH} 2>&1"), timeout))
            .map_err(StartError::Sandbox)?;
        let printed = outcome.stdout_text();
        match (outcome.timed_out, outcome.exit_code) {
            (false, Some(0)) => Ok(printed),
            (timed_out, exit) => Err(StartError::NoAnswer {
                exit,
                timed_out,
                printed,
            }),
        }
    }

    /// The shell script that starts the fixtures and waits until they answer (exit 0), or
    /// prints why not (non-zero); `None` when no fixture needs starting.
    fn start_script(&self) -> Option<String> {
        self.httpbin.as_ref()?;
        let python = format!("{HTTPBIN_MOUNT_POINT}/bin/python -I");
        Some(format!(
            r#"set -u
mkdir -p /tmp/swerve-fixtures
cd /
{python} -m gunicorn --bind {HTTPBIN_BIND} --workers 2 --worker-class gthread --threads 8 \
  --pid /tmp/swerve-fixtures/httpbin.pid httpbin:app \
  </dev/null >/tmp/swerve-fixtures/httpbin.log 2>&1 &
for attempt in $(seq {tries}); do
  if {python} -c 'import urllib.request; urllib.request.urlopen("http://{HTTPBIN_HOST}/get", timeout=2)' 2>/dev/null; then
    echo "swerve: fixture httpbin serves http://{HTTPBIN_HOST}/ at {HTTPBIN_BIND} (httpbin {httpbin}, gunicorn {gunicorn})"
    exit 0
  fi
  sleep 0.2
done
echo "swerve: fixture httpbin did not answer at http://{HTTPBIN_HOST}/ within {START_SECONDS} s; its log:"
cat /tmp/swerve-fixtures/httpbin.log
exit 1
"#,
            tries = START_SECONDS * 5,
            httpbin = version_of(HTTPBIN_PACKAGES[0]),
            gunicorn = version_of(HTTPBIN_PACKAGES[1]),
        ))
    }
}

/// The version a `name==version` pin names.
fn version_of(pin: &str) -> &str {
    pin.split_once("==").map_or(pin, |(_, version)| version)
}

/// The environment recipe of the httpbin fixture for interpreter `python`.
fn httpbin_recipe(python: Option<&str>) -> EnvironmentRecipe {
    EnvironmentRecipe {
        key: format!("fixture-httpbin-py{}", python.unwrap_or("3")),
        python: python.map(str::to_owned),
        packages: HTTPBIN_PACKAGES.map(str::to_owned).to_vec(),
        exclude_newer: Some(HTTPBIN_EXCLUDE_NEWER.into()),
        ..EnvironmentRecipe::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_httpbin_needs_starting() {
        let tarpit = Fixtures {
            services: vec![Service::Tarpit],
            httpbin: None,
        };
        assert_eq!(tarpit.start_script(), None);
        let mut options = WorkspaceOptions::default();
        tarpit.apply(&mut options);
        assert!(options.sandbox.drop_outbound);
        assert!(options.sandbox.hosts.is_empty());
    }
}
