#!/usr/bin/env python3
"""Real rows of each dataset family run in images rebuilt offline, laid out as the family's own.

For every row of `crates/swerve-eval/tests/fixtures/families/<family>.jsonl` this script

1. builds the row's environment with swerve's recipes (from the row as it is), from the
   repositories under `--repos` (clones, or the bare git directories of a mirror);
2. writes an OCI image of it with umoci, over swerve's base userland (`sandbox.userland =
   "base"`: Debian minbase plus the packages of SWE-bench's base image, `make` and `gcc`
   among them; the environments are built in it too): the repository at `/testbed` with its
   whole history
   (the future included, as SWE-bench's images had it before SWE-bench#465; the row's
   branch reset to the starting commit), the environment as a conda-style prefix at
   `/opt/miniconda3/envs/testbed` activated by `source /opt/miniconda3/bin/activate && conda
   activate testbed` (a stand-in for conda's script, as in the image tests; the prefix is
   relocated as conda relocates a package), `WorkingDir /testbed`;
3. imports it offline under the name the family gives it (`swerve images pull --from`):
   SWE-bench's `swebench/sweb.eval.x86_64.<id>`, SWE-Gym's through OpenHands'
   `xingyaoww/sweb.eval.x86_64.<id>`, SWE-rebench's `docker_image` as its rows name it;
4. checks the rows as they are, in their images: the agent's starting state (`swerve env
   exec`: the commits reachable are the starting commit's history and nothing after it,
   nothing lost-and-found, a clean tree, and the blobs the gold patch writes, which the
   image's clone holds, absent) and `swerve tasks check` (gold resolves and the empty patch
   does not, by the family's own rule).

SWE-smith and R2E-Gym rows are not among them: none of their published rows that this was
built with could be run (docs/tasks.md says why); their starting state and rules are tested
on the image tests' images (crates/swerve/tests/cli/images.rs) and recorded logs.

It exits non-zero when any row fails, and writes `<work>/report.json` (per row: the
starting-state probes and the check's verdicts and times) and the check's logs.

Usage: scripts/family-images.py --repos DIR --work DIR [--swerve BIN] [--family F ...]
       [--ids ID ...] [--anchor]
With --anchor the same rows are checked right after without their images, in recipe
workspaces over the same cached environments (BENCHMARKS.md, "Real rows in rebuilt images").
Needs root, umoci and debootstrap (scripts/prerequisites.sh), the rows' Python versions
(pyenv or uv), PyPI for the environment builds, and the repositories (none from the network).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "crates/swerve-eval/tests/fixtures/families"
PREFIX = "/opt/miniconda3/envs/testbed"
SWERVE_PREFIX = "/swerve-env"
FAMILIES = ["swe-bench", "swe-gym", "swe-rebench"]
# Environments are built in swerve's base userland, which is also the images' root.
BASE_USERLAND = ["--set", "sandbox.userland=base"]

CONDA_ACTIVATE = """\
# A stand-in for conda's activate script: defines `conda activate ENV`.
conda() {
  if [ "$1" = activate ]; then
    export CONDA_DEFAULT_ENV="$2"
    export CONDA_PREFIX="/opt/miniconda3/envs/$2"
    export PATH="/opt/miniconda3/envs/$2/bin:$PATH"
  fi
}
export CONDA_SHLVL=1
"""


def run(args, **kwargs):
    """Runs a command, failing loudly with its output when it fails."""
    result = subprocess.run(args, capture_output=True, **kwargs)
    if result.returncode != 0:
        sys.stderr.write(result.stderr.decode(errors="replace")[-4000:])
        raise SystemExit(f"failed ({result.returncode}): {' '.join(map(str, args))}")
    return result.stdout


def swebench_image(namespace, instance_id):
    return f"{namespace}/sweb.eval.x86_64.{instance_id.replace('__', '_1776_')}:latest"


class Row:
    """One fixture row: how its environment is built, what its image is called."""

    def __init__(self, family, row):
        self.family = family
        self.row = row
        self.id = row["instance_id"]
        self.repo = row["repo"]
        self.start = row["base_commit"]
        self.env_row = {k: v for k, v in row.items() if k not in ("docker_image", "image", "image_name")}
        if family == "swe-rebench":
            self.image = row["docker_image"]
        elif family == "swe-gym":
            self.image = swebench_image("xingyaoww", self.id)
        else:
            self.image = swebench_image("swebench", self.id)
        if ":" not in self.image.rsplit("/", 1)[-1]:
            self.image += ":latest"


def relocate(prefix):
    """Rewrites the text files that name swerve's prefix to name conda's (as conda relocates
    a package); binary files (compiled bytecode) keep the old name, as only tracebacks read it."""
    old, new = SWERVE_PREFIX.encode(), PREFIX.encode()
    for path in prefix.rglob("*"):
        if path.is_symlink():
            target = os.readlink(path)
            if target.startswith(SWERVE_PREFIX + "/"):
                path.unlink()
                path.symlink_to(PREFIX + target[len(SWERVE_PREFIX) :])
            continue
        if not path.is_file():
            continue
        data = path.read_bytes()
        if old in data and b"\0" not in data[:8192]:
            path.write_bytes(re.sub(re.escape(old) + rb"(?=[/\s'\"]|$)", new, data))


def interpreter_libraries(prefix):
    """The host directories the prefix's interpreter loads libpython from (its RUNPATH), as
    swerve's environments show the interpreter's installation read-only."""
    dirs = set()
    for python in (prefix / "bin").glob("python3*"):
        if python.is_symlink() or not python.is_file():
            continue
        dynamic = subprocess.run(["readelf", "-d", str(python)], capture_output=True, text=True).stdout
        for match in re.finditer(r"\((?:RUNPATH|RPATH)\)\s+Library (?:runpath|rpath): \[(.*)\]", dynamic):
            dirs.update(d for d in match.group(1).split(":") if d.startswith("/"))
    return sorted(dirs)


def build_image(args, row, work):
    """Exports the row's environment from swerve and writes it as an image into the layout."""
    tag = re.sub(r"[^a-z0-9]+", "-", row.id.lower())
    done = work / "layout" / f".{tag}.ready"
    if done.exists():
        return tag
    stage = work / "stage" / tag
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir(parents=True)
    env_rows = stage / "env-row.jsonl"
    env_rows.write_text(json.dumps(row.env_row) + "\n")
    export = stage / "export.tar"
    with open(export, "wb") as out:
        result = subprocess.run(
            [
                args.swerve, "--repos", str(args.repos), "--cache-dir", str(args.cache),
                *BASE_USERLAND, "--set", "sandbox.output_cap_bytes=8000000000",
                "env", "exec", "--tasks", str(env_rows), row.id, "--timeout", "1800", "--",
                "tar -C / --exclude=./testbed/.git -cf - ./swerve-env ./testbed",
            ],
            stdout=out,
            stderr=subprocess.PIPE,
        )
    if result.returncode != 0:
        raise SystemExit(f"{row.id}: exporting its environment failed:\n{result.stderr.decode()[-3000:]}")
    base_layout(args)
    tree = stage / "tree"
    tree.mkdir()
    run(["tar", "-C", str(tree), "-xf", str(export)])
    export.unlink()
    # The repository: the exported tree (with what the install built) and the whole history.
    clone = stage / "clone"
    run(["git", "clone", "-q", "--no-checkout", str(args.repos / row.repo), str(clone)])
    shutil.move(str(clone / ".git"), str(tree / "testbed/.git"))
    run(["git", "-C", str(tree / "testbed"), "reset", "-q", row.start])
    # The environment at conda's place.
    opt = stage / "opt"
    (opt / "miniconda3/envs").mkdir(parents=True)
    (opt / "miniconda3/bin").mkdir()
    (opt / "miniconda3/bin/activate").write_text(CONDA_ACTIVATE)
    shutil.move(str(tree / "swerve-env"), str(opt / "miniconda3/envs/testbed"))
    relocate(opt / "miniconda3/envs/testbed")
    bashrc = stage / "bashrc"
    bashrc.write_text("source /opt/miniconda3/bin/activate && conda activate testbed\n")
    layout = f"{work / 'layout'}:{tag}"
    run(["umoci", "insert", "--image", f"{work / 'layout'}:base", "--tag", tag, str(tree / "testbed"), "/testbed"])
    run(["umoci", "insert", "--image", layout, str(opt / "miniconda3"), "/opt/miniconda3"])
    for lib in interpreter_libraries(opt / "miniconda3/envs/testbed"):
        run(["umoci", "insert", "--image", layout, lib, lib])
    run(["umoci", "insert", "--image", layout, str(bashrc), "/root/.bashrc"])
    env = ["--config.env", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "--config.env", "LANG=C.UTF-8"]
    wheels = opt / "miniconda3/envs/testbed/.swerve-build-wheels"
    if wheels.is_dir():
        # The install's build requirements, for an offline re-install (the images' evaluations
        # reach PyPI; these do not).
        env += ["--config.env", f"PIP_FIND_LINKS={PREFIX}/.swerve-build-wheels", "--config.env", "PIP_NO_INDEX=1"]
    run(["umoci", "config", "--image", layout, "--config.workingdir", "/testbed", *env])
    shutil.rmtree(stage)
    done.touch()
    return tag


