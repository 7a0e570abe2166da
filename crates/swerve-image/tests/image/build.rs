//! `swerve images build`'s builder on real builds: FROM scratch with a static busybox copied
//! from the context (Debian's `busybox-static`), so no network and no base image is needed.
//! Each instruction, the layer cache, multi-stage builds, `.dockerignore`, heredocs, and
//! errors naming file and line. Skipped (with a note) without root or `/bin/busybox`, unless
//! `SWERVE_REQUIRE_IMAGES=1`.

use std::path::{Path, PathBuf};

use swerve_image::dockerfile::tree::Tree;
use swerve_image::dockerfile::{BuildError, BuildOptions, Builder, Built};
use swerve_image::{IdMapping, ImagesConfig, Store};
use swerve_sandbox::{Cache, Isolation, SandboxConfig, Workspace, WorkspaceOptions};

const BUSYBOX: &str = "/bin/busybox";

struct Fixture {
    dir: tempfile::TempDir,
    store: Store,
    cache: Cache,
    sandbox: SandboxConfig,
}

impl Fixture {
    /// A store, a cache and a context holding busybox; `None` (skip) where builds cannot run.
    fn new() -> Option<Self> {
        let required = std::env::var("SWERVE_REQUIRE_IMAGES").as_deref() == Ok("1");
        let why = if !nix::unistd::Uid::effective().is_root() {
            Some("not root")
        } else if !Path::new(BUSYBOX).is_file() {
            Some("no /bin/busybox (apt-get install busybox-static)")
        } else {
            None
        };
        if let Some(why) = why {
            assert!(!required, "build tests required but {why}");
            eprintln!("skipping build tests: {why}");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("store"), &ImagesConfig::default()).unwrap();
        let cache = Cache::open(dir.path().join("cache")).unwrap();
        std::fs::create_dir_all(dir.path().join("ctx")).unwrap();
        std::fs::copy(BUSYBOX, dir.path().join("ctx/busybox")).unwrap();
        Some(Self {
            dir,
            store,
            cache,
            sandbox: SandboxConfig {
                isolation: Isolation::Namespaces,
                ..SandboxConfig::default()
            },
        })
    }

    fn context(&self) -> PathBuf {
        self.dir.path().join("ctx")
    }

