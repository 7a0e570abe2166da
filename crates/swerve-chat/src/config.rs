//! A model directory's chat templates and special tokens, found where transformers finds them.
//!
//! Templates: `chat_template.jinja` (the default) and `additional_chat_templates/<name>.jinja`
//! when they exist, which take priority as in transformers 5; otherwise `chat_template` in
//! `tokenizer_config.json`, either a string or a list of `{"name", "template"}` objects.
//! Special tokens: `bos_token`, `eos_token`, `unk_token`, `sep_token`, `pad_token`,
//! `cls_token` and `mask_token` from `tokenizer_config.json`, each a string or an `AddedToken`
//! object (`{"content": …}`); transformers hands them to every template as variables.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::{Error, Result};

/// The special-token attributes transformers passes to templates, in its order.
const SPECIAL_TOKENS: [&str; 7] = [
    "bos_token",
    "eos_token",
    "unk_token",
    "sep_token",
    "pad_token",
    "cls_token",
    "mask_token",
];

/// One template's source and where it came from.
#[derive(Debug, Clone)]
pub(crate) struct TemplateSource {
    /// Its name (`default` for a single template).
    pub name: String,
    /// Where it came from, for messages: a file, and the field when it is inside JSON.
    pub origin: String,
    /// The Jinja source.
    pub source: String,
}

/// What a model directory says about chat templates.
#[derive(Debug, Clone)]
pub(crate) struct ChatConfig {
    /// The templates; `named` is false for a single template, which is used whatever is asked.
    pub templates: Vec<TemplateSource>,
    /// Whether the templates are a set of named ones (selected by name or by `tools`).
    pub named: bool,
    /// Special tokens as `(attribute, text)`.
    pub special_tokens: Vec<(String, String)>,
}

impl ChatConfig {
    /// Reads the templates and special tokens of the model directory `dir`.
    pub fn read_dir(dir: &Path) -> Result<Self> {
        let config_path = dir.join("tokenizer_config.json");
        let config = if config_path.exists() {
            Some(read_json(&config_path)?)
        } else {
            None
        };
        let special_tokens = match &config {
            Some(config) => special_tokens(&config_path, config)?,
            None => Vec::new(),
        };
        let (templates, named) = match jinja_templates(dir)? {
            Some(found) => found,
            None => match &config {
                Some(config) => config_templates(&config_path, config)?,
                None => (Vec::new(), false),
            },
        };
        if templates.is_empty() {
            return Err(Error::NoChatTemplate {
                dir: dir.to_owned(),
            });
        }
        Ok(Self {
            templates,
            named,
            special_tokens,
        })
    }
}

fn read_json(path: &Path) -> Result<Value> {
    let text = read_text(path)?;
    serde_json::from_str(&text).map_err(|source| Error::Json {
        path: path.to_owned(),
        source,
    })
}

fn read_text(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|source| Error::Read {
        path: path.to_owned(),
        source,
    })
}

/// `chat_template.jinja` and `additional_chat_templates/*.jinja`, if any exist.
fn jinja_templates(dir: &Path) -> Result<Option<(Vec<TemplateSource>, bool)>> {
    let mut templates = Vec::new();
    let default = dir.join("chat_template.jinja");
    if default.exists() {
        templates.push(jinja_file("default", &default)?);
    }
    let extra_dir = dir.join("additional_chat_templates");
    if extra_dir.is_dir() {
        let entries = std::fs::read_dir(&extra_dir).map_err(|source| Error::Read {
            path: extra_dir.clone(),
            source,
        })?;
        let mut extra: Vec<PathBuf> = Vec::new();
        for entry in entries {
            let path = entry
                .map_err(|source| Error::Read {
                    path: extra_dir.clone(),
                    source,
                })?
                .path();
            if path.extension().is_some_and(|ext| ext == "jinja") {
                extra.push(path);
            }
        }
        extra.sort();
        for path in extra {
            let name = path
                .file_stem()
                .map(|stem| stem.to_string_lossy().into_owned())
                .unwrap_or_default();
            templates.retain(|t: &TemplateSource| t.name != name);
            templates.push(jinja_file(&name, &path)?);
        }
    }
    if templates.is_empty() {
        return Ok(None);
    }
    let named = !(templates.len() == 1 && templates[0].name == "default");
    Ok(Some((templates, named)))
}

fn jinja_file(name: &str, path: &Path) -> Result<TemplateSource> {
    Ok(TemplateSource {
        name: name.to_owned(),
        origin: path.display().to_string(),
        source: read_text(path)?,
    })
}

