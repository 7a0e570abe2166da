//! A GGUF file's header: its metadata, read with candle's GGUF reader, and typed look-ups of
//! the keys the backend needs, each failing with the file and key named.

use std::fs::File;
use std::path::{Path, PathBuf};

use candle_core::quantized::gguf_file::{Content, Value};

use crate::error::{Error, Result};

/// An open GGUF file with its header read.
pub(crate) struct Gguf {
    pub path: PathBuf,
    pub content: Content,
    pub file: File,
}

impl Gguf {
    /// Opens `path` and reads its header (metadata and tensor table, not the tensors).
    pub fn open(path: &Path) -> Result<Self> {
        let mut file = File::open(path).map_err(|source| Error::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let content = Content::read(&mut file).map_err(|error| Error::Gguf {
            path: path.to_path_buf(),
            message: error.to_string(),
        })?;
        Ok(Self {
            path: path.to_path_buf(),
            content,
            file,
        })
    }

    fn get(&self, key: &str) -> Option<&Value> {
        self.content.metadata.get(key)
    }

    /// A metadata error for `key`.
    pub fn error(&self, key: &str, problem: impl Into<String>) -> Error {
        Error::Metadata {
            path: self.path.clone(),
            key: key.to_owned(),
            problem: problem.into(),
        }
    }

    /// A string value, if the key is present.
    pub fn opt_string(&self, key: &str) -> Result<Option<&str>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(other) => {
                Err(self.error(key, format!("is a {:?}, not a string", other.value_type())))
            }
        }
    }

    /// A string value that must be present.
    pub fn string(&self, key: &str) -> Result<&str> {
        self.opt_string(key)?
            .ok_or_else(|| self.error(key, "is missing"))
    }

    /// An unsigned integer value of any width, if the key is present.
    pub fn opt_u64(&self, key: &str) -> Result<Option<u64>> {
        let Some(value) = self.get(key) else {
            return Ok(None);
        };
        let number = match *value {
            Value::U8(n) => Some(u64::from(n)),
            Value::U16(n) => Some(u64::from(n)),
            Value::U32(n) => Some(u64::from(n)),
            Value::U64(n) => Some(n),
            Value::I8(n) => u64::try_from(n).ok(),
            Value::I16(n) => u64::try_from(n).ok(),
            Value::I32(n) => u64::try_from(n).ok(),
            Value::I64(n) => u64::try_from(n).ok(),
            _ => None,
        };
        number
            .map(Some)
            .ok_or_else(|| self.error(key, format!("is {value:?}, not a non-negative integer")))
    }

    /// A boolean value, if the key is present.
    pub fn opt_bool(&self, key: &str) -> Result<Option<bool>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(yes)) => Ok(Some(*yes)),
            Some(other) => Err(self.error(key, format!("is {other:?}, not a boolean"))),
        }
    }

    /// An array of strings that must be present.
    pub fn strings(&self, key: &str) -> Result<Vec<&str>> {
        let Some(Value::Array(items)) = self.get(key) else {
            return Err(self.error(key, "is missing or not an array"));
        };
        items
            .iter()
            .enumerate()
            .map(|(index, item)| match item {
                Value::String(text) => Ok(text.as_str()),
                other => Err(self.error(
                    key,
                    format!(
                        "has {:?} at index {index}, not a string",
                        other.value_type()
                    ),
                )),
            })
            .collect()
    }

    /// An array of integers, if the key is present.
    pub fn opt_ints(&self, key: &str) -> Result<Option<Vec<i64>>> {
        let Some(value) = self.get(key) else {
            return Ok(None);
        };
        let Value::Array(items) = value else {
            return Err(self.error(key, "is not an array"));
        };
        items
            .iter()
            .enumerate()
            .map(|(index, item)| match *item {
                Value::I32(n) => Ok(i64::from(n)),
                Value::U32(n) => Ok(i64::from(n)),
                Value::I8(n) => Ok(i64::from(n)),
                Value::U8(n) => Ok(i64::from(n)),
                Value::I16(n) => Ok(i64::from(n)),
                Value::U16(n) => Ok(i64::from(n)),
                Value::I64(n) => Ok(n),
                ref other => Err(self.error(
                    key,
                    format!(
                        "has {:?} at index {index}, not an integer",
                        other.value_type()
                    ),
                )),
            })
            .collect::<Result<Vec<_>>>()
            .map(Some)
    }
}
