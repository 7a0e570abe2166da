//! Dataset files: rows written as JSON lines, or as Parquet when the output path ends in
//! `.parquet` (cargo feature `parquet`, on by default).
//!
//! Writers produce JSON lines either way; for Parquet they go to an anonymous temporary file,
//! whose rows then set the schema (Arrow's JSON inference: integers, floats, strings, lists
//! and structs, a field missing from a row is null) and are converted in batches, so memory
//! stays bounded by one batch. The output appears only once complete (written to a sibling
//! and renamed), in either format.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use swerve_core::atomic::write_atomically;

/// Whether `path` names a Parquet file.
pub fn is_parquet(path: &Path) -> bool {
    path.extension()
        .is_some_and(|extension| extension.eq_ignore_ascii_case("parquet"))
}

/// Writes the JSON lines `write` produces to `out`, as Parquet if its name ends in
/// `.parquet`, and returns what `write` returned. Nothing is left at `out` on failure.
pub fn write_rows<T>(out: &Path, write: impl FnOnce(&mut dyn Write) -> Result<T>) -> Result<T> {
    if is_parquet(out) {
        return as_parquet::write(out, write);
    }
    let mut result = None;
    let mut failure = None;
    let written = write_atomically(out, |file| match write(file) {
        Ok(value) => {
            result = Some(value);
            Ok(())
        }
        Err(error) => {
            failure = Some(error);
            Err(std::io::Error::other("the rows could not be written"))
        }
    });
    if let Some(error) = failure {
        return Err(error);
    }
    written.with_context(|| format!("cannot write {}", out.display()))?;
    Ok(result.expect("set when the write succeeded"))
}

/// Writes `rows` to `path` as JSON lines, or as Parquet when its name ends in `.parquet`
/// ([`write_rows`]), atomically: all of them or, on error, nothing.
pub fn write_lines<T: serde::Serialize>(path: &Path, rows: &[T]) -> Result<()> {
    write_rows(path, |out| {
        for row in rows {
            serde_json::to_writer(&mut *out, row)?;
            out.write_all(b"\n")?;
        }
        Ok(())
    })
}

#[cfg(feature = "parquet")]
mod as_parquet {
    use std::io::{BufReader, Seek, Write};
    use std::path::Path;
    use std::sync::Arc;

    use anyhow::{Context, Result};
    use arrow_json::ReaderBuilder;
    use arrow_json::reader::infer_json_schema_from_seekable;
    use parquet::arrow::ArrowWriter;
    use parquet::basic::Compression;
    use parquet::file::properties::WriterProperties;
    use swerve_core::atomic::write_atomically;

    /// Rows per Arrow batch (and at most per Parquet row group).
    const BATCH_ROWS: usize = 1024;

    pub(super) fn write<T>(
        out: &Path,
        write: impl FnOnce(&mut dyn Write) -> Result<T>,
    ) -> Result<T> {
        let dir = out.parent().filter(|dir| !dir.as_os_str().is_empty());
        let mut staged = tempfile::tempfile_in(dir.unwrap_or(Path::new(".")))
            .with_context(|| format!("cannot create a temporary file next to {}", out.display()))?;
        let value = {
            let mut buffered = std::io::BufWriter::new(&mut staged);
            let value = write(&mut buffered)?;
            buffered.flush()?;
            value
        };
        staged.rewind()?;
        let mut reader = BufReader::new(staged);
        let (schema, _) =
            infer_json_schema_from_seekable(&mut reader, None).with_context(|| {
                format!(
                    "cannot write {} as Parquet: the rows have no common schema",
                    out.display()
                )
            })?;
        let schema = Arc::new(schema);
        let batches = ReaderBuilder::new(schema.clone())
            .with_batch_size(BATCH_ROWS)
            .build(reader)?;
        let properties = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .build();
        let mut failure = None;
        let written = write_atomically(out, |file| {
            let converted = (|| -> Result<()> {
                let mut writer = ArrowWriter::try_new(file, schema, Some(properties))?;
                for batch in batches {
                    writer.write(&batch?)?;
                }
                writer.close()?;
                Ok(())
            })();
            converted.map_err(|error| {
                failure = Some(error);
                std::io::Error::other("the Parquet conversion failed")
            })
        });
        if let Some(error) = failure {
            return Err(error.context(format!("cannot write {} as Parquet", out.display())));
        }
        written.with_context(|| format!("cannot write {}", out.display()))?;
        Ok(value)
    }
}

