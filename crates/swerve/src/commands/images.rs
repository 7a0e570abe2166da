//! `swerve images pull | build | list | remove | prune`.

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use swerve_image::dockerfile::{BuildOptions, Builder};
use swerve_image::{IdMapping, Store};

use crate::cli::ImagesCommand;
use crate::units::human;
use swerve_rollout::config::Config;
use swerve_rollout::open;

pub fn run(config: &Config, command: ImagesCommand) -> Result<ExitCode> {
    let store = config.image_store()?;
    match command {
        ImagesCommand::Pull {
            images,
            tasks,
            from,
            name,
        } => pull(config, &store, images, tasks, from, name),
        ImagesCommand::Build {
            context,
            file,
            tags,
            build_args,
            target,
            network,
            no_cache,
        } => {
            let mut args = std::collections::BTreeMap::new();
            for pair in build_args {
                let Some((name, value)) = pair.split_once('=') else {
                    bail!("--build-arg {pair}: expected NAME=value");
                };
                args.insert(name.to_owned(), value.to_owned());
            }
            let options = BuildOptions {
                dockerfile: file.unwrap_or_else(|| context.join("Dockerfile")),
                context,
                tags,
                build_args: args,
                target,
                network,
                no_cache,
            };
            let started = Instant::now();
            let cache = config.cache()?;
            let mut stdout = std::io::stdout();
            let built = Builder {
                store: &store,
                cache: &cache,
                sandbox: config.sandbox.clone(),
                progress: &mut stdout,
            }
            .build(&options)?;
            println!(
                "built {} in {:.1} s ({} steps run, {} cached){}",
                built.manifest_digest,
                started.elapsed().as_secs_f64(),
                built.ran,
                built.cached,
                if options.tags.is_empty() {
                    "; not named: pass -t NAME to store it under a name"
                } else {
                    ""
                }
            );
            Ok(ExitCode::SUCCESS)
        }
        ImagesCommand::Root { image } => {
            let root = open::image_root(config, &image)?;
            for layer in &root.layers {
                println!("{}", layer.display());
            }
            Ok(ExitCode::SUCCESS)
        }
        ImagesCommand::List => {
            list(&store);
            Ok(ExitCode::SUCCESS)
        }
        ImagesCommand::Remove { images } => {
            let mut code = ExitCode::SUCCESS;
            for image in images {
                if store.remove(&image)? {
                    println!("removed {image}");
                } else {
                    eprintln!("{image}: not in the image store");
                    code = ExitCode::FAILURE;
                }
            }
            println!("`swerve images prune` frees the layers no other image uses");
            Ok(code)
        }
        ImagesCommand::Prune => {
            let freed = store.prune()?;
            println!("freed {}", human(freed));
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn pull(
    config: &Config,
    store: &Store,
    mut images: Vec<String>,
    tasks: Option<std::path::PathBuf>,
    from: Option<std::path::PathBuf>,
    name: Option<String>,
) -> Result<ExitCode> {
    let ids = IdMapping::for_sandbox(&config.sandbox)?;
    if let Some(path) = from {
        let [image] = images.as_slice() else {
            bail!("--from imports one image: give the one reference to store it as");
        };
        let started = Instant::now();
        let record = store.import(&path, name.as_deref(), image)?;
        store.root_for(&record, ids)?;
        println!(
            "{}  imported from {} in {:.1} s",
            record.reference,
            path.display(),
            started.elapsed().as_secs_f64()
        );
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(file) = tasks {
        for task in open::tasks(&file)? {
            if let Some(image) = open::task_image(config, &task)
                && !images.contains(&image)
            {
                images.push(image);
            }
        }
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting a runtime")?;
    let mut failed = 0;
    for image in &images {
        let started = Instant::now();
        let bars = LayerBars::new(image);
        let progress: swerve_image::registry::Progress = Arc::new({
            let bars = bars.clone();
            move |what: &str, done: u64, total: u64| bars.update(what, done, total)
        });
        let result = runtime.block_on(async {
            let reference = store.config().resolve(image)?;
            store.pull_fresh(&reference, Some(progress)).await
        });
        bars.clear();
        match result.and_then(|record| store.root_for(&record, ids).map(|_| record)) {
            Ok(record) => println!(
                "{}  {} compressed, {} layers, {} unpacked  ({:.1} s)",
                record.reference,
                human(record.size()),
                record.layers.len(),
                human(store.unpacked_size(&record)),
                started.elapsed().as_secs_f64()
            ),
            Err(error) => {
                failed += 1;
                eprintln!("{image}: {error} [{}]", error.class());
            }
        }
    }
    if failed > 0 {
        eprintln!("{failed} of {} images failed", images.len());
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// One progress bar per layer being downloaded (bytes, rate, time left) under a line naming
/// the image, on standard error; a finished layer's bar goes away. Nothing is drawn when
/// standard error is not a terminal.
#[derive(Clone)]
struct LayerBars {
    bars: MultiProgress,
    layers: Arc<Mutex<HashMap<String, ProgressBar>>>,
}

impl LayerBars {
    fn new(image: &str) -> Self {
        let bars = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
        let header = bars.add(ProgressBar::new_spinner());
        header.set_message(format!("pulling {image}"));
        header.tick();
        Self {
            bars,
            layers: Arc::default(),
        }
    }

    /// `done` of `total` bytes of the blob `what` are on disk.
    fn update(&self, what: &str, done: u64, total: u64) {
        let Ok(mut layers) = self.layers.lock() else {
            return;
        };
        let bar = layers.entry(what.to_owned()).or_insert_with(|| {
            let bar = self.bars.add(ProgressBar::new(total));
            bar.set_style(
                ProgressStyle::with_template(
                    "  {prefix:<12} {bar:30} {bytes:>10} / {total_bytes:<10} {bytes_per_sec:>12} {eta:>4}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar.set_prefix(what.to_owned());
            bar
        });
        bar.set_position(done);
        if done >= total {
            bar.finish_and_clear();
        }
    }

    /// Removes the bars (the summary line replaces them).
    fn clear(&self) {
        let _ = self.bars.clear();
    }
}

fn list(store: &Store) {
    let records = store.list();
    println!(
        "{:<60} {:>10} {:>7} {:>10}  manifest",
        "image", "size", "layers", "unpacked"
    );
    for record in &records {
        println!(
            "{:<60} {:>10} {:>7} {:>10}  {}",
            record.reference,
            human(record.size()),
            record.layers.len(),
            human(store.unpacked_size(record)),
            &record.manifest_digest[..record.manifest_digest.len().min(19)]
        );
    }
    let (blobs, layers) = store.usage();
    println!(
        "{} images; on disk: {} of blobs, {} of unpacked layers (shared layers counted once); store {}",
        records.len(),
        human(blobs),
        human(layers),
        store.root().display()
    );
}
