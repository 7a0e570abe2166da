"""Grades the logs in crates/swerve-eval/tests/fixtures/multi-swe-bench/ with Multi-SWE-bench's
own code, run from a checkout of its source, and compares with verdicts.json, which swerve's
test (`grading_families::multi_swe_bench_…`) grades against.

For each row of rows.json (real Multi-SWE-bench rows, their patches and texts cut) and each
log `INSTANCE_ID.LABEL.log` (the test output of a swerve evaluation of that row: `gold` with
the row's fix, `empty` without), it runs what Multi-SWE-bench runs on a prediction's
fix-run log: the `parse_log` of the row's `Instance` (`Instance.create`), then
`Report(run_result, test_patch_result, parsed)` and `gen_eval_reports`' check that the
report is valid and holds every test of the row's p2p/f2p/s2p/n2p_tests in its class. It
records the parsed sets and whether the prediction resolves (and why not).

Where the logs come from: `swerve tasks check` over the rows (2026-11-29, this project's
recipes for Multi-SWE-bench's repositories: `cargo test` for tokio-rs/bytes, `make check`
for jqlang/jq, cmake and `ctest` for fmtlib/fmt, in the evaluation sandbox), each cut to
the eval script's test output (between its `>>>>> Start Test Output` and
`>>>>> End Test Output` lines, kept).

Usage:
    python scripts/multi-swe-bench-crosscheck.py MULTI_SWE_BENCH_SOURCE_DIR [--write]
(with `pip install dataclasses_json unidiff` in the interpreter). Exit status 1 when a
verdict differs from verdicts.json (or, with --write, never).
"""

import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "crates/swerve-eval/tests/fixtures/multi-swe-bench"
CLASSES = ("p2p_tests", "f2p_tests", "s2p_tests", "n2p_tests")


def verdict(harness, row, log):
    PullRequest, Config, Instance, Report, TestResult = harness
    pr = PullRequest.from_dict({**row, "fix_patch": row.get("fix_patch", ""),
                                "test_patch": row.get("test_patch", "")})
    instance = Instance.create(pr, Config(need_clone=False, global_env=None, clear_env=False))
    try:
        parsed = instance.parse_log(log)
    except ValueError as error:
        return {"sets": None, "resolved": False, "reason": f"parse_log: {error}"}
    sets = {key: sorted(getattr(parsed, key)) for key in ("passed_tests", "failed_tests", "skipped_tests")}

    def result(run):
        return TestResult(
            passed_count=len(run["passed_tests"]), failed_count=len(run["failed_tests"]),
            skipped_count=len(run["skipped_tests"]), passed_tests=set(run["passed_tests"]),
            failed_tests=set(run["failed_tests"]), skipped_tests=set(run["skipped_tests"]))

    report = Report(org=row["org"], repo=row["repo"], number=row["number"],
                    run_result=result(row["run_result"]),
                    test_patch_result=result(row["test_patch_result"]), fix_patch_result=parsed)
    if not report.valid:
        return {"sets": sets, "resolved": False, "reason": report.error_msg.split(".")[0]}
    for key in CLASSES:
        missing = sorted(set(row[key]) - set(getattr(report, key)))
        if missing:
            return {"sets": sets, "resolved": False, "reason": f"{key} missing {missing[:3]}"}
    return {"sets": sets, "resolved": True, "reason": ""}


def main():
    args = [a for a in sys.argv[1:] if a != "--write"]
    if len(args) != 1:
        sys.exit(__doc__)
    sys.path.insert(0, str(pathlib.Path(args[0]).resolve()))
    import multi_swe_bench.harness.repos  # noqa: F401  (registers the instances)
    from multi_swe_bench.harness.image import Config
    from multi_swe_bench.harness.instance import Instance
    from multi_swe_bench.harness.pull_request import PullRequest
    from multi_swe_bench.harness.report import Report
    from multi_swe_bench.harness.test_result import TestResult
    harness = (PullRequest, Config, Instance, Report, TestResult)

    rows = {row["instance_id"]: row for row in json.loads((FIXTURES / "rows.json").read_text())}
    verdicts = {}
    for log in sorted(FIXTURES.glob("*.log")):
        instance_id = log.name.split(".")[0]
        verdicts[log.name] = verdict(harness, rows[instance_id], log.read_text())
    path = FIXTURES / "verdicts.json"
    if "--write" in sys.argv:
        path.write_text(json.dumps(verdicts, indent=1, sort_keys=True) + "\n")
        print(f"wrote {path.relative_to(ROOT)}: {len(verdicts)} logs")
        return
    recorded = json.loads(path.read_text())
    differ = [name for name in verdicts if verdicts[name] != recorded.get(name)]
    for name in differ:
        print(f"{name}: Multi-SWE-bench gives {verdicts[name]['resolved']} ({verdicts[name]['reason']}), "
              f"verdicts.json {recorded.get(name, {}).get('resolved')}")
    print(f"{len(verdicts) - len(differ)} of {len(verdicts)} logs as recorded")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
