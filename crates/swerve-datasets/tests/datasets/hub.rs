//! Hub datasets through a loopback hub and the Hugging Face cache.

use std::fs;
use std::path::Path;

use swerve_datasets::{HubSettings, TaskSource, load_file};
use swerve_testing::HubServer;

use crate::{fixture, hub_root};

const VERIFIED: &str = "princeton-nlp/SWE-bench_Verified";
const VERIFIED_FILE: &str = "data/test-00000-of-00001.parquet";

fn settings(endpoint: &str, token: Option<&str>, cache: &Path) -> HubSettings {
    HubSettings {
        endpoint: endpoint.to_owned(),
        token: token.map(str::to_owned),
        cache: cache.to_path_buf(),
        offline: false,
    }
}

fn source(name: &str, split: &str) -> TaskSource {
    TaskSource::parse(&format!("hf://{name}"), Some(split), None).unwrap()
}

fn fixture_tasks() -> Vec<swerve_core::Task> {
    load_file(&hub_root().join(VERIFIED).join(VERIFIED_FILE)).unwrap()
}

/// An endpoint nothing listens on.
fn dead_endpoint() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{addr}")
}

#[test]
fn a_download_fills_the_cache_as_huggingface_hub_does_and_later_loads_stay_offline() {
    let cache = tempfile::tempdir().unwrap();
    let hub = HubServer::serve(&hub_root(), None);
    let tasks = source(VERIFIED, "test")
        .load(&settings(&hub.endpoint(), None, cache.path()))
        .unwrap();
    assert_eq!(tasks, fixture_tasks());

    // huggingface_hub's layout: refs/main, snapshots/COMMIT/PATH -> ../../../blobs/ETAG.
    let repo = cache
        .path()
        .join("datasets--princeton-nlp--SWE-bench_Verified");
    let commit = HubServer::commit_of(VERIFIED);
    assert_eq!(fs::read_to_string(repo.join("refs/main")).unwrap(), commit);
    let pointer = repo.join("snapshots").join(&commit).join(VERIFIED_FILE);
    let target = fs::read_link(&pointer).unwrap();
    assert!(target.starts_with("../../../blobs"), "{}", target.display());
    let bytes = fs::read(&pointer).unwrap();
    assert_eq!(
        bytes,
        fs::read(hub_root().join(VERIFIED).join(VERIFIED_FILE)).unwrap()
    );
    assert_eq!(
        fs::read_dir(repo.join("blobs")).unwrap().count(),
        1,
        "no partial file left"
    );

    // The hub is gone: the cache answers, offline or not.
    drop(hub);
    let again = source(VERIFIED, "test")
        .load(&settings(&dead_endpoint(), None, cache.path()))
        .unwrap();
    assert_eq!(again, tasks);
    let offline = HubSettings {
        offline: true,
        ..settings(&dead_endpoint(), None, cache.path())
    };
    assert_eq!(source(VERIFIED, "test").load(&offline).unwrap(), tasks);
}

#[test]
fn a_cache_filled_by_huggingface_hub_is_read_without_the_network() {
    // The layout as huggingface_hub's `hf_hub_download` writes it (file_download.py):
    // blobs named by the ETag, snapshot entries as relative links, refs naming the commit.
    let cache = tempfile::tempdir().unwrap();
    let repo = cache
        .path()
        .join("datasets--princeton-nlp--SWE-bench_Verified");
    let commit = "c104f840cc67f8b6eec6f759ebc8b2693d585d4a";
    let etag = "3e4ff1a8b3bc2f6fd6b4fd9d5a8b4fb1b1f0f0e6f4d3a2c1b0a9f8e7d6c5b4a3";
    fs::create_dir_all(repo.join("blobs")).unwrap();
    fs::create_dir_all(repo.join("refs")).unwrap();
    fs::create_dir_all(repo.join("snapshots").join(commit).join("data")).unwrap();
    fs::copy(
        hub_root().join(VERIFIED).join(VERIFIED_FILE),
        repo.join("blobs").join(etag),
    )
    .unwrap();
    fs::write(repo.join("refs/main"), commit).unwrap();
    std::os::unix::fs::symlink(
        format!("../../../blobs/{etag}"),
        repo.join("snapshots").join(commit).join(VERIFIED_FILE),
    )
    .unwrap();
    let tasks = source(VERIFIED, "test")
        .load(&settings(&dead_endpoint(), None, cache.path()))
        .unwrap();
    assert_eq!(tasks, fixture_tasks());
    // A pinned revision reads the same snapshot.
    let pinned =
        TaskSource::parse(&format!("hf://{VERIFIED}@{commit}"), Some("test"), None).unwrap();
    assert_eq!(
        pinned
            .load(&settings(&dead_endpoint(), None, cache.path()))
            .unwrap(),
        tasks
    );
    // A split the snapshot lacks is not invented offline.
    let offline = HubSettings {
        offline: true,
        ..settings(&dead_endpoint(), None, cache.path())
    };
    let message = source(VERIFIED, "train")
        .load(&offline)
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("is not in the Hugging Face cache"),
        "{message}"
    );
    assert!(message.contains("HF_HUB_OFFLINE"), "{message}");
}

