//! `swerve doctor`: what isolation is in force here and why, and where things are.

use std::process::ExitCode;

use anyhow::Result;
use swerve_sandbox::{CgroupSupport, Confinement, Isolation, SandboxConfig};

use swerve_rollout::config::Config;

use crate::units::human;

pub fn run(config: &Config) -> Result<ExitCode> {
    let cache = config.cache()?;
    let found = swerve_sandbox::probe(&cache, &config.sandbox);
    let line = |name: &str, result: &Result<(), String>, good: &str| match result {
        Ok(()) => println!("  {name:<20} yes  {good}"),
        Err(why) => println!("  {name:<20} no   {why}"),
    };
    print_host(&swerve_sandbox::HostSystem::current());
    println!("sandbox");
    line(
        "namespaces",
        &found.namespaces,
        "user/mount/PID/network/IPC/UTS/cgroup namespaces start",
    );
    line(
        "overlay",
        &found.overlay,
        "copy-on-write workspaces cost a few directory entries",
    );
    line(
        "network isolated",
        &found.network_isolated,
        "sandboxed commands cannot open connections",
    );
    let cgroups = match found.cgroups {
        CgroupSupport::V2 => "yes  cgroup v2: memory and process limits enforced",
        CgroupSupport::V1 => {
            "yes  cgroup v1 memory and pids controllers: memory and process limits enforced"
        }
        CgroupSupport::Unavailable => {
            "no   no writable cgroup hierarchy: process count via RLIMIT_NPROC only, no memory limit"
        }
    };
    println!("  {:<20} {cgroups}", "cgroups");
    line(
        "reflink",
        &found.reflink,
        "the cache filesystem clones files",
    );
    let in_force = match (config.sandbox.isolation, &found.namespaces) {
        (Isolation::None, _) => "none (isolation = \"none\" in the configuration): commands run as plain subprocesses".to_owned(),
        (_, Ok(())) => format!(
            "namespaces, network {}, workspaces by {}",
            if config.sandbox.network { "ALLOWED" } else { "off" },
            if found.overlay.is_ok() { "overlay" } else { "copy" }
        ),
        (Isolation::Auto, Err(_)) => "NONE: namespaces are unavailable, commands run as plain subprocesses with no isolation".to_owned(),
        (Isolation::Namespaces, Err(_)) => "none: isolation = \"namespaces\" is configured but unavailable, so sandboxes will fail to start".to_owned(),
    };
    println!("  {:<20} {in_force}", "in force");
    match &found.userland {
        Ok(userland) => println!("  {:<20} {userland}", "userland"),
        Err(why) => println!("  {:<20} UNUSABLE: {why}", "userland"),
    }
    println!("images");
    for line in image_store_lines(config) {
        println!("  {line}");
    }
    println!("confinement (what a sandboxed command holds)");
    match &found.confinement {
        Ok(confinement) => print_confinement(confinement, &config.sandbox),
        Err(why) => println!("  {:<20} unknown: {why}", "confinement"),
    }
    println!("tools");
    match &found.git {
        Ok(version) => println!("  {:<20} {version}", "git"),
        Err(why) => println!("  {:<20} MISSING: {why} (install git)", "git"),
    }
    match &found.nsenter {
        Ok(version) => println!("  {:<20} {version}", "nsenter"),
        Err(why) => println!(
            "  {:<20} MISSING: {why} (install util-linux: sandboxes need it for patches)",
            "nsenter"
        ),
    }
    if found.pythons.is_empty() {
        println!("  {:<20} none found on PATH or under pyenv", "python");
    }
    for (version, path) in &found.pythons {
        println!("  {:<20} {version} at {}", "python", path.display());
    }
    println!(
        "  {:<20} {}",
        "bwrap",
        found
            .bwrap
            .as_deref()
            .unwrap_or("not installed (only benchmarks use it)")
    );
    println!("locations");
    println!("  {:<20} {}", "cache", cache.root().display());
    println!("  {:<20} {}", "config", config_location());
    Ok(ExitCode::SUCCESS)
}

/// The kernel and C library, and each kernel feature's floor (docs/install.md).
fn print_host(host: &swerve_sandbox::HostSystem) {
    println!("host");
    println!("  {:<20} {}", "kernel", host.kernel_release);
    println!(
        "  {:<20} {} (swerve needs 2.17 or newer)",
        "glibc", host.glibc
    );
    for (feature, has) in host.features() {
        let (major, minor) = feature.since;
        match has {
            Some(true) => println!(
                "  {:<20} yes  {} (Linux {major}.{minor})",
                feature.name, feature.gives
            ),
            Some(false) => println!(
                "  {:<20} no   needs Linux {major}.{minor}: {}",
                feature.name, feature.without
            ),
            None => println!(
                "  {:<20} ?    needs Linux {major}.{minor}; this kernel's release does not parse",
                feature.name
            ),
        }
    }
}

fn print_confinement(confinement: &Confinement, sandbox: &SandboxConfig) {
    println!("  {:<20} {}", "user namespace", confinement.identity);
    println!("  {:<20} uid_map inside: {}", "", confinement.uid_map);
    println!(
        "  {:<20} CapEff {} (Docker's default set, over the sandbox's own namespaces only)",
        "capabilities", confinement.capabilities
    );
    println!("  {:<20} {}", "seccomp", confinement.seccomp);
    println!(
        "  {:<20} / holds {}",
        "filesystem view",
        confinement.root_entries.join(" ")
    );
    println!(
        "  {:<20} HOME {} (private, writable, one per workspace)",
        "",
        sandbox.home.display()
    );
    if confinement.exposures.is_empty() {
        println!("  {:<20} no host paths exposed", "");
    }
    for (path, writable) in &confinement.exposures {
        let access = if *writable { "writable" } else { "read-only" };
        println!("  {:<20} exposed {access}: {}", "", path.display());
    }
    println!("  {:<20} {}", "disk quota", confinement.quota);
}

fn config_location() -> String {
    if std::path::Path::new("swerve.toml").exists() {
        "./swerve.toml".to_owned()
    } else {
        "none (defaults; pass --config FILE or create ./swerve.toml)".to_owned()
    }
}

/// The store's summary for `swerve doctor`.
fn image_store_lines(config: &Config) -> Vec<String> {
    match config.image_store() {
        Ok(store) => {
            let (blobs, layers) = store.usage();
            vec![
                format!("{:<20} {}", "store", store.root().display()),
                format!(
                    "{:<20} {} ({} of blobs, {} unpacked)",
                    "images",
                    store.list().len(),
                    human(blobs),
                    human(layers)
                ),
                format!(
                    "{:<20} {}",
                    "mirrors",
                    if config.images.mirrors.is_empty() && config.images.rewrites.is_empty() {
                        "none".to_owned()
                    } else {
                        format!(
                            "{} mirrored registries, {} rewrites",
                            config.images.mirrors.len(),
                            config.images.rewrites.len()
                        )
                    }
                ),
                format!(
                    "{:<20} {}",
                    "naming",
                    match config.images.naming {
                        swerve_image::Naming::None => "tasks without an image use base checkouts",
                        swerve_image::Naming::Swebench =>
                            "tasks without an image use SWE-bench's image names",
                    }
                ),
            ]
        }
        Err(error) => vec![format!("{:<20} unavailable: {error:#}", "store")],
    }
}