def base_layout(args):
    """The layout's `base` image: swerve's base userland (`sandbox.userland = "base"`: Debian
    minbase plus SWE-bench's base image's packages), the root the rows' environments were
    built in, as one layer."""
    layout = args.work / "layout"
    if (layout / "index.json").exists():
        return
    roots = [ready.with_suffix("") for ready in (args.cache / "userlands").glob("*.ready")]
    if len(roots) != 1:
        raise SystemExit(f"expected one base userland under {args.cache / 'userlands'}, found {len(roots)}")
    rootfs = args.work / "rootfs.tar"
    run(["tar", "--numeric-owner", "-C", str(roots[0]), "-cf", str(rootfs), "."])
    run(["umoci", "init", "--layout", str(layout)])
    run(["umoci", "new", "--image", f"{layout}:base"])
    run(["umoci", "raw", "add-layer", "--image", f"{layout}:base", str(rootfs)])
    run(["umoci", "config", "--image", f"{layout}:base", "--os", "linux", "--architecture", "amd64", "--config.cmd", "/bin/bash"])
    rootfs.unlink()


def swerve(args, *command, config=(), check=True):
    result = subprocess.run(
        [args.swerve, "--cache-dir", str(args.cache), *config, *command], capture_output=True, text=True
    )
    if check and result.returncode != 0:
        raise SystemExit(f"swerve {' '.join(command)} failed:\n{result.stderr[-3000:]}")
    return result