#[test]
fn the_token_goes_to_the_hub_and_never_to_the_content_server() {
    let cache = tempfile::tempdir().unwrap();
    let token = "hf_loopbackSecret123";
    let hub = HubServer::serve(&hub_root(), Some(token));
    let message = source(VERIFIED, "test")
        .load(&settings(&hub.endpoint(), None, cache.path()))
        .unwrap_err()
        .to_string();
    assert!(message.contains("answered 401"), "{message}");
    assert!(message.contains("set HF_TOKEN"), "{message}");

    let wrong = source(VERIFIED, "test")
        .load(&settings(&hub.endpoint(), Some("hf_wrong"), cache.path()))
        .unwrap_err()
        .to_string();
    assert!(!wrong.contains("hf_wrong"), "{wrong}");
    assert!(wrong.contains("HF_TOKEN does not give access"), "{wrong}");

    let before = hub.requests().len();
    let tasks = source(VERIFIED, "test")
        .load(&settings(&hub.endpoint(), Some(token), cache.path()))
        .unwrap();
    assert_eq!(tasks.len(), 10);
    let requests = hub.requests().split_off(before);
    let (cdn, api): (Vec<_>, Vec<_>) = requests.iter().partition(|r| r.path.starts_with("/cdn/"));
    assert!(!cdn.is_empty());
    assert!(cdn.iter().all(|r| r.header("authorization").is_none()));
    let bearer = format!("Bearer {token}");
    assert!(
        api.iter()
            .filter(|r| r.path.contains("/resolve/") || r.path.contains("/revision/"))
            .all(|r| r.header("authorization") == Some(bearer.as_str()))
    );
    // Debug output never shows it either.
    let shown = format!("{:?}", settings(&hub.endpoint(), Some(token), cache.path()));
    assert!(!shown.contains(token), "{shown}");
}

#[test]
fn unknown_names_revisions_and_splits_say_what_there_is() {
    let cache = tempfile::tempdir().unwrap();
    let hub = HubServer::serve(&hub_root(), None);
    let settings = settings(&hub.endpoint(), None, cache.path());
    let missing = source("princeton-nlp/SWE-bench_Nope", "test")
        .load(&settings)
        .unwrap_err()
        .to_string();
    assert!(missing.contains("answered 404"), "{missing}");
    assert!(
        missing.contains("check the dataset's name and revision"),
        "{missing}"
    );
    let revision = TaskSource::parse(&format!("hf://{VERIFIED}@v9"), Some("test"), None)
        .unwrap()
        .load(&settings)
        .unwrap_err()
        .to_string();
    assert!(
        revision.starts_with(&format!("hf://{VERIFIED}@v9: the hub answered 404")),
        "{revision}"
    );
    let split = TaskSource::parse(&format!("hf://{VERIFIED}@main"), Some("train"), None)
        .unwrap()
        .load(&settings)
        .unwrap_err()
        .to_string();
    assert!(
        split.contains("no data files for split \"train\""),
        "{split}"
    );
    assert!(split.contains(VERIFIED_FILE), "{split}");
    for (given, expected) in [
        ("hf://princeton-nlp", "a dataset is named ORG/NAME"),
        ("hf://a/b@", "the revision after @ is empty"),
        ("hf://a/b/c", "a dataset is named ORG/NAME"),
    ] {
        let message = TaskSource::parse(given, Some("test"), None)
            .unwrap_err()
            .to_string();
        assert!(message.contains(expected), "{given}: {message}");
    }
    let no_split = TaskSource::parse("hf://a/b", None, None)
        .unwrap_err()
        .to_string();
    assert!(no_split.contains("give --split"), "{no_split}");
    let file_split = TaskSource::parse("tasks.jsonl", Some("test"), None)
        .unwrap_err()
        .to_string();
    assert!(
        file_split.starts_with("--split applies to hf:// datasets"),
        "{file_split}"
    );
}

#[test]
fn a_dataset_without_data_files_for_the_split_is_read_from_the_hubs_parquet_conversion() {
    // A repository holding only a CSV file: the hub serves its Parquet conversion.
    let root = tempfile::tempdir().unwrap();
    let repo = root.path().join("swerve-fixtures/csv-only");
    fs::create_dir_all(repo.join(".convert/default/test")).unwrap();
    fs::write(repo.join("tasks.csv"), "instance_id,repo\n").unwrap();
    let parquet = fixture("hub").join("swerve-examples/tasks/data/test-00000-of-00001.parquet");
    fs::copy(&parquet, repo.join(".convert/default/test/0000.parquet")).unwrap();
    let hub = HubServer::serve(root.path(), None);
    let cache = tempfile::tempdir().unwrap();
    let tasks = source("swerve-fixtures/csv-only", "test")
        .load(&settings(&hub.endpoint(), None, cache.path()))
        .unwrap();
    assert_eq!(tasks, load_file(&parquet).unwrap());
    assert!(
        hub.requests()
            .iter()
            .any(|r| r.path == "/api/datasets/swerve-fixtures/csv-only/parquet/default/test")
    );
    // Cached under the conversion's revision, so the next load needs no network.
    let cached = cache
        .path()
        .join("datasets--swerve-fixtures--csv-only/refs/refs/convert/parquet");
    assert!(cached.is_file());
    drop(hub);
    let again = source("swerve-fixtures/csv-only", "test")
        .load(&settings(&dead_endpoint(), None, cache.path()))
        .unwrap();
    assert_eq!(again, tasks);
}
