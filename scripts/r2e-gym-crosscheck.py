"""Grades the recorded R2E-Gym logs (crates/swerve-eval/tests/fixtures/r2e-gym/) with
R2E-Gym's own reward code, run from a checkout of its source, and compares the rewards
with verdicts.json, which swerve's test (`grading_families::r2e_gym_...`) grades against.

R2E-Gym's `DockerRuntime._calculate_reward_r2e`, `run_tests` and `parse_logs`
(src/r2egym/agenthub/runtime/docker.py) are taken from the source as written and run on a
stand-in runtime whose `run` returns the recorded log (the module itself needs Docker and
SWE-bench to import); `parse_log_fn` and `decolor_dict_keys` come from
src/r2egym/repo_analysis/execution_log_parser.py. R2E-Gym maps every repository it supports
to `parse_log_pytest`; rows of other repositories (the examples' pager) use that parser
too. A comparison that raises in R2E-Gym's code (a parsed test missing from the
expectations with equal counts: a KeyError) is a reward of 0, as the caller's failure.

Usage:
    python scripts/r2e-gym-crosscheck.py R2E_GYM_SOURCE_DIR [--write]
Exit status 1 when a reward differs from verdicts.json (or, with --write, never).
"""

import ast
import json
import pathlib
import re
import sys
import types

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "crates/swerve-eval/tests/fixtures/r2e-gym"
METHODS = ("_calculate_reward_r2e", "run_tests", "parse_logs")


def r2e_gym_methods(source_dir):
    sys.path.insert(0, str(source_dir / "src/r2egym/repo_analysis"))
    import execution_log_parser

    docker_py = (source_dir / "src/r2egym/agenthub/runtime/docker.py").read_text()
    module = ast.parse(docker_py)
    runtime = next(n for n in module.body if isinstance(n, ast.ClassDef) and n.name == "DockerRuntime")
    namespace = {
        "re": re,
        "json": json,
        "parse_log_fn": execution_log_parser.parse_log_fn,
        "decolor_dict_keys": execution_log_parser.decolor_dict_keys,
    }
    for node in runtime.body:
        if isinstance(node, ast.FunctionDef) and node.name in METHODS:
            node.decorator_list = []
            code = compile(ast.Module(body=[node], type_ignores=[]), str(source_dir / "docker.py"), "exec")
            exec(code, namespace)
    return {name: namespace[name] for name in METHODS}


class Logger:
    def info(self, *args):
        pass

    error = warning = debug = info


def reward(methods, row, log):
    runtime = types.SimpleNamespace(
        ds=row,
        repo_name=row["repo_name"] if row["repo_name"] in SUPPORTED else "sympy",
        swebench_verified=False,
        alt_path="/root",
        logger=Logger(),
        run=lambda command, timeout=None: (log, "0"),
    )
    for name in METHODS:
        setattr(runtime, name, types.MethodType(methods[name], runtime))
    try:
        return runtime._calculate_reward_r2e()
    except KeyError:
        return 0.0


SUPPORTED = {"sympy", "pandas", "pillow", "scrapy", "pyramid", "tornado", "datalad",
             "aiohttp", "coveragepy", "numpy", "orange3"}


def main():
    source_dir = pathlib.Path(sys.argv[1])
    write = "--write" in sys.argv[2:]
    methods = r2e_gym_methods(source_dir)
    rows = {row["repo_name"]: row for row in json.loads((FIXTURES / "rows.json").read_text())}
    verdicts = {}
    for log_path in sorted(FIXTURES.glob("*.log")):
        row = rows[log_path.name.split(".")[0]]
        verdicts[log_path.name] = reward(methods, row, log_path.read_text())
    recorded_path = FIXTURES / "verdicts.json"
    if write:
        recorded_path.write_text(json.dumps(verdicts, indent=2) + "\n")
        print(json.dumps(verdicts, indent=2))
        return 0
    recorded = json.loads(recorded_path.read_text())
    differ = {name: (verdicts.get(name), recorded.get(name)) for name in set(verdicts) | set(recorded)
              if verdicts.get(name) != recorded.get(name)}
    for name in sorted(verdicts):
        print(f"{name}: R2E-Gym {verdicts[name]}, recorded {recorded.get(name)}")
    if differ:
        print(f"differ: {differ}")
        return 1
    print(f"{len(verdicts)} logs: R2E-Gym's rewards equal verdicts.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
