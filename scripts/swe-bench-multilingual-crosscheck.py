"""Grades the logs in crates/swerve-eval/tests/fixtures/multilingual/ with SWE-bench's own
code, run from a checkout of its source, and compares with verdicts.json, which swerve's test
(`grading_families::swe_bench_multilingual_…`) grades against.

For each row of rows.jsonl (real SWE-bench Multilingual rows, as SWE-agent's batch file
`kabirgh/SWE-agent` instances.jsonl @ 40e6d8f0 holds them) and each log
`INSTANCE_ID.LABEL.log` (the eval log of a `swerve tasks check` of that row: `gold` with the
row's patch, `empty` without, cut to the test output between the eval script's
`>>>>> Start Test Output` and `>>>>> End Test Output` lines, both kept), it runs what SWE-bench
runs on an evaluation log (swebench/harness/grading.py at the given commit):
`get_logs_eval` (the error markers, the cut between the markers, the repository's parser from
`MAP_REPO_TO_PARSER`), `get_eval_tests_report` against the row's FAIL_TO_PASS and PASS_TO_PASS
and `get_resolution_status`. It records the status map and whether the row is resolved.

Where the logs come from: `swerve tasks check` over the rows (this project's recipes from
SWE-bench's constants/{rust,c,javascript}.py at b8d53321, in the evaluation sandbox).

Usage:
    git -C SWE_BENCH_GIT_DIR archive b8d53321 swebench | tar -x -C SRC
    python scripts/swe-bench-multilingual-crosscheck.py SRC [--write]
(in a venv with what importing `swebench.harness.grading` asks for: `pip install requests
beautifulsoup4 ghapi unidiff python-dotenv docker datasets modal tenacity`). Exit status 1
when a verdict differs from verdicts.json (or, with --write, never).
"""

import json
import pathlib
import sys
import tempfile
import types

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "crates/swerve-eval/tests/fixtures/multilingual"


def verdict(grading, row, log_text):
    spec = types.SimpleNamespace(
        repo=row["repo"], version=row["version"], instance_id=row["instance_id"]
    )
    with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as handle:
        handle.write(log_text)
    status_map, found = grading.get_logs_eval(spec, handle.name)
    pathlib.Path(handle.name).unlink()
    if not found:
        return {"statuses": None, "resolved": False, "status": "not found"}
    gold = {"FAIL_TO_PASS": row["FAIL_TO_PASS"], "PASS_TO_PASS": row["PASS_TO_PASS"]}
    report = grading.get_eval_tests_report(status_map, gold)
    status = grading.get_resolution_status(report)
    return {
        "statuses": dict(sorted(status_map.items())),
        "resolved": status == "RESOLVED_FULL",
        "status": status,
    }


def main():
    args = [a for a in sys.argv[1:] if a != "--write"]
    if len(args) != 1:
        sys.exit(__doc__)
    sys.path.insert(0, str(pathlib.Path(args[0]).resolve()))
    from swebench.harness import grading

    rows = {}
    for line in (FIXTURES / "rows.jsonl").read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            rows[row["instance_id"]] = row
    verdicts = {}
    for log in sorted(FIXTURES.glob("*.log")):
        instance_id = log.name.split(".")[0]
        verdicts[log.name] = verdict(grading, rows[instance_id], log.read_text())
    path = FIXTURES / "verdicts.json"
    if "--write" in sys.argv:
        path.write_text(json.dumps(verdicts, indent=1, sort_keys=True) + "\n")
        print(f"wrote {path.relative_to(ROOT)}: {len(verdicts)} logs")
        return
    recorded = json.loads(path.read_text())
    differ = [name for name in verdicts if verdicts[name] != recorded.get(name)]
    for name in differ:
        print(f"{name}: SWE-bench gives {verdicts[name]['status']}, verdicts.json "
              f"{recorded.get(name, {}).get('status')}")
    print(f"{len(verdicts) - len(differ)} of {len(verdicts)} logs as recorded")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
