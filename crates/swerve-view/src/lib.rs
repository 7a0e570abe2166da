//! `swerve view`: a read-only web viewer of run directories (`swerve run --out`) and
//! trajectory files in any format `swerve traj convert` reads.
//!
//! - [`catalog`]: what was given, and the keys the pages name trajectories by;
//! - [`run`]: the index and a run's page data (rows, totals, pass@k, TTS@k);
//! - [`trajectory`]: a trajectory's page data (steps, context sizes, outcome, test log);
//! - [`server`]: the HTTP server and JSON API, loopback by default, a token elsewhere;
//! - [`export`]: the same pages as static files;
//! - [`assets`]: the page, script and style sheet, embedded in the binary.
//!
//! The page is hand-written HTML, CSS and JavaScript with no outside resource; it sets only
//! text (`textContent`), draws its charts as SVG, and runs under a Content-Security-Policy
//! that forbids inline script. See `docs/view.md`.

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod assets;
pub mod catalog;
pub mod export;
pub mod run;
pub mod server;
pub mod trajectory;

pub use catalog::Catalog;
pub use server::{Access, serve};
