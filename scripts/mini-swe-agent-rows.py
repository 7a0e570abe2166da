#!/usr/bin/env python3
"""Task rows for mini-swe-agent SWE-bench trajectories, derived from fetched repositories.

    scripts/mini-swe-agent-rows.py [--unchecked-base] REPOS_DIR TRAJ_DIR OUT.jsonl INSTANCE_ID...

For `swerve replay` when the SWE-bench rows themselves are not at hand. TRAJ_DIR holds
ID/ID.traj.json (and ID/ID.report.json, the official report); REPOS_DIR holds bare git
directories as owner/name. Per instance, by SWE-bench's rule (as scripts/mine-prs.py): the
pull request's merge commit found by number; the base commit the merge base of its parents,
or a commit of the PR branch, whichever holds every pre-image blob the recorded submission's
`index` lines name (so the checkout is the one the agent saw); for a squash commit its parent,
else the newest commit of the target branch before it that holds them and onto which the
squash commit replays cleanly (the branch the pull request was opened on), its patch then that
replay (the squash commit's diff, three-way merged onto it); the pull request's own changes
(from the merge base of the base and the PR's head) split into test files for test_patch and
the rest for patch; the version from the package's version file at the base (else `git describe`;
for astropy, SWE-bench's own rule: the newest minor release whose last release date, in the
changelog, is before the pull request was opened); created_at the first commit of the PR branch;
FAIL_TO_PASS / PASS_TO_PASS from the official report; the problem statement from the prompt.
An instance whose blobs no candidate holds is left out (and named on stderr); with
--unchecked-base it gets the first merge's merge base instead (for certifying gold and empty
patches, where the agent's checkout does not matter; named on stderr too).

The rows hold the repositories' code: keep them out of commits.
"""
import json, os, re, subprocess, sys

XARRAY_VERSIONS = {"0.12", "0.18", "0.19", "0.20", "2022.03", "2022.06", "2022.09", "2023.07", "2024.05"}
TEST_PATH = re.compile(r"(^|/)(tests?|testing)/|(^|/)test_[^/]*$|_test\.py$|(^|/)conftest\.py$")

def git(repo, *args):
    return subprocess.run(["git", "--git-dir", repo, *args], capture_output=True, text=True)

def blob_ok(repo, base, submission):
    path = None
    for line in submission.splitlines():
        m = re.match(r"^diff --git a/(\S+) b/", line)
        if m:
            path = m.group(1)
        m = re.match(r"^index ([0-9a-f]+)\.\.", line)
        if m and path and set(m.group(1)) != {"0"}:
            found = git(repo, "rev-parse", f"{base}:{path}").stdout.strip()
            if not found.startswith(m.group(1)):
                return False
    return True

def astropy_version(repo, created_at):
    """SWE-bench's astropy version (swebench/versioning/extract_web/get_versions_astropy.py): per
    minor release (as the changelog spells it, "v5.3" included), the date of its last release;
    the first, in descending order of the names, whose date is before created_at."""
    changelog = git(repo, "show", "HEAD:CHANGES.rst").stdout
    last = {}
    for version, date in re.findall(r"^Version (\S+) \((\d{4}-\d{2}-\d{2})\)", changelog, re.M):
        minor = ".".join(version.split(".")[:2])
        last[minor] = max(last.get(minor, ""), date)
    ordered = sorted(last.items(), reverse=True)
    return next((v for v, date in ordered if date < created_at[:10]), ordered[-1][0] if ordered else "")

