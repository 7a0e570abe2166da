//! `swerve view`: serves the web viewer (`swerve_view`) over run directories and trajectory
//! files until interrupted, or writes it as static files with `--export`.

use std::net::ToSocketAddrs;
use std::process::ExitCode;

use anyhow::{Context, Result};
use swerve_view::export::export;
use swerve_view::{Access, Catalog, serve};
use tokio::signal::unix::{SignalKind, signal};

use crate::cli::ViewArgs;

pub fn run(args: ViewArgs) -> Result<ExitCode> {
    let catalog = Catalog::new(&args.paths)?;
    if let Some(out) = &args.export {
        let exported = export(&catalog, out)?;
        println!(
            "swerve view: {} runs and {} trajectories written to {}/ (open index.html)",
            exported.runs,
            exported.trajectories,
            out.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let address = args
        .listen
        .to_socket_addrs()
        .ok()
        .and_then(|mut addresses| addresses.next())
        .with_context(|| {
            format!(
                "--listen {}: not a host:port address\nhint: for example 127.0.0.1:8765, or port 0 for a free one",
                args.listen
            )
        })?;
    let token_given = args.token.is_some();
    let access = Access::for_address(&address, args.token)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(address)
            .await
            .with_context(|| format!("cannot listen on {address} (--listen)"))?;
        let bound = listener.local_addr()?;
        let query = match &access.token {
            Some(_) if token_given => "?token=<your token>".to_owned(),
            Some(token) => format!("?token={token}"),
            None => String::new(),
        };
        println!("swerve view: listening on http://{bound}/{query}");
        let mut terminate = signal(SignalKind::terminate())?;
        let mut interrupt = signal(SignalKind::interrupt())?;
        let stop = async move {
            tokio::select! {
                _ = terminate.recv() => {}
                _ = interrupt.recv() => {}
            }
        };
        serve(listener, catalog, access, stop).await
    })?;
    Ok(ExitCode::SUCCESS)
}
