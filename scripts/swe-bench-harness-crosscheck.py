#!/usr/bin/env python3
"""Grades recorded test logs of SWE-bench-shaped rows with a harness's own grading code.

SWE-bench, SWE-Gym and SWE-rebench grade by SWE-bench's rule, each with its own copy of the
harness: SWE-bench's package (PyPI `swebench`, or its source), SWE-Gym's fork
(SWE-Gym/SWE-Bench-Fork: `get_logs_eval(log_path)`, the parser chosen by the repository
named in the log's directory), SWE-rebench's fork (SWE-rebench/SWE-bench-fork:
`get_logs_eval(test_spec, log_path)`, the parser named by the row's `install_config`). This
script imports `swebench.harness.grading` from HARNESS (a directory holding the `swebench`
package, e.g. `git archive COMMIT swebench | tar -x -C HARNESS`), lays each log out where the
harness expects it (`<dir>/<instance_id>/test_output.txt`) and writes what
`get_eval_report` says: resolved, and the FAIL_TO_PASS / PASS_TO_PASS successes and
failures.

The logs are `LOGS/<instance_id>.<gold|empty>.log` (the `test_output.txt` of swerve's
evaluations, e.g. from `scripts/family-images.py`); the rows are a JSON-lines file.

Usage: scripts/swe-bench-harness-crosscheck.py HARNESS ROWS LOGS [--write VERDICTS]
Needs the harness's imports (`pip install swebench` brings them).
"""

import argparse
import inspect
import json
import shutil
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace


def make_test_spec(row):
    """The harness's own test spec for the row (its `make_test_spec`: parser, version specs,
    `install_config`), as its evaluation builds it. SWE-rebench's fetches the repository's
    requirement files from GitHub to write the environment script, which grading does not
    read: where that fails, the spec holds the fields grading reads, from the row."""
    import importlib

    for module in ("swebench.harness.test_spec.test_spec", "swebench.harness.test_spec", "swebench.harness.utils"):
        try:
            make = getattr(importlib.import_module(module), "make_test_spec", None)
        except ImportError:
            continue
        if make is None:
            continue
        try:
            return make(row)
        except OSError as error:  # requests' ConnectionError is an OSError
            print(f"{row['instance_id']}: make_test_spec needs the network ({type(error).__name__}); "
                  "the spec is the row's grading fields", file=sys.stderr)
            return SimpleNamespace(
                instance_id=row["instance_id"], repo=row["repo"], version=row.get("version"),
                FAIL_TO_PASS=row["FAIL_TO_PASS"], PASS_TO_PASS=row["PASS_TO_PASS"],
                install_config=row.get("install_config"),
            )
    raise SystemExit("the harness has no make_test_spec")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("harness", type=Path)
    parser.add_argument("rows", type=Path)
    parser.add_argument("logs", type=Path)
    parser.add_argument("--write", type=Path, help="write the verdicts here (JSON)")
    args = parser.parse_args()
    sys.path.insert(0, str(args.harness.resolve()))
    from swebench.harness import grading  # the harness's own code, from HARNESS

    if not str(Path(grading.__file__).resolve()).startswith(str(args.harness.resolve())):
        raise SystemExit(f"imported {grading.__file__}, not the harness under {args.harness}")
    rows = {}
    for line in args.rows.read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            rows[row["instance_id"]] = row
    takes_spec = "test_spec" in inspect.signature(grading.get_logs_eval).parameters
    verdicts = {}
    with tempfile.TemporaryDirectory() as work:
        for log in sorted(args.logs.glob("*.log")):
            instance_id, kind = log.name[: -len(".log")].rsplit(".", 1)
            row = rows[instance_id]
            place = Path(work) / kind / instance_id
            place.mkdir(parents=True)
            shutil.copy(log, place / "test_output.txt")
            spec = make_test_spec(row)
            prediction = {"instance_id": instance_id, "model_name_or_path": kind, "model_patch": "diff"}
            if takes_spec:
                report = grading.get_eval_report(
                    test_spec=spec, prediction=prediction,
                    test_log_path=str(place / "test_output.txt"), include_tests_status=True,
                ) if "test_log_path" in inspect.signature(grading.get_eval_report).parameters else grading.get_eval_report(
                    spec, prediction, str(place / "test_output.txt"), True
                )
            else:
                report = grading.get_eval_report(spec, prediction, str(place / "test_output.txt"), True)
            entry = report[instance_id]
            status = entry.get("tests_status", {})
            verdicts[log.name] = {
                "resolved": entry["resolved"],
                "patch_successfully_applied": entry["patch_successfully_applied"],
                **{
                    f"{key}_{outcome}": sorted(status.get(key, {}).get(outcome, []))
                    for key in ("FAIL_TO_PASS", "PASS_TO_PASS")
                    for outcome in ("success", "failure")
                },
            }
            print(f"{log.name}: resolved {entry['resolved']}")
    if args.write:
        args.write.write_text(json.dumps(verdicts, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