def main():
    args = sys.argv[1:]
    unchecked = "--unchecked-base" in args
    args = [a for a in args if a != "--unchecked-base"]
    repos, trajs, out, ids = args[0], args[1], args[2], args[3:]
    with open(out, "w") as f:
        for iid in ids:
            owner_name, number = iid.rsplit("-", 1)
            owner, name = owner_name.split("__")
            repo = os.path.join(repos, owner, name)
            traj = json.load(open(os.path.join(trajs, iid, f"{iid}.traj.json")))
            report = json.load(open(os.path.join(trajs, iid, f"{iid}.report.json")))
            report = report.get(iid, report)
            submission = traj["info"].get("submission") or ""
            log = git(repo, "log", "--all", "--format=%H|%P|%s", "-E",
                      f"--grep=(pull request #{number}\\b|\\(#{number}\\)$)").stdout.splitlines()
            # git's --grep reads whole messages: a merge of the target branch into another
            # branch lists the squashed "(#N)" subjects it brings in its body, and its "head" is
            # the target branch's tip. Only a commit whose own subject names the pull request
            # is its merge (a squash "… (#N)" or "Merge pull request #N from …").
            own = re.compile(rf"^Merge pull request #{number} from |\(#{number}\)$")
            merges = [l.split("|", 2) for l in log]
            merges = [m for m in merges if own.search(m[2])]
            base = head = fallback = origin = before = after = None
            for h, parents, _ in merges:
                ps = parents.split()
                cands = []
                if len(ps) == 2:
                    mb = git(repo, "merge-base", ps[0], ps[1]).stdout.strip()
                    cands += [mb]
                    # walk the PR branch back to the merge base
                    cands += git(repo, "rev-list", "--first-parent", f"{mb}..{ps[1]}").stdout.split()[1:]
                cands += ps[:1]
                if fallback is None and cands[0]:
                    fallback = (cands[0], ps[1] if len(ps) == 2 else h)
                for c in cands:
                    if c and blob_ok(repo, c, submission):
                        # the pull request's own changes: to its head for a merge commit (the
                        # merge's tree also holds what the target branch gained meanwhile)
                        base, head = c, ps[1] if len(ps) == 2 else h
                        break
                if not base and len(ps) == 1:
                    # A squash commit: the branch's own commits are gone, and the pull request
                    # was opened on an older commit of the target branch (GitHub's base). Take
                    # the newest first-parent ancestor that holds the blobs and onto which the
                    # squash commit's own diff replays cleanly (a three-way merge, as the pull
                    # request's branch had it): that replay is the pull request's changes, so
                    # they apply to the base (the squash diff itself is against its parent).
                    for c in git(repo, "rev-list", "--first-parent", "--max-count=300", ps[0]).stdout.split()[1:]:
                        if blob_ok(repo, c, submission):
                            replayed = git(repo, "merge-tree", "--write-tree", "--merge-base", ps[0], c, h)
                            if replayed.returncode == 0:
                                base, head, origin = c, h, ps[0]
                                before, after = c, replayed.stdout.split()[0]
                                break
                if base:
                    break
            if not base and unchecked and fallback:
                base, head = fallback
                print(f"{iid}: no candidate holds the submission's blobs; unchecked base {base[:10]}",
                      file=sys.stderr)
            if not base:
                print(f"{iid}: no base commit matches the submission's blobs", file=sys.stderr)
                continue
            # The pull request's own changes, as GitHub shows them: from where its branch left
            # the base (the base itself, unless it is the target branch's later tip).
            origin = origin or git(repo, "merge-base", base, head).stdout.strip() or base
            before, after = before or origin, after or head
            files = git(repo, "diff", "--name-only", before, after).stdout.split()
            tests = [p for p in files if TEST_PATH.search(p)]
            code = [p for p in files if p not in tests]
            d = lambda paths: git(repo, "diff", "--no-color", "--full-index", before, after, "--", *paths).stdout if paths else ""
            described = git(repo, "describe", "--tags", "--abbrev=0", base).stdout.strip()
            for path in {"sympy": ["sympy/release.py"], "requests": ["requests/__version__.py", "requests/__init__.py"],
                         "pylint": ["pylint/__pkginfo__.py"], "sphinx": ["sphinx/__init__.py"],
                         "flask": ["src/flask/__init__.py", "flask/__init__.py"],
                         "seaborn": ["seaborn/__init__.py"]}.get(name, []):
                text = git(repo, "show", f"{base}:{path}").stdout
                found = re.search(r"""(?:__version__|version)\s*=\s*['"](\d+\.\d+)""", text) or re.search(r"numversion\s*=\s*\((\d+), (\d+)", text)
                if found:
                    described = found.group(1) if found.lastindex == 1 else f"{found.group(1)}.{found.group(2)}"
                    break
            m = re.search(r"(\d+)\.(\d+)", described)
            version = f"{m.group(1)}.{m.group(2)}" if m else ""
            # When the pull request was opened: its branch's first commit (authored).
            dates = git(repo, "log", "--format=%aI", f"{origin}..{head}").stdout.split()
            created_at = min(dates) if dates else git(repo, "log", "-1", "--format=%aI", head).stdout.strip()
            if name == "astropy":
                version = astropy_version(repo, created_at)
            if name == "xarray" and version not in XARRAY_VERSIONS:
                # SWE-bench names every xarray release before 0.18 "0.12"; their specs are one
                version = "0.12" if version.startswith("0.") else version
            prompt = next(m["content"] for m in traj["messages"] if m["role"] == "user")
            ps = re.search(r"Consider the following PR description:\n(.*?)\n</pr_description>", prompt, re.S)
            status = report.get("tests_status", {})
            tests_of = lambda k: sorted(set(status.get(k, {}).get("success", []) + status.get(k, {}).get("failure", [])))
            row = {"repo": f"{owner}/{name}", "instance_id": iid, "base_commit": base,
                   "patch": d(code), "test_patch": d(tests),
                   "problem_statement": ps.group(1) if ps else "", "hints_text": "",
                   "created_at": created_at, "version": version,
                   "FAIL_TO_PASS": tests_of("FAIL_TO_PASS"), "PASS_TO_PASS": tests_of("PASS_TO_PASS"),
                   "environment_setup_commit": base}
            f.write(json.dumps(row) + "\n")
            print(f"{iid}: base {base[:10]} version {row['version']}", file=sys.stderr)

main()