def tasks_check(args, config, rows_file, out):
    """`swerve tasks check` over a row file: each row's check, by instance id."""
    check = subprocess.run(
        [args.swerve, "--cache-dir", str(args.cache), *config, "tasks", "check", str(rows_file), "--out", str(out)],
        capture_output=True, text=True,
    )
    print(check.stdout, end="")
    if not (out / "check.json").exists():
        raise SystemExit(f"swerve tasks check {rows_file} wrote no check.json:\n{check.stderr[-3000:]}")
    return {c["instance_id"]: c for c in json.loads((out / "check.json").read_text())}


def gold_blobs(repo, start, patch):
    """The blob ids of the files a patch writes, applied to `start` (the fixed files'
    contents): SWE-bench's patches carry no `index` lines, so they are computed."""
    with tempfile.TemporaryDirectory() as tree:
        paths = re.findall(r"^diff --git a/\S+ b/(\S+)$", patch, re.M)
        existing = [  # a file the patch creates is not in `start`
            path for path in paths
            if subprocess.run(["git", "-C", str(repo), "cat-file", "-e", f"{start}:{path}"], capture_output=True).returncode == 0
        ]
        if existing:
            archive = run(["git", "-C", str(repo), "archive", start, "--", *existing])
            subprocess.run(["tar", "-x", "-C", tree], input=archive, check=True)
        applied = subprocess.run(["git", "apply", "--unsafe-paths", "-"], cwd=tree, input=patch.encode(), capture_output=True)
        if applied.returncode != 0:
            raise SystemExit(f"the gold patch does not apply to {start}: {applied.stderr.decode()[-500:]}")
        blobs = []
        for path in paths:
            if (Path(tree) / path).is_file():
                blobs.append(run(["git", "hash-object", str(Path(tree) / path)]).decode().strip())
        return sorted(set(blobs))


