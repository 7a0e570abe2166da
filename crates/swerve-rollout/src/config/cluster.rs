//! The `[cluster]` section: where `swerve run` and `swerve eval` run their rollouts and
//! gradings: on this machine (`local`) or on a Ray cluster (`ray`), and how each Ray node's
//! swerve worker is started and sized (see `docs/cluster.md`).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Where rollouts and gradings run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// In this process, `run.concurrency` (or `eval --workers`) at once.
    #[default]
    Local,
    /// On the Ray cluster at `address`: one swerve worker per node.
    Ray,
}

/// Settings of the cluster backend.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ClusterSection {
    /// `local` or `ray` (`--ray ADDRESS` sets `ray` and the address).
    pub backend: Backend,
    /// The Ray cluster's address, as `ray.init(address=...)` takes it: `HOST:PORT` of the
    /// head's GCS, `ray://HOST:10001` (Ray Client) or `auto`.
    pub address: String,
    /// The Python interpreter that has `ray` installed (it runs the Ray driver).
    pub python: String,
    /// The swerve executable on every node; empty: this executable's path.
    pub swerve: String,
    /// A Ray resource a node must have to get a swerve worker (e.g. `swerve` for nodes
    /// started with `--resources '{"swerve": 1}'`); empty: every node.
    pub resource: String,
    /// Rollouts at once per node: `0` sizes it from the node's CPUs and memory
    /// (`slots_per_cpu` × CPUs, at most memory ÷ `memory_per_slot_mb`).
    pub slots: usize,
    /// Rollouts at once per CPU of a node (rollouts mostly wait for the model).
    pub slots_per_cpu: f64,
    /// Memory a rollout may take on a node, in MiB.
    pub memory_per_slot_mb: u64,
    /// CPUs each node's worker reserves from Ray.
    pub worker_cpus: f64,
    /// How long the workers may take to start (connect, probe the sandbox), in seconds.
    pub start_timeout_secs: f64,
    /// How many times a job is started before it counts as failed, when the nodes running it
    /// died.
    pub max_attempts: usize,
    /// Node-local directory for the workers' scratch run directories; unset: the system's
    /// temporary directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scratch: Option<PathBuf>,
}

impl Default for ClusterSection {
    fn default() -> Self {
        Self {
            backend: Backend::Local,
            address: String::new(),
            python: "python3".into(),
            swerve: String::new(),
            resource: String::new(),
            slots: 0,
            slots_per_cpu: 4.0,
            memory_per_slot_mb: 1024,
            worker_cpus: 1.0,
            start_timeout_secs: 120.0,
            max_attempts: 3,
            scratch: None,
        }
    }
}
