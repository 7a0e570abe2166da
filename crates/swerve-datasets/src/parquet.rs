//! Parquet files as task rows: each row becomes the JSON object the `datasets` library's
//! JSON-lines export writes for it (columns in schema order, nulls kept as `null`, lists
//! as arrays, structs as objects), and then a [`Task`] by the task-file rules.
//!
//! The rows are read as Arrow record batches and written as JSON by Arrow's own writer, so
//! every Arrow type a hub dataset uses has one defined JSON form; strings come through byte
//! for byte.

use std::fs::File;
use std::path::Path;

use arrow_json::writer::{LineDelimited, WriterBuilder};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::Value;
use swerve_core::Task;
use swerve_core::task::task_from_row;

use crate::DatasetError;

/// The tasks in the Parquet file at `path`, one per row, in order.
pub fn load_tasks(path: &Path) -> Result<Vec<Task>, DatasetError> {
    let source = path.display().to_string();
    read_rows(path)?
        .into_iter()
        .enumerate()
        .map(|(index, row)| task_from_row(row, &source, index + 1).map_err(DatasetError::from))
        .collect()
}

/// Every row of the Parquet file at `path` as a JSON object, in order.
pub fn read_rows(path: &Path) -> Result<Vec<Value>, DatasetError> {
    let bad = |message: String| DatasetError::Parquet {
        file: path.display().to_string(),
        message,
    };
    let file = File::open(path).map_err(|error| bad(error.to_string()))?;
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)
        .and_then(|builder| builder.build())
        .map_err(|error| bad(error.to_string()))?;
    let mut json = Vec::new();
    {
        let mut writer = WriterBuilder::new()
            .with_explicit_nulls(true)
            .build::<_, LineDelimited>(&mut json);
        for batch in reader {
            let batch = batch.map_err(|error| bad(error.to_string()))?;
            writer
                .write(&batch)
                .map_err(|error| bad(format!("a column has no JSON form: {error}")))?;
        }
        writer.finish().map_err(|error| bad(error.to_string()))?;
    }
    json.split(|&byte| byte == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| {
            serde_json::from_slice(line)
                .map_err(|error| bad(format!("a row's JSON form does not parse: {error}")))
        })
        .collect()
}
