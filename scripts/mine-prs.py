#!/usr/bin/env python3
"""Task instances from a repository's merged pull requests, by SWE-bench's rule.

    scripts/mine-prs.py REPOS_DIR OWNER/NAME --versions 2.2,2.3 [--max 5] [--out FILE]

For each merged pull request (newest first) in REPOS_DIR/OWNER/NAME (a bare git directory),
a first-parent commit "Merge pull request #N …" or a squashed "… (#N)": the base commit is
its first parent; the PR's diff splits into the
test patch (files under a test directory or named test_*/*_test*) and the patch (the rest);
a PR qualifies when both are non-empty, the patch changes Python code, and the version at the
base (`git describe --tags`, major.minor) is one of --versions. Then, as SWE-bench validates
instances: the test patch's tests run at the base without the patch (swerve eval --empty) and
with it (--gold), in the task's real environment; FAIL_TO_PASS are the tests that fail before
and pass after, PASS_TO_PASS those that pass both times. The gold run is made twice, the
second at least a minute after the first started, and a test counts only if its id and status
are the same in both: ids built from the clock (a parametrized `datetime.now()`), random
numbers or addresses never match a later run, so they are left out rather than becoming
expected tests no evaluation can find. A candidate without a FAIL_TO_PASS test is dropped. Needs a built swerve (SWERVE, default `swerve` on PATH) and pytest-style
logs (`PASSED id` / `FAILED id` lines of `pytest -rA`).

The rows hold the repository's code: keep them out of commits (real-check reads them).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

TEST_PATH = re.compile(r"(^|/)(tests?|testing)/|(^|/)test_[^/]*$|_test\.py$|(^|/)conftest\.py$")


def git(repo, *args):
    return subprocess.run(
        ["git", "--git-dir", repo, *args], check=True, capture_output=True, text=True
    ).stdout


def diff(repo, base, head, paths):
    if not paths:
        return ""
    return git(repo, "diff", "--no-color", "--full-index", base, head, "--", *paths)


def statuses(log):
    """Test id -> PASSED/FAILED/ERROR/SKIPPED from pytest -rA's short summary."""
    found = {}
    for line in log.splitlines():
        match = re.match(r"^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (\S+)", line)
        if match:
            found[match.group(2)] = match.group(1)
    return found


def run_eval(swerve, repos, tasks, out, mode, cache):
    subprocess.run(
        [swerve, "--repos", repos, "eval", "--tasks", tasks, f"--{mode}", "--no-cache",
         "--timeout", "600", "--out", out],
        capture_output=True, text=True, env={**os.environ, **({"SWERVE_CACHE_DIR": cache} if cache else {})},
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("repos")
    parser.add_argument("repo")
    parser.add_argument("--versions", required=True)
    parser.add_argument("--max", type=int, default=5)
    parser.add_argument("--scan", type=int, default=400, help="merge commits looked at")
    parser.add_argument("--max-lines", type=int, default=200, help="patch size limit")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    swerve = os.environ.get("SWERVE", "swerve")
    cache = os.environ.get("SWERVE_CACHE_DIR")
    repo_dir = os.path.join(args.repos, args.repo)
    versions = set(args.versions.split(","))
    commits = git(repo_dir, "log", "--first-parent", f"-{args.scan}",
                  "--format=%H|%P|%cI|%s").splitlines()
    candidates = []
    for line in commits:
        merge, parents, created, subject = line.split("|", 3)
        # A merged PR ("Merge pull request #N …") or a squashed one ("… (#N)").
        number = re.match(r"Merge pull request #(\d+)", subject) or re.search(r"\(#(\d+)\)$", subject)
        if not number or not parents:
            continue
        number = number.group(1)
        base = parents.split()[0]
        files = git(repo_dir, "diff", "--name-only", base, merge).split()
        tests = [f for f in files if TEST_PATH.search(f)]
        code = [f for f in files if f not in tests]
        if not tests or not any(f.endswith(".py") for f in code):
            continue
        try:
            described = git(repo_dir, "describe", "--tags", "--abbrev=0", base).strip()
        except subprocess.CalledProcessError:
            continue
        match = re.search(r"(\d+)\.(\d+)", described)
        if not match or f"{match.group(1)}.{match.group(2)}" not in versions:
            continue
        patch = diff(repo_dir, base, merge, code)
        if sum(1 for l in patch.splitlines() if l[:1] in "+-") > args.max_lines:
            continue
        name = args.repo.replace("/", "__")
        candidates.append({
            "repo": args.repo,
            "instance_id": f"{name}-{number}",
            "base_commit": base,
            "patch": patch,
            "test_patch": diff(repo_dir, base, merge, tests),
            "problem_statement": subject,
            "hints_text": "",
            "created_at": created,
            "version": f"{match.group(1)}.{match.group(2)}",
            "FAIL_TO_PASS": [],
            "PASS_TO_PASS": [],
            "environment_setup_commit": base,
        })
        if len(candidates) >= args.max * 2:
            break
    kept = []
    with tempfile.TemporaryDirectory() as scratch:
        tasks = os.path.join(scratch, "candidates.jsonl")
        with open(tasks, "w") as f:
            for row in candidates:
                f.write(json.dumps(row) + "\n")
        runs = [("empty", "empty"), ("gold", "gold"), ("gold2", "gold")]
        first_gold = None
        for name, mode in runs:
            if name == "gold":
                first_gold = time.monotonic()
            if name == "gold2":
                time.sleep(max(0.0, 61 - (time.monotonic() - first_gold)))
            run_eval(swerve, args.repos, tasks, os.path.join(scratch, name), mode, cache)
        for row in candidates:
            logs = {}
            for name, _ in runs:
                path = os.path.join(scratch, name, "logs", row["instance_id"], "test_output.txt")
                logs[name] = statuses(open(path).read()) if os.path.exists(path) else {}
            before, again = logs["empty"], logs["gold2"]
            # Tests whose id or status differ between the two gold runs are unstable.
            after = {t: s for t, s in logs["gold"].items() if again.get(t) == s}
            unstable = len(logs["gold"]) - len(after)
            f2p = sorted(t for t, s in after.items() if s in ("PASSED", "XFAIL") and before.get(t) not in ("PASSED", "XFAIL"))
            p2p = sorted(t for t, s in after.items() if s == "PASSED" and before.get(t) == "PASSED")
            reason = "kept" if f2p else "no FAIL_TO_PASS test"
            print(f"{row['instance_id']}: {len(f2p)} FAIL_TO_PASS, {len(p2p)} PASS_TO_PASS, "
                  f"{unstable} unstable ids left out: {reason}", file=sys.stderr)
            if f2p and len(kept) < args.max:
                row["FAIL_TO_PASS"], row["PASS_TO_PASS"] = f2p, p2p
                kept.append(row)
    out = open(args.out, "a") if args.out else sys.stdout
    for row in kept:
        out.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