    fn write(&self, path: &str, text: &str) {
        let path = self.context().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// Builds `dockerfile` (written to the context) as `tag`; the result and the progress.
    fn build_with(
        &self,
        dockerfile: &str,
        tag: &str,
        edit: impl FnOnce(&mut BuildOptions),
    ) -> (Result<Built, BuildError>, String) {
        self.write("Dockerfile", dockerfile);
        let mut options = BuildOptions {
            dockerfile: self.context().join("Dockerfile"),
            context: self.context(),
            tags: vec![tag.to_owned()],
            ..BuildOptions::default()
        };
        edit(&mut options);
        let mut progress = Vec::new();
        let result = Builder {
            store: &self.store,
            cache: &self.cache,
            sandbox: self.sandbox.clone(),
            progress: &mut progress,
        }
        .build(&options);
        (result, String::from_utf8(progress).unwrap())
    }

    fn build(&self, dockerfile: &str, tag: &str) -> (Built, String) {
        let (result, progress) = self.build_with(dockerfile, tag, |_| {});
        match result {
            Ok(built) => (built, progress),
            Err(error) => panic!("{error}\n{progress}"),
        }
    }

    fn error(&self, dockerfile: &str) -> String {
        let (result, progress) = self.build_with(dockerfile, "localhost/bad:1", |_| {});
        match result {
            Ok(_) => panic!("built:\n{progress}"),
            Err(error) => error.to_string(),
        }
    }

    /// The merged root of the stored image `tag`.
    fn tree(&self, tag: &str) -> Tree {
        Tree::layers(self.root(tag).layers)
    }

    fn root(&self, tag: &str) -> swerve_sandbox::ImageRoot {
        let record = self.store.record(tag).unwrap().unwrap();
        self.store
            .root_for(&record, IdMapping::for_sandbox(&self.sandbox).unwrap())
            .unwrap()
    }

    fn read(&self, tag: &str, path: &str) -> String {
        std::fs::read_to_string(
            self.tree(tag)
                .get(path)
                .unwrap_or_else(|| panic!("no {path}")),
        )
        .unwrap()
    }

    /// The image configuration of `tag` as JSON.
    fn config(&self, tag: &str) -> serde_json::Value {
        let record = self.store.record(tag).unwrap().unwrap();
        serde_json::from_slice(
            &std::fs::read(self.store.blobs().path(&record.config_digest)).unwrap(),
        )
        .unwrap()
    }
}

const BASE: &str = "FROM scratch\nCOPY busybox /bin/busybox\nCOPY busybox /bin/sh\nRUN [\"/bin/busybox\", \"--install\", \"-s\", \"/bin\"]\n";

#[test]
fn every_instruction_and_the_image_runs_in_the_sandbox() {
    let Some(fx) = Fixture::new() else { return };
    fx.write("src/a.txt", "a\n");
    fx.write("src/sub/b.txt", "b\n");
    fx.write("src/remove-me", "x\n");
    fx.write("notes.md", "ignored\n");
    fx.write(".dockerignore", "*.md\nsecret/\n");
    fx.write("secret/key", "no\n");
    // A tar archive for ADD to extract.
    let archive = fx.context().join("bundle.tar");
    {
        let mut builder = tar::Builder::new(std::fs::File::create(&archive).unwrap());
        let mut header = tar::Header::new_gnu();
        header.set_size(3);
        header.set_mode(0o600);
        header.set_uid(0);
        header.set_gid(0);
        header.set_cksum();
        builder
            .append_data(&mut header, "inner/file", &b"in\n"[..])
            .unwrap();
        builder.finish().unwrap();
    }
    let dockerfile = format!(
        "{BASE}ARG VERSION=1\nenv GREETING=hello NAME=\"the world\"\nWORKDIR /app\n\
         COPY --chown=1000:1001 src/ ./src/\n\
         ADD bundle.tar /opt/\n\
         COPY <<EOF /etc/motd\nversion $VERSION for ${{NAME}}\nEOF\n\
         RUN echo \"$GREETING $NAME $VERSION\" > out \\\n  # a comment inside the continuation\n  && rm src/remove-me\n\
         RUN <<EOT\nset -e\nmkdir -p /data\necho heredoc > /data/h\nEOT\n\
         SHELL [\"/bin/sh\", \"-e\", \"-c\"]\nRUN test -f /app/out && ls -a / > /app/root-list\n\
         LABEL org.example.name=\"build test\" version=$VERSION\nEXPOSE 80 53/udp\n\
         VOLUME /data\nSTOPSIGNAL SIGTERM\nHEALTHCHECK --interval=30s --retries=3 CMD wget -q localhost\n\
         ENTRYPOINT [\"/bin/sh\", \"-c\"]\nCMD echo hi\nUSER 1000\n"
    );
    let (built, progress) = fx.build(&dockerfile, "localhost/every:1");
    assert!(progress.contains("#1 [1/22] FROM scratch"), "{progress}");
    assert!(
        progress.contains("[4/22] RUN [\"/bin/busybox\""),
        "{progress}"
    );
    assert_eq!(built.records.len(), 1);
    let tag = "localhost/every:1";
    assert_eq!(fx.read(tag, "app/out"), "hello the world 1\n");
    assert_eq!(fx.read(tag, "etc/motd"), "version 1 for the world\n");
    assert_eq!(fx.read(tag, "opt/inner/file"), "in\n");
    assert_eq!(fx.read(tag, "data/h"), "heredoc\n");
    assert_eq!(fx.read(tag, "app/src/sub/b.txt"), "b\n");
    let tree = fx.tree(tag);
    assert!(
        tree.get("app/src/remove-me").is_none(),
        "the whiteout hides it"
    );
    assert!(tree.get("app/src/a.txt").is_some());
    assert!(tree.get("bundle.tar").is_none() && tree.get("opt/bundle.tar").is_none());
    // The sandbox's mount points are not part of the image.
    let root_list = fx.read(tag, "app/root-list");
    let top: Vec<String> = tree.list("").into_keys().collect();
    assert_eq!(top, ["app", "bin", "data", "etc", "opt"], "{root_list}");
    // .dockerignore: nothing ignored was readable.
    let (result, _) = fx.build_with("FROM scratch\nCOPY notes.md /\n", "localhost/x:1", |_| {});
    let error = result.unwrap_err().to_string();
    assert!(
        error.contains("Dockerfile:2: COPY: notes.md not found in the build context"),
        "{error}"
    );
    // --chown in the layer.
    let record = fx.store.record(tag).unwrap().unwrap();
    let owners = layer_owners(&fx.store, &record);
    assert!(
        owners.contains(&("app/src/a.txt".to_owned(), 1000, 1001)),
        "{owners:?}"
    );
    assert!(
        owners.contains(&("bin/busybox".to_owned(), 0, 0)),
        "{owners:?}"
    );
    // The configuration.
    let config = fx.config(tag);
    let c = &config["config"];
    // `scratch` sets no PATH: the stage gets Linux's default first, as BuildKit and buildah
    // give it.
    assert_eq!(
        c["Env"],
        serde_json::json!([
            "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "GREETING=hello",
            "NAME=the world"
        ])
    );
    assert_eq!(c["WorkingDir"], "/app");
    assert_eq!(c["User"], "1000");
    assert_eq!(c["Labels"]["org.example.name"], "build test");
    assert_eq!(c["Labels"]["version"], "1");
    assert_eq!(
        c["ExposedPorts"],
        serde_json::json!({"53/udp": {}, "80/tcp": {}})
    );
    assert_eq!(c["Volumes"], serde_json::json!({"/data": {}}));
    assert_eq!(c["StopSignal"], "SIGTERM");
    assert_eq!(c["Entrypoint"], serde_json::json!(["/bin/sh", "-c"]));
    assert_eq!(
        c["Cmd"],
        serde_json::json!(["/bin/sh", "-e", "-c", "echo hi"])
    );
    assert_eq!(
        c["Healthcheck"]["Test"],
        serde_json::json!(["CMD-SHELL", "wget -q localhost"])
    );
    assert_eq!(c["Healthcheck"]["Interval"], 30_000_000_000u64);
    assert_eq!(c["Shell"], serde_json::json!(["/bin/sh", "-e", "-c"]));
    assert_eq!(config["architecture"], "amd64");
    // ARG is not persisted.
    assert!(!c["Env"].to_string().contains("VERSION"));
    // The image runs in swerve's sandbox as any stored image does.
    let workspace = Workspace::create_over_layers(
        &fx.cache,
        &fx.root(tag),
        &WorkspaceOptions {
            sandbox: SandboxConfig {
                workdir: Some("/app".into()),
                ..fx.sandbox.clone()
            },
            ..WorkspaceOptions::default()
        },
    )
    .unwrap();
    let outcome = swerve_core::Shell::run(
        workspace.sandbox(),
        "cat out && echo $GREETING",
        std::time::Duration::from_secs(30),
    )
    .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&outcome.stdout),
        "hello the world 1\nhello\n"
    );
}

