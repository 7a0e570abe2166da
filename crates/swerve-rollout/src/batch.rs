//! Batches of independent jobs (a run's rollouts, a backfill's trajectories): [`run`] runs
//! them a given number at a time on a tokio runtime of its own and tells an [`Observer`] as
//! each starts and ends, so a front end can show progress its own way.

use std::future::Future;
use std::sync::Arc;

/// What a batch tells as its jobs go (a front end's progress display).
pub trait Observer<R>: Send + Sync + 'static {
    /// The job `name` started (it got one of the `concurrency` places).
    fn started(&self, name: &str);
    /// The job `name` ended with `result`.
    fn finished(&self, name: &str, result: &Result<R, String>);
}

/// Runs `job` on each of `items` (each with its name) on a new tokio runtime, at most
/// `concurrency` at once, telling `observer` as each starts and ends. Returns the results in
/// the items' order; a job that panicked ends with an error saying so.
pub fn run<T, R, F, Fut>(
    items: Vec<(String, T)>,
    concurrency: usize,
    job: F,
    observer: Arc<dyn Observer<R>>,
) -> std::io::Result<Vec<Result<R, String>>>
where
    F: Fn(T) -> Fut,
    Fut: Future<Output = Result<R, String>> + Send + 'static,
    R: Send + 'static,
{
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    Ok(
        runtime.block_on(run_all(items, concurrency, |(name, item)| {
            let observer = observer.clone();
            let future = job(item);
            async move {
                observer.started(&name);
                let result = future.await;
                observer.finished(&name, &result);
                result
            }
        })),
    )
}

/// Runs `job` on each of `items`, at most `concurrency` at once, and returns the results
/// in the items' order; a job that panicked ends with an error saying so.
async fn run_all<T, R, F, Fut>(
    items: impl IntoIterator<Item = T>,
    concurrency: usize,
    job: F,
) -> Vec<Result<R, String>>
where
    F: Fn(T) -> Fut,
    Fut: Future<Output = Result<R, String>> + Send + 'static,
    R: Send + 'static,
{
    let semaphore = Arc::new(tokio::sync::Semaphore::new(concurrency));
    let mut handles = Vec::new();
    for item in items {
        let permit = semaphore
            .clone()
            .acquire_owned()
            .await
            .expect("the semaphore is never closed");
        let future = job(item);
        handles.push(tokio::spawn(async move {
            let _permit = permit;
            future.await
        }));
    }
    let mut results = Vec::new();
    for handle in handles {
        results.push(
            handle
                .await
                .unwrap_or_else(|panic| Err(format!("it panicked: {panic}"))),
        );
    }
    results
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::time::Duration;

    use super::*;

    #[test]
    fn runs_every_job_at_most_so_many_at_once_in_order() {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let running = Arc::new(Mutex::new((0usize, 0usize)));
        let results = runtime.block_on(run_all(0..12u64, 3, |item| {
            let running = running.clone();
            async move {
                {
                    let mut running = running.lock().unwrap();
                    running.0 += 1;
                    running.1 = running.1.max(running.0);
                }
                tokio::time::sleep(Duration::from_millis(10 + (item % 3) * 5)).await;
                running.lock().unwrap().0 -= 1;
                if item == 7 {
                    panic!("job 7 broke");
                }
                Ok(item * 2)
            }
        }));
        assert_eq!(results.len(), 12);
        for (item, result) in results.iter().enumerate() {
            match item {
                7 => assert!(
                    result.as_ref().unwrap_err().contains("panicked"),
                    "{result:?}"
                ),
                _ => assert_eq!(result, &Ok(item as u64 * 2)),
            }
        }
        assert_eq!(running.lock().unwrap().1, 3);
    }
}
