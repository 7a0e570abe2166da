//! `swerve images build`: Dockerfiles built without a daemon, on swerve's image store and
//! sandbox. [`parse`] reads a Dockerfile as BuildKit does (directives, continuations,
//! heredocs), [`words`] makes its words (quotes, escapes, variable substitution), [`tree`]
//! reads the context and stages' roots (`.dockerignore`, globs, whiteouts), [`layer`] writes
//! layers, [`image`] the image, and [`build`] runs the instructions with a layer cache.
//! See `docs/images.md`, "Building images from Dockerfiles".

pub mod build;
pub mod image;
pub mod layer;
pub mod parse;
pub mod tree;
pub mod words;

pub use build::{BuildError, BuildOptions, Builder, Built};
pub use parse::{Dockerfile, DockerfileError};
