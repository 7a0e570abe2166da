//! Where log events go: the console (stderr, filtered by `-v` or `RUST_LOG`), and for events
//! inside a rollout, that rollout's own log file instead. The libraries' notices (target
//! [`NOTICE`], such as the embedded model they loaded) are printed as plain lines.
//!
//! A rollout runs inside a span named [`ROLLOUT_SPAN`] whose `log` field is the path of its
//! log file. Every event in that span (model retries, format errors, each step, the end) is
//! appended to the file with the seconds since the rollout started, and kept off the
//! console, where hundreds of concurrent rollouts would drown the progress display.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::sync::Mutex;
use std::time::Instant;

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::{Context, Filter, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;

use swerve_rollout::models::NOTICE;
use swerve_rollout::rollout::ROLLOUT_SPAN;

/// Installs the process's logging: warnings on the console always, more with `-v`/`-vv` or
/// `RUST_LOG`; rollout events (info, or debug with `-vv`) in their log files.
pub fn init(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let env = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let console = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_filter(OutsideRollouts { env });
    let file_level = if verbose >= 2 {
        LevelFilter::DEBUG
    } else {
        LevelFilter::INFO
    };
    tracing_subscriber::registry()
        .with(
            Notices.with_filter(tracing_subscriber::filter::filter_fn(|metadata| {
                metadata.target() == NOTICE
            })),
        )
        .with(console)
        .with(RolloutLogs.with_filter(file_level))
        .init();
}

/// The console's filter: `env`, for events outside every rollout span.
struct OutsideRollouts {
    env: EnvFilter,
}

impl<S> Filter<S> for OutsideRollouts
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn enabled(&self, metadata: &Metadata<'_>, cx: &Context<'_, S>) -> bool {
        if metadata.target() == NOTICE {
            return false;
        }
        if metadata.is_span() && metadata.name() == ROLLOUT_SPAN {
            // Enabled so the console's context sees it, and can leave out what it holds.
            return true;
        }
        if metadata.is_event()
            && cx.lookup_current().is_some_and(|current| {
                current
                    .scope()
                    .any(|span| span.metadata().name() == ROLLOUT_SPAN)
            })
        {
            return false;
        }
        Filter::<S>::enabled(&self.env, metadata, cx)
    }

    fn callsite_enabled(
        &self,
        _metadata: &'static Metadata<'static>,
    ) -> tracing::subscriber::Interest {
        // Whether an event is shown depends on the span it happens in.
        tracing::subscriber::Interest::sometimes()
    }

    /// The environment's level, and at least the rollout span's. Without a hint the
    /// process's level would be `TRACE`, and every `log` record of a library (the
    /// tokenizer writes one per normalized piece of text) would go through the filters.
    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(
            Filter::<S>::max_level_hint(&self.env)
                .unwrap_or(LevelFilter::TRACE)
                .max(LevelFilter::INFO),
        )
    }

    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        Filter::<S>::on_new_span(&self.env, attrs, id, ctx);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        Filter::<S>::on_record(&self.env, id, values, ctx);
    }

    fn on_enter(&self, id: &Id, ctx: Context<'_, S>) {
        Filter::<S>::on_enter(&self.env, id, ctx);
    }

    fn on_exit(&self, id: &Id, ctx: Context<'_, S>) {
        Filter::<S>::on_exit(&self.env, id, ctx);
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        Filter::<S>::on_close(&self.env, id, ctx);
    }
}

/// Prints the libraries' notices on stderr, one plain line each.
struct Notices;

impl<S: Subscriber> Layer<S> for Notices {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        eprintln!("{}", fields.message);
    }
}

/// Writes events inside rollout spans to the rollouts' log files.
struct RolloutLogs;

/// The open log of one rollout, kept in its span's extensions.
struct RolloutLog {
    file: Mutex<File>,
    started: Instant,
}

impl<S> Layer<S> for RolloutLogs
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if attrs.metadata().name() != ROLLOUT_SPAN {
            return;
        }
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        let Some(path) = fields.log else { return };
        let (Some(span), Ok(file)) = (
            ctx.span(id),
            OpenOptions::new().create(true).append(true).open(&path),
        ) else {
            return;
        };
        span.extensions_mut().insert(RolloutLog {
            file: Mutex::new(file),
            started: Instant::now(),
        });
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let Some(scope) = ctx.event_scope(event) else {
            return;
        };
        for span in scope {
            let extensions = span.extensions();
            let Some(log) = extensions.get::<RolloutLog>() else {
                continue;
            };
            let mut fields = Fields::default();
            event.record(&mut fields);
            let line = format!(
                "[{:9.3}s] {:<5} {}{}\n",
                log.started.elapsed().as_secs_f64(),
                event.metadata().level(),
                fields.message,
                fields.rest
            );
            if let Ok(mut file) = log.file.lock() {
                // A log line that cannot be written is not worth failing the rollout for.
                let _ = file.write_all(line.as_bytes());
            }
            return;
        }
    }
}

/// An event's or span's fields: the message, the `log` path, and the rest as `key=value`.
#[derive(Default)]
struct Fields {
    message: String,
    log: Option<String>,
    rest: String,
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "message" => self.message = value.to_owned(),
            "log" => self.log = Some(value.to_owned()),
            name => self.rest.push_str(&format!(" {name}={value:?}")),
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        match field.name() {
            "message" => self.message = format!("{value:?}"),
            "log" => self.log = Some(format!("{value:?}")),
            name => self.rest.push_str(&format!(" {name}={value:?}")),
        }
    }
}