/// (path, uid, gid) of every entry of the image's layers.
fn layer_owners(store: &Store, record: &swerve_image::ImageRecord) -> Vec<(String, u64, u64)> {
    let mut owners = Vec::new();
    for layer in &record.layers {
        let file = std::fs::File::open(store.blobs().path(&layer.digest)).unwrap();
        for entry in tar::Archive::new(file).entries().unwrap() {
            let entry = entry.unwrap();
            let path = entry
                .path()
                .unwrap()
                .to_string_lossy()
                .trim_end_matches('/')
                .to_owned();
            owners.push((
                path,
                entry.header().uid().unwrap(),
                entry.header().gid().unwrap(),
            ));
        }
    }
    owners
}

#[test]
fn a_changed_last_run_reruns_only_it() {
    let Some(fx) = Fixture::new() else { return };
    fx.write("app.txt", "v1\n");
    let dockerfile = |last: &str| {
        format!("{BASE}COPY app.txt /app.txt\nRUN echo first > /first\nRUN echo {last} > /last\n")
    };
    let (cold, _) = fx.build(&dockerfile("one"), "localhost/cache:1");
    assert_eq!((cold.ran, cold.cached), (6, 0));
    let (warm, progress) = fx.build(&dockerfile("one"), "localhost/cache:1");
    assert_eq!((warm.ran, warm.cached), (0, 6), "{progress}");
    assert!(progress.contains("#6 CACHED"), "{progress}");
    assert_eq!(warm.manifest_digest.len(), cold.manifest_digest.len());
    let (changed, progress) = fx.build(&dockerfile("two"), "localhost/cache:2");
    assert_eq!((changed.ran, changed.cached), (1, 5), "{progress}");
    assert_eq!(fx.read("localhost/cache:2", "last"), "two\n");
    assert_eq!(fx.read("localhost/cache:1", "last"), "one\n");
    // A changed file read by COPY reruns from the COPY on.
    fx.write("app.txt", "v2\n");
    let (copied, _) = fx.build(&dockerfile("two"), "localhost/cache:3");
    assert_eq!((copied.ran, copied.cached), (3, 3));
    assert_eq!(fx.read("localhost/cache:3", "app.txt"), "v2\n");
    // A build argument used by a RUN reruns it; --no-cache reruns everything.
    let with_arg = format!("{BASE}ARG N=1\nRUN echo $N > /n\n");
    fx.build(&with_arg, "localhost/arg:1");
    let (result, _) = fx.build_with(&with_arg, "localhost/arg:2", |o| {
        o.build_args.insert("N".into(), "2".into());
    });
    let rebuilt = result.unwrap();
    assert_eq!((rebuilt.ran, rebuilt.cached), (1, 3));
    assert_eq!(fx.read("localhost/arg:2", "n"), "2\n");
    let (result, _) = fx.build_with(&with_arg, "localhost/arg:3", |o| o.no_cache = true);
    assert_eq!(result.unwrap().cached, 0);
}

