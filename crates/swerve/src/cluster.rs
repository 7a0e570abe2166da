//! Starting the Ray cluster of `swerve run --ray` and `swerve eval --ray` and saying which
//! nodes took part (the work itself is `swerve_cluster`'s).

use anyhow::Result;
use swerve_cluster::driver::Cluster;
use swerve_cluster::protocol::GradingSetup;
use swerve_cluster::rollouts;
use swerve_rollout::config::Config;

/// Connects to the Ray cluster of `config` and starts its workers for the tasks of
/// `task_file`, writing into `out` (`grading` for `swerve eval`), saying which nodes took part.
pub fn start(
    config: &Config,
    task_file: &std::path::Path,
    out: &std::path::Path,
    grading: Option<GradingSetup>,
) -> Result<Cluster> {
    let setup = rollouts::setup(config, task_file, out, grading)?;
    let cluster = Cluster::start(&config.cluster, &setup)?;
    eprintln!(
        "Ray cluster at {}: {} workers, {} slots ({})",
        config.cluster.address,
        cluster.nodes().len(),
        cluster.slots(),
        cluster.nodes().join(", ")
    );
    Ok(cluster)
}