/// `chat_template` of `tokenizer_config.json`: absent, a string, or named templates.
fn config_templates(path: &Path, config: &Value) -> Result<(Vec<TemplateSource>, bool)> {
    let field_error = |field: String, problem: &str| Error::Field {
        path: path.to_owned(),
        field,
        problem: problem.to_owned(),
    };
    match config.get("chat_template") {
        None | Some(Value::Null) => Ok((Vec::new(), false)),
        Some(Value::String(source)) => Ok((
            vec![TemplateSource {
                name: "default".to_owned(),
                origin: format!("{} (chat_template)", path.display()),
                source: source.clone(),
            }],
            false,
        )),
        Some(Value::Array(entries)) => {
            let mut templates: Vec<TemplateSource> = Vec::new();
            for (index, entry) in entries.iter().enumerate() {
                let field = |key: &str| format!("chat_template[{index}].{key}");
                let name = entry.get("name").and_then(Value::as_str).ok_or_else(|| {
                    field_error(field("name"), "must be a string (the template's name)")
                })?;
                let source = entry
                    .get("template")
                    .and_then(Value::as_str)
                    .ok_or_else(|| field_error(field("template"), "must be a string"))?;
                // Later entries win, as when transformers builds its dict.
                templates.retain(|t| t.name != name);
                templates.push(TemplateSource {
                    name: name.to_owned(),
                    origin: format!("{} (chat_template `{name}`)", path.display()),
                    source: source.to_owned(),
                });
            }
            Ok((templates, true))
        }
        Some(_) => Err(field_error(
            "chat_template".to_owned(),
            "must be a string or a list of {\"name\", \"template\"} objects",
        )),
    }
}

/// The special tokens set in the configuration, as strings.
fn special_tokens(path: &Path, config: &Value) -> Result<Vec<(String, String)>> {
    let mut tokens = Vec::new();
    for name in SPECIAL_TOKENS {
        let text = match config.get(name) {
            None | Some(Value::Null) => continue,
            Some(Value::String(text)) => text.clone(),
            Some(Value::Object(token)) => match token.get("content") {
                Some(Value::String(text)) => text.clone(),
                _ => {
                    return Err(Error::Field {
                        path: path.to_owned(),
                        field: format!("{name}.content"),
                        problem: "must be a string (an AddedToken's text)".to_owned(),
                    });
                }
            },
            Some(_) => {
                return Err(Error::Field {
                    path: path.to_owned(),
                    field: name.to_owned(),
                    problem: "must be a string, an AddedToken object or null".to_owned(),
                });
            }
        };
        tokens.push((name.to_owned(), text));
    }
    Ok(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir_with(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    #[test]
    fn reads_string_and_named_templates_and_added_token_objects() {
        let dir = dir_with(&[(
            "tokenizer_config.json",
            r#"{"bos_token": {"__type": "AddedToken", "content": "<s>", "lstrip": false},
                "eos_token": "</s>", "unk_token": null,
                "chat_template": [{"name": "default", "template": "d"}, {"name": "tool_use", "template": "t"}]}"#,
        )]);
        let config = ChatConfig::read_dir(dir.path()).unwrap();
        assert!(config.named);
        let names: Vec<_> = config.templates.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["default", "tool_use"]);
        assert_eq!(
            config.special_tokens,
            [
                ("bos_token".to_owned(), "<s>".to_owned()),
                ("eos_token".to_owned(), "</s>".to_owned())
            ]
        );
        assert!(
            config.templates[1]
                .origin
                .ends_with("(chat_template `tool_use`)")
        );
    }

    #[test]
    fn jinja_files_take_priority_over_the_config() {
        let dir = dir_with(&[
            ("tokenizer_config.json", r#"{"chat_template": "old"}"#),
            ("chat_template.jinja", "new"),
        ]);
        let config = ChatConfig::read_dir(dir.path()).unwrap();
        assert!(!config.named);
        assert_eq!(config.templates[0].source, "new");

        let dir = dir_with(&[
            ("chat_template.jinja", "new"),
            ("additional_chat_templates/rag.jinja", "rag"),
            ("additional_chat_templates/notes.txt", "ignored"),
        ]);
        let config = ChatConfig::read_dir(dir.path()).unwrap();
        assert!(config.named);
        let names: Vec<_> = config.templates.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["default", "rag"]);
    }

    #[test]
    fn errors_name_the_file_and_field() {
        let cases = [
            (r#"{"chat_template": 3}"#, "field `chat_template` must be"),
            (
                r#"{"chat_template": [{"name": "a"}]}"#,
                "field `chat_template[0].template` must be a string",
            ),
            (
                r#"{"chat_template": "x", "eos_token": {"id": 3}}"#,
                "field `eos_token.content`",
            ),
            (
                r#"{"chat_template": "x", "pad_token": 7}"#,
                "field `pad_token`",
            ),
            ("{not json", "is not valid JSON"),
            (r#"{"eos_token": "</s>"}"#, "no chat template"),
        ];
        for (json, expected) in cases {
            let dir = dir_with(&[("tokenizer_config.json", json)]);
            let err = ChatConfig::read_dir(dir.path()).unwrap_err().to_string();
            assert!(err.contains(expected), "{json}: {err}");
            assert!(err.contains(&dir.path().display().to_string()), "{err}");
        }
        let empty = tempfile::tempdir().unwrap();
        let err = ChatConfig::read_dir(empty.path()).unwrap_err().to_string();
        assert!(err.contains("chat_template.jinja"), "{err}");
    }
}
