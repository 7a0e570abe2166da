"""Writes real R2E-Gym `parsed_commit_content` values, and the gold patches R2E-Gym's own
code writes from them, for swerve's test of R2E-Gym's gold
(`grading_families::r2e_gym_gold_…`, crates/swerve-eval/tests/fixtures/r2e-gym/commits.json).

Each commit of a fetched repository is parsed as R2E-Gym's dataset pipeline parses it
(src/r2egym/repo_analysis/store_repo_commits.py: `git diff -p COMMIT^ COMMIT`, the message and
date from `git log`, `CommitParser.parse_commit`; without the repository, so the files'
whole contents, which the patch does not use, stay empty and out of the fixture), serialized as its rows hold it (`model_dump_json`), and written out as its
trajectories' ground truth (`ParsedCommit.get_patch(test_file=False)`). R2E-Gym's own check
that the parse round-trips (`get_patch(only_python=False)` equals the diff) is run too.

Usage (pydantic installed; R2E_GYM_SOURCE a checkout of R2E-Gym, REPO a git directory):
    python scripts/r2e-gym-gold-fixtures.py R2E_GYM_SOURCE REPO COMMIT... [--write]
Without --write, compares with commits.json and exits 1 on a difference.
"""

import datetime
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "crates/swerve-eval/tests/fixtures/r2e-gym/commits.json"


def git(repo, *args):
    return subprocess.check_output(["git", "--git-dir", repo, *args]).decode()


def main():
    args = [a for a in sys.argv[1:] if a != "--write"]
    if len(args) < 3:
        sys.exit(__doc__)
    source, repo, commits = pathlib.Path(args[0]), args[1], args[2:]
    sys.path.insert(0, str(source / "src"))
    from r2egym.commit_models.parse_diff import CommitParser

    records = []
    for commit in commits:
        diff = git(repo, "diff", "-p", f"{commit}^", commit)
        message = git(repo, "log", "-1", "--pretty=%B", commit).strip()
        date = datetime.datetime.strptime(
            git(repo, "log", "-1", "--pretty=%cd", commit).strip(), "%a %b %d %H:%M:%S %Y %z")
        parsed = CommitParser().parse_commit(f"{commit}^", commit, diff, message, date, repo_location=None)
        if parsed.get_patch(only_python=False).strip() != diff.strip():
            print(f"{commit}: R2E-Gym's parse does not round-trip; left out")
            continue
        records.append({
            "commit": commit,
            "parsed_commit_content": parsed.model_dump_json(indent=4),
            "gold": parsed.get_patch(test_file=False),
            "files": [d.path for d in parsed.file_diffs],
        })
    if "--write" in sys.argv:
        FIXTURE.write_text(json.dumps(records, indent=1) + "\n")
        print(f"wrote {FIXTURE}: {len(records)} commits")
        return 0
    expected = json.loads(FIXTURE.read_text())
    same = records == expected
    print("R2E-Gym's parsed commits and gold patches equal commits.json" if same else "they differ from commits.json")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
