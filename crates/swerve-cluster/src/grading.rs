//! `swerve eval` on a cluster: [`ClusterGrader`], a `Grader` that grades on the nodes and
//! writes each grading's logs into `<out>/logs/<instance_id>/`, as a local grading does.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use swerve_core::Task;
use swerve_eval::grader::{Grade, GradeFuture, Grader};
use swerve_eval::report::{ErrorClass, InstanceReport};
use swerve_rollout::config::Config;

use crate::driver::Cluster;
use crate::protocol::{Job, Work};
use crate::rollouts::locality_key;

/// Grades on the cluster's workers.
pub struct ClusterGrader {
    /// The cluster, its workers set up for grading.
    pub cluster: Arc<Cluster>,
    /// The run's configuration (for the locality of tasks).
    pub config: Config,
    /// The output directory: logs go to `<out>/logs/<instance_id>/`.
    pub out: PathBuf,
    /// Whether the graders run tests (`--evaluator tests`).
    pub runs_tests: bool,
    /// Numbers the gradings, so that several of one task (`--repeat`) are told apart.
    pub count: AtomicUsize,
}

impl Grader for ClusterGrader {
    fn grade<'a>(
        &'a self,
        task: &'a Task,
        patch: Option<&'a str>,
        _label: Option<&'a str>,
    ) -> GradeFuture<'a> {
        Box::pin(async move {
            let number = self.count.fetch_add(1, Ordering::Relaxed);
            let job = Job {
                id: format!("{}#{number}", task.instance_id),
                work: Work::Grade {
                    instance_id: task.instance_id.clone(),
                    patch: patch.map(str::to_owned),
                },
            };
            let key = locality_key(&self.config, task);
            let result = match self.cluster.run(&job, &key).await {
                Ok(reply) => {
                    let written = reply
                        .files
                        .iter()
                        .try_for_each(|file| file.write_under(&self.out));
                    match (reply.grade, reply.error, written) {
                        (_, _, Err(error)) => Err(format!("{error:#}")),
                        (Some(grade), None, Ok(())) => Ok(Grade::from(grade)),
                        (_, Some(error), Ok(())) => Err(error),
                        (None, None, Ok(())) => Err("the worker's reply has no grade".into()),
                    }
                }
                Err(error) => Err(error),
            };
            result.unwrap_or_else(|error| {
                let mut report = InstanceReport::new(patch);
                report.record_error(ErrorClass::Infra, format!("on the Ray cluster: {error}"));
                Grade::by_tests(report)
            })
        })
    }

    fn runs_tests(&self) -> bool {
        self.runs_tests
    }
}
