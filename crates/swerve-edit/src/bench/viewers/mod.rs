//! Viewer baselines (SWE-Edit Appendix E.1): how well classical retrieval and the LLM viewer
//! pick the lines an instruction is about. For each PR-Edit instance the ground truth is the
//! lines of the original file its target changes ([`truth`]); the query is the instruction;
//! the methods are Okapi BM25 over fixed chunks ([`bm25`]), an embedding retriever over the
//! same chunks ([`embedding`], both through [`chunks`]) and the LLM viewer
//! ([`crate::subagent::view`]); each is scored by recall, precision, F1 and context
//! reduction ([`scores`]) and summarized per method ([`compare`](mod@compare)).

pub mod bm25;
pub mod chunks;
pub mod compare;
pub mod embedding;
pub mod scores;
pub mod truth;

pub use bm25::Bm25;
pub use compare::{
    CompareOptions, LONG_FILE_LINES, Method, MethodSummary, Viewer, ViewerRecord, ViewersSummary,
    compare,
};
pub use scores::{Scores, Stats};
pub use truth::changed_lines;
