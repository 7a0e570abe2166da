//! PR-Edit, the editor benchmark of SWE-Edit: instances (original file, target file,
//! instruction, metadata) mined from a git history ([`mine`](mod@mine)) with instructions from commit
//! messages or written by a model ([`writer`]), and runs of an editor model over them
//! ([`run`](mod@run)) scored by format success, exact and normalized match ([`normalize`]) and an
//! optional judge ([`judge`]); [`responses`] scores a trainer's responses with SWE-Edit's reward. [`viewers`] compares the LLM viewer with retrieval
//! baselines (BM25, embeddings) on the same instances.

pub mod instance;
pub mod judge;
pub mod mine;
pub mod normalize;
pub mod responses;
pub mod run;
pub mod split;
pub mod viewers;
pub mod writer;

pub use instance::{BenchError, EditInstance, read_instances, write_jsonl};
pub use mine::{MineOptions, MineUnit, mine};
pub use run::{InstanceResult, Rate, RunOptions, Summary, run, run_and_summarize};
pub use split::{Decontaminator, parse_splits, split_by_pr};
