//! Rows that name a container image instead of a repository and commit.
//!
//! R2E-Gym's rows have `docker_image`, `repo_name` and `commit_hash` (the fix's commit)
//! but no `instance_id`, `repo` or `base_commit`; SWE-smith's have `image_name`. Such rows
//! load: the missing required fields are derived (and not written back unless changed),
//! and the base commit is left empty: the repository's `HEAD` in the image.

use serde_json::{Map, Value};

use super::field::Field;

/// The fields naming a task's image, in order of preference.
pub(crate) const IMAGE_FIELDS: [&str; 3] = ["image", "docker_image", "image_name"];

/// Values for the required fields an image row lacks: `instance_id` (`repo_name__commit`
/// or the image's name), `repo` (`repo_name`, else the image's repository) and
/// `base_commit` (empty). Nothing for rows without an image.
pub(crate) fn derive_missing(object: &Map<String, Value>) -> Vec<(Field, String)> {
    let Some(image) = IMAGE_FIELDS
        .into_iter()
        .find_map(|key| object.get(key)?.as_str())
        .filter(|name| !name.trim().is_empty())
    else {
        return Vec::new();
    };
    let text = |key: &str| object.get(key).and_then(Value::as_str).map(str::to_owned);
    let image_path = image.split('@').next().unwrap_or(image);
    let (image_repo, image_tag) = match image_path.rsplit_once(':') {
        Some((repo, tag)) if !tag.contains('/') => (repo, Some(tag)),
        _ => (image_path, None),
    };
    let image_short = image_repo.rsplit('/').next().unwrap_or(image_repo);
    let repo_name = text("repo_name");
    let mut derived = Vec::new();
    if !object.contains_key(Field::InstanceId.name()) {
        let commit = text("commit_hash");
        let id = match (&repo_name, commit) {
            (Some(repo), Some(commit)) => {
                format!(
                    "{}__{}",
                    repo.replace('/', "__"),
                    &commit[..commit.len().min(12)]
                )
            }
            _ => match image_tag {
                Some(tag) if tag != "latest" => format!("{image_short}__{tag}"),
                _ => image_short.to_owned(),
            },
        };
        derived.push((Field::InstanceId, id));
    }
    if !object.contains_key(Field::Repo.name()) {
        derived.push((
            Field::Repo,
            repo_name.unwrap_or_else(|| image_repo.to_owned()),
        ));
    }
    if !object.contains_key(Field::BaseCommit.name()) {
        derived.push((Field::BaseCommit, String::new()));
    }
    derived
}

#[cfg(test)]
mod tests {
    use crate::task::Task;

    #[test]
    fn an_r2e_gym_row_loads_and_round_trips() {
        let row = serde_json::json!({
            "repo_name": "orange3",
            "docker_image": "namanjain12/orange3_final:4f9f2ab3",
            "commit_hash": "4f9f2ab3e1a9c2d0b7a81e5f3b4c0d9e8f7a6b5c",
            "problem_statement": "Fix it.",
            "expected_output_json": "{\"test_a\": \"PASSED\"}"
        });
        let task: Task = serde_json::from_value(row.clone()).unwrap();
        assert_eq!(task.instance_id, "orange3__4f9f2ab3e1a9");
        assert_eq!(task.repo, "orange3");
        assert_eq!(task.base_commit, "");
        assert_eq!(task.image(), Some("namanjain12/orange3_final:4f9f2ab3"));
        assert_eq!(serde_json::to_value(&task).unwrap(), row);
    }

    #[test]
    fn rows_without_an_image_still_need_their_fields() {
        let row =
            serde_json::json!({"repo": "a/b", "problem_statement": "x", "base_commit": "abc1234"});
        assert!(serde_json::from_value::<Task>(row).is_err());
    }
}
