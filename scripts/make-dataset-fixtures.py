"""Writes the hub fixtures of crates/swerve-datasets/tests/fixtures/hub/ with the real
`datasets` package: each dataset's Parquet data file, as `datasets` writes it
(`Dataset.to_parquet`), and beside the fixtures its JSON-lines export (`Dataset.to_json`),
which the tests compare row for row with what swerve reads from the Parquet file.

The rows are real:
  princeton-nlp/SWE-bench_Verified  SWE-bench rows (Lite test and the 2024-03-22 debug set,
                                    /work/shared/data/swe-bench), test lists JSON-encoded as
                                    on the hub
  nebius/SWE-rebench                SWE-rebench rows (swe-rebench-demo.json): nested
                                    `meta` and `install_config` objects, lists
  SWE-bench/SWE-smith               SWE-smith's row pandas-dev__pandas.95280573.pr_53652
                                    (SWE-smith's tests/test_logs, commit cf2e649d)
  swerve-examples/tasks             this repository's examples/tasks/tasks.jsonl

Usage (needs `pip install datasets pyarrow`):
    python scripts/make-dataset-fixtures.py SHARED_DATA_DIR SWE_SMITH_ROW_JSON
"""

import json
import pathlib
import sys

import datasets

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "crates/swerve-datasets/tests/fixtures"

SWE_BENCH_COLUMNS = [
    "repo", "instance_id", "base_commit", "patch", "test_patch", "problem_statement",
    "hints_text", "created_at", "version", "FAIL_TO_PASS", "PASS_TO_PASS",
    "environment_setup_commit",
]


def hub_form(row):
    """A SWE-bench row as the hub stores it: test lists as JSON-encoded strings."""
    row = {key: row[key] for key in SWE_BENCH_COLUMNS}
    for key in ("FAIL_TO_PASS", "PASS_TO_PASS"):
        row[key] = json.dumps(row[key])
    return row


def write(repo, split, rows):
    dataset = datasets.Dataset.from_list(rows)
    data = OUT / "hub" / repo / "data" / f"{split}-00000-of-00001.parquet"
    data.parent.mkdir(parents=True, exist_ok=True)
    dataset.to_parquet(str(data))
    export = OUT / "exports" / (repo.replace("/", "__") + f".{split}.jsonl")
    export.parent.mkdir(parents=True, exist_ok=True)
    dataset.to_json(str(export))
    readme = OUT / "hub" / repo / "README.md"
    readme.write_text(f"---\nlicense: mit\n---\n# {repo}\n\nA swerve test fixture.\n")
    print(f"{repo} {split}: {len(rows)} rows -> {data.relative_to(ROOT)}")


def main():
    shared = pathlib.Path(sys.argv[1])
    smith_row = json.loads(pathlib.Path(sys.argv[2]).read_text())
    swe_bench = []
    for name in ("swe-bench-lite-test.json", "debug_20240322.json"):
        swe_bench += json.loads((shared / "swe-bench" / name).read_text())
    write("princeton-nlp/SWE-bench_Verified", "test", [hub_form(row) for row in swe_bench])
    write("nebius/SWE-rebench", "test", json.loads((shared / "swe-bench/swe-rebench-demo.json").read_text()))
    write("SWE-bench/SWE-smith", "train", [smith_row])
    # Row 2 without its problem statement (null), for the error naming row and field.
    broken = [hub_form(row) for row in swe_bench[:3]]
    broken[1]["problem_statement"] = None
    path = OUT / "broken" / "no-problem-statement.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    datasets.Dataset.from_list(broken).to_parquet(str(path))
    examples = [json.loads(line) for line in (ROOT / "examples/tasks/tasks.jsonl").read_text().splitlines() if line.strip()]
    write("swerve-examples/tasks", "test", examples)


if __name__ == "__main__":
    main()
