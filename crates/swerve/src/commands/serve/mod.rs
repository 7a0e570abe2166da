//! `swerve serve`: the rollout service. Trainers (verl, SkyRL, OpenRLHF, …) ask it over
//! HTTP for rollouts of `swerve run`'s agent against their own inference server, step
//! gym-style environments themselves, or have patches graded as rewards. See
//! `docs/serve.md`.
//!
//! Every route but `/v1/health` needs the bearer token. Rollouts and gradings take slots
//! (`serve.max_rollouts`, 429 when full); environments are bounded too and expire when
//! idle. On SIGINT or SIGTERM the service stops accepting, lets in-flight work finish
//! within `serve.shutdown_grace_secs`, then cancels what is left, destroys every sandbox,
//! and records what it interrupted in `<serve.out>/shutdown.json`.

mod api;
mod env_table;
mod envs;
mod errors;
mod patch_text;
mod requests;
mod reward;
mod rollout_table;
mod rollouts;
mod service;
mod slots;

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde_json::json;
use swerve_core::atomic::write_json_atomically;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::Notify;

use service::Service;
use swerve_rollout::config::Config;

/// How long cancelled rollouts get to tear their sandboxes down after the grace period.
const TEARDOWN_WAIT: Duration = Duration::from_secs(30);

/// Runs the service until SIGINT or SIGTERM.
pub fn run(config: &Config) -> Result<ExitCode> {
    let service = Arc::new(Service::new(config)?);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let result = runtime.block_on(serve(service));
    runtime.shutdown_timeout(TEARDOWN_WAIT);
    result
}

async fn serve(service: Arc<Service>) -> Result<ExitCode> {
    let mut terminate = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    let serve = &service.serve;
    let listener = tokio::net::TcpListener::bind(&serve.listen)
        .await
        .with_context(|| format!("cannot listen on {} (serve.listen)", serve.listen))?;
    let address = listener.local_addr()?;
    println!("swerve serve: listening on http://{address}");
    std::io::stdout().flush()?;
    eprintln!(
        "{} rollouts at once ({} queued), {} environments (idle for {} s expire); trajectories \
         in {}",
        serve.max_rollouts,
        serve.queue,
        serve.max_envs,
        serve.env_ttl_secs,
        serve.out.join("trajectories").display()
    );
    let reaper = tokio::spawn(reap(service.clone()));
    let stop = Arc::new(Notify::new());
    let mut server = tokio::spawn(
        axum::serve(listener, api::router(service.clone()))
            .with_graceful_shutdown({
                let stop = stop.clone();
                async move { stop.notified().await }
            })
            .into_future(),
    );
    let signal = tokio::select! {
        _ = terminate.recv() => "SIGTERM",
        _ = interrupt.recv() => "SIGINT",
        result = &mut server => {
            result??;
            anyhow::bail!("the server stopped by itself");
        }
    };
    service.begin_shutdown();
    stop.notify_one();
    let grace = Duration::from_secs_f64(serve.shutdown_grace_secs);
    eprintln!(
        "{signal}: shutting down; {} rollouts in flight get {} s to finish",
        service.rollouts.running(),
        grace.as_secs_f64()
    );
    let drained = tokio::time::timeout(grace, &mut server).await.is_ok();
    let interrupted = match drained {
        true => Vec::new(),
        false => {
            server.abort();
            service.rollouts.abort_all()
        }
    };
    let waited = Instant::now();
    while service.rollouts.running() > 0 && waited.elapsed() < TEARDOWN_WAIT {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    reaper.abort();
    let envs_closed = service.envs.close_all().await;
    let record = json!({
        "signal": signal,
        "finished_within_grace": drained,
        "interrupted_rollouts": interrupted,
        "environments_closed": envs_closed,
    });
    let path = serve.out.join("shutdown.json");
    write_json_atomically(&path, &record)
        .with_context(|| format!("cannot write {}", path.display()))?;
    eprintln!(
        "stopped: {} rollouts interrupted, {envs_closed} environments closed ({})",
        interrupted.len(),
        path.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Destroys idle environments, forever.
async fn reap(service: Arc<Service>) {
    let mut tick = tokio::time::interval(service.envs.reap_interval());
    loop {
        tick.tick().await;
        service.envs.reap();
    }
}