#[cfg(not(feature = "parquet"))]
mod as_parquet {
    use std::io::Write;
    use std::path::Path;

    use anyhow::{Result, bail};

    pub(super) fn write<T>(
        out: &Path,
        _write: impl FnOnce(&mut dyn Write) -> Result<T>,
    ) -> Result<T> {
        bail!(
            "cannot write {}: this swerve was built without Parquet support; rebuild it with \
             `--features parquet`, or write JSON lines (.jsonl)",
            out.display()
        )
    }
}

#[cfg(all(test, feature = "parquet"))]
mod tests {
    use std::fs::File;

    use arrow_json::writer::LineDelimitedWriter;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use serde_json::{Value, json};

    use super::*;

    /// The rows of a Parquet file, as JSON values (Arrow's JSON writer leaves nulls out).
    fn read_back(path: &Path) -> Vec<Value> {
        let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap())
            .unwrap()
            .build()
            .unwrap();
        let mut out = Vec::new();
        let mut writer = LineDelimitedWriter::new(&mut out);
        for batch in reader {
            writer.write(&batch.unwrap()).unwrap();
        }
        writer.finish().unwrap();
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    #[test]
    fn rows_round_trip_through_parquet_with_lists_structs_and_missing_fields() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("samples.parquet");
        let rows = [
            json!({"id": "t/0", "step": 0, "input_ids": [1, 2, 3], "loss_mask": [0, 1, 1],
                   "messages": [{"role": "user", "content": "hi", "loss_weight": 0.0}]}),
            json!({"id": "t/1", "step": 1, "input_ids": [4], "loss_mask": [1], "reward": 0.5,
                   "messages": [{"role": "assistant", "content": "done", "loss_weight": 1.0}]}),
        ];
        let count = write_rows(&out, |file| {
            for row in &rows {
                serde_json::to_writer(&mut *file, row)?;
                file.write_all(b"\n")?;
            }
            Ok(rows.len())
        })
        .unwrap();
        assert_eq!(count, 2);
        assert_eq!(read_back(&out), rows);
        let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "only the output remains");
    }

    #[test]
    fn many_rows_span_several_batches() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("many.PARQUET");
        let rows: Vec<Value> = (0..2500)
            .map(|i| json!({"i": i, "ids": vec![i; (i % 7) as usize]}))
            .collect();
        write_rows(&out, |file| {
            for row in &rows {
                serde_json::to_writer(&mut *file, row)?;
                file.write_all(b"\n")?;
            }
            Ok(())
        })
        .unwrap();
        assert_eq!(read_back(&out), rows);
    }

    #[test]
    fn rows_of_clashing_types_are_refused_and_leave_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("bad.parquet");
        let error = write_rows(&out, |file| {
            file.write_all(b"{\"content\": \"text\"}\n{\"content\": {\"nested\": 1}}\n")?;
            Ok(())
        })
        .unwrap_err();
        let message = format!("{error:#}");
        assert!(message.contains("bad.parquet"), "{message}");
        assert!(!out.exists());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_failing_writer_leaves_nothing_in_either_format() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["rows.jsonl", "rows.parquet"] {
            let out = dir.path().join(name);
            let error = write_rows(&out, |file| -> Result<()> {
                file.write_all(b"{\"a\": 1}\n")?;
                anyhow::bail!("trajectory 3 is unreadable")
            })
            .unwrap_err();
            assert_eq!(error.to_string(), "trajectory 3 is unreadable");
            assert!(!out.exists());
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