def starting_state(args, config, row, rows_file):
    """What the agent's workspace holds: every commit reachable, the gold's blobs, the bug."""
    probe = (
        "git rev-list --all | wc -l; git fsck --lost-found 2>/dev/null | wc -l; "
        "git cat-file --batch-all-objects --batch-check | wc -l; git status --porcelain | wc -l"
    )
    out = swerve(args, "env", "exec", "--tasks", str(rows_file), row.id, "--", probe, config=config).stdout.split()
    commits, lost, objects, dirty = (int(x) for x in out)
    state = {"commits_reachable": commits, "lost_found": lost, "objects": objects, "changed_files": dirty}
    git = ["git", "-C", str(args.repos / row.repo)]
    state["expected_commits"] = int(run([*git, "rev-list", "--count", row.start]).decode())
    blobs = gold_blobs(args.repos / row.repo, row.start, row.row["patch"])
    probe = "; ".join(f"git cat-file -e {b} 2>/dev/null && echo {b}" for b in blobs) or "true"
    found = swerve(args, "env", "exec", "--tasks", str(rows_file), row.id, "--", probe + "; true", config=config).stdout.split()
    state["answer_blobs_present"] = found
    # The image's repository is a whole clone: what the scrub had to remove.
    state["answer_blobs_in_image"] = [
        b for b in blobs if subprocess.run([*git, "cat-file", "-e", b], capture_output=True).returncode == 0
    ]
    state["commits_in_image"] = int(run([*git, "rev-list", "--all", "--count"]).decode())
    state["ok"] = (
        commits == state["expected_commits"]
        and lost == 0
        and not found
        and dirty == 0
    )
    return state


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repos", type=Path, required=True)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--swerve", default=str(ROOT / "target/debug/swerve"))
    parser.add_argument("--family", action="append", choices=FAMILIES)
    parser.add_argument("--ids", nargs="*")
    parser.add_argument("--cache", type=Path, help="swerve's cache (default WORK/cache)")
    parser.add_argument(
        "--anchor", action="store_true",
        help="also check the rows without their images (recipe workspaces), for BENCHMARKS.md",
    )
    args = parser.parse_args()
    args.work = args.work.resolve()
    args.repos = args.repos.resolve()
    args.cache = (args.cache or args.work / "cache").resolve()
    report = {}
    failed = []
    for family in args.family or FAMILIES:
        path = FIXTURES / f"{family}.jsonl"
        if not path.exists():
            continue
        rows = [Row(family, json.loads(line)) for line in path.read_text().splitlines() if line.strip()]
        rows = [r for r in rows if not args.ids or r.id in args.ids]
        if not rows:
            continue
        built = []
        for row in rows:
            print(f"{family}: {row.id}: building {row.image}", flush=True)
            try:
                tag = build_image(args, row, args.work)
                swerve(args, "images", "pull", "--from", str(args.work / "layout"), "--name", tag, row.image)
            except SystemExit as error:
                # A row whose image cannot be built here is reported, and the others go on.
                print(f"{family}: {row.id}: no image: {error}", flush=True)
                report[row.id] = {"family": family, "image": row.image, "error": str(error)}
                failed.append(row.id)
                continue
            built.append(row)
        rows = built
        if not rows:
            continue
        rows_file = args.work / f"{family}.jsonl"
        rows_file.write_text("".join(json.dumps(r.row) + "\n" for r in rows))
        config = ["--set", "images.naming=swebench"] if family in ("swe-bench", "swe-gym") else []
        if family == "swe-gym":
            config += ["--set", "images.swebench_namespace=xingyaoww"]
        checks = tasks_check(args, config, rows_file, args.work / f"{family}.check")
        anchors = {}
        if args.anchor:
            # The same rows without their images, in recipe workspaces over the same cached
            # environments, right after: how much the image path costs per evaluation.
            anchor_file = args.work / f"{family}.recipe.jsonl"
            anchor_file.write_text("".join(json.dumps(r.env_row) + "\n" for r in rows))
            anchors = tasks_check(args, BASE_USERLAND, anchor_file, args.work / f"{family}.recipe.check")
        for row in rows:
            state = starting_state(args, config, row, rows_file)
            verdict = checks.get(row.id, {})
            entry = {"family": family, "image": row.image, "start": state, "check": verdict}
            if row.id in anchors:
                entry["recipe_check"] = anchors[row.id]
            report[row.id] = entry
            ok = state["ok"] and verdict.get("status") == "ok"
            print(f"{family}: {row.id}: start {'ok' if state['ok'] else 'WRONG'} {state}; check {verdict.get('status')}", flush=True)
            if not ok:
                failed.append(row.id)
    (args.work / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    print(f"{len(report) - len(failed)} of {len(report)} rows ok" + (f"; failed: {' '.join(failed)}" if failed else ""))
    sys.exit(1 if failed else 0)



if __name__ == "__main__":
    main()
