//! Writing files so that readers see the old content or the new, never half of it.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// Runs `write` into a temporary sibling of `path`, then renames it over `path`.
pub fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> io::Result<()> {
    let (temp_path, file) = create_temp_sibling(path)?;
    let result = (|| {
        let mut out = BufWriter::new(file);
        write(&mut out)?;
        let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
        if let Ok(metadata) = fs::metadata(path) {
            file.set_permissions(metadata.permissions())?;
        }
        file.sync_all()?;
        fs::rename(&temp_path, path)
    })();
    if result.is_err() {
        // The write already failed; a leftover temporary file is all this could add.
        let _ = fs::remove_file(&temp_path);
    }
    result
}

/// Writes `value` as pretty-printed JSON and a final newline to `path`, atomically.
pub fn write_json_atomically(path: &Path, value: &impl serde::Serialize) -> io::Result<()> {
    let mut json = serde_json::to_vec_pretty(value)?;
    json.push(b'\n');
    write_atomically(path, |out| out.write_all(&json))
}

/// Creates a new, uniquely named hidden file next to `path`.
fn create_temp_sibling(path: &Path) -> io::Result<(PathBuf, File)> {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, "the path does not name a file")
    })?;
    let directory = path.parent().unwrap_or(Path::new(""));
    for _ in 0..1000 {
        let count = COUNTER.fetch_add(1, Ordering::Relaxed);
        let temp_name = format!(
            ".{}.{}.{count}.tmp",
            name.to_string_lossy(),
            std::process::id()
        );
        let temp_path = directory.join(temp_name);
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp_path)
        {
            Ok(file) => return Ok((temp_path, file)),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
            Err(err) => return Err(err),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "no free temporary file name next to the target",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_pretty_with_a_final_newline_and_a_failed_write_keeps_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("summary.json");
        write_json_atomically(&path, &serde_json::json!({"a": [1, 2]})).unwrap();
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            "{\n  \"a\": [\n    1,\n    2\n  ]\n}\n"
        );
        let failed = write_atomically(&path, |out| {
            out.write_all(b"half")?;
            Err(io::Error::other("interrupted"))
        });
        assert!(failed.is_err());
        assert!(fs::read_to_string(&path).unwrap().starts_with("{\n"));
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary left"
        );
    }
}