#[test]
fn multi_stage_copy_from_and_target() {
    let Some(fx) = Fixture::new() else { return };
    let dockerfile = format!(
        "ARG BASE_DIR=/out\n{BASE}ARG BASE_DIR\nRUN mkdir -p $BASE_DIR && echo built > $BASE_DIR/artifact && ln -s artifact $BASE_DIR/link\n\
         FROM scratch AS final\nCOPY --from=0 /bin/busybox /bin/\nCOPY --from=0 /out/ /dist/\nCOPY --from=0 /out/link /linked\n\
         FROM final AS extra\nCOPY --from=final /dist/artifact /again\n"
    );
    let (_, progress) = fx.build_with(&dockerfile, "localhost/multi:1", |o| {
        o.target = Some("final".into())
    });
    assert!(progress.contains("[stage-0 4/6] RUN"), "{progress}");
    assert!(progress.contains("[final 2/4] COPY"), "{progress}");
    assert!(!progress.contains("[extra"), "{progress}");
    assert_eq!(fx.read("localhost/multi:1", "dist/artifact"), "built\n");
    assert_eq!(fx.read("localhost/multi:1", "linked"), "built\n");
    let tree = fx.tree("localhost/multi:1");
    assert!(tree.get("bin/busybox").is_some());
    assert!(tree.get("bin/sh").is_none(), "only what was copied");
    assert!(tree.get("dist/link").is_some());
    let (result, _) = fx.build_with(&dockerfile, "localhost/multi:2", |_| {});
    result.unwrap();
    assert_eq!(fx.read("localhost/multi:2", "again"), "built\n");
}

#[test]
fn bad_input_is_named_by_file_line_and_instruction() {
    let Some(fx) = Fixture::new() else { return };
    let error = fx.error("FROM scratch\nFROBNICATE x\n");
    assert!(
        error.ends_with("Dockerfile:2: FROBNICATE: unknown instruction FROBNICATE"),
        "{error}"
    );
    let error = fx.error("FROM --platform=linux/arm64 scratch\n");
    assert!(
        error.contains("Dockerfile:1: FROM: --platform=linux/arm64 is not this machine's platform"),
        "{error}"
    );
    let error = fx.error(&format!("{BASE}RUN --mount=type=cache,target=/c true\n"));
    assert!(error.contains("Dockerfile:5: RUN: RUN --mount"), "{error}");
    let error = fx.error(&format!("{BASE}RUN exit 3\n"));
    assert!(
        error.contains("Dockerfile:5: RUN: the command failed with exit code 3"),
        "{error}"
    );
    let error = fx.error("FROM scratch\nCOPY missing /x\n");
    assert!(
        error.contains("Dockerfile:2: COPY: missing not found in the build context"),
        "{error}"
    );
    let error = fx.error("FROM scratch\nCOPY busybox busybox /x\n");
    assert!(
        error.contains("the destination must be a directory"),
        "{error}"
    );
    let error = fx.error("FROM localhost/nothing:1\n");
    assert!(error.contains("is not in swerve's image store"), "{error}");
    let error = fx.error("RUN true\n");
    assert!(
        error.contains("Dockerfile:1: RUN: only ARG may come before the first FROM"),
        "{error}"
    );
    let error = fx.error(&format!("{BASE}USER 1000\nRUN true\n"));
    assert!(
        error.contains("RUN as USER 1000 is not supported yet"),
        "{error}"
    );
    let error = fx.error("FROM scratch\nADD https://example.com/x /x\n");
    assert!(error.contains("ADD of a URL"), "{error}");
    let error = fx.error("FROM scratch\nRUN <<EOF\ntrue\n");
    assert!(
        error.contains("Dockerfile:2: RUN: the heredoc <<EOF is not closed"),
        "{error}"
    );
}
