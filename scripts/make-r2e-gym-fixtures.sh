#!/usr/bin/env bash
# Records the R2E-Gym logs of crates/swerve-eval/tests/fixtures/r2e-gym/: real pytest runs,
# the way an R2E-Gym image runs its tests (`pytest -rA r2e_tests`, R2E-Gym's
# docs/ENV_GENERATION.md), over the examples' pager task laid out as R2E-Gym lays out a
# task: the task's tests copied to r2e_tests/ (test_1.py), plus a test the fix does not make
# pass (test_2.py, as R2E-Gym's own sympy example has an XFAIL test recorded FAILED).
#
# Each log is one state of the repository an agent could leave:
#   gold         the gold patch                        (the expected statuses come from it)
#   gold-colour  the gold patch, pytest --color=yes    (ANSI codes and \r are cleaned)
#   base         no patch                              (the fix's tests FAILED)
#   extra-test   gold + a passing test the agent added (one test more than expected)
#   xfail-fixed  gold + the known-failing test passing (a FAILED expectation not met)
#   error        gold + a test module that cannot import (ERROR)
# The row (rows.json) is R2E-Gym's shape, its expected_output_json derived from the gold
# log as R2E-Gym derives it (the statuses at the fix), with R2E-Gym's parser.
#
# Usage: scripts/make-r2e-gym-fixtures.sh PYTHON_WITH_PYTEST R2E_GYM_SOURCE_DIR
set -euo pipefail
python=$1
r2e=$2
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/crates/swerve-eval/tests/fixtures/r2e-gym
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"

row=$(grep '"swerve-examples__pager-1"' "$root/examples/tasks/tasks.jsonl")
git clone -q "$root/examples/repos/swerve-examples/pager.bundle" "$work/pager"
cd "$work/pager"
git checkout -q "$(jq -r .base_commit <<<"$row")"
jq -r .test_patch <<<"$row" | git apply
mkdir r2e_tests
cp tests/test_core.py r2e_tests/test_1.py
cat > r2e_tests/test_2.py <<'EOF'
from pager import Paginator


def test_negative_page_sizes_are_rejected_early():
    # A known limitation the fix does not address: recorded FAILED at the fix.
    assert Paginator([1], per_page=5).num_pages == 0
EOF
git add -A && git -c user.email=x@x -c user.name=x commit -qm tests

run() {  # NAME [PYTEST_OPTIONS...]
    local name=$1
    shift
    "$python" -m pytest -rA "$@" r2e_tests >"$out/pager.$name.log" 2>&1 || true
    git reset -q --hard
    git clean -qfd
}
gold() { jq -r .patch <<<"$row" | git apply; }

run base
gold; run gold
gold; run gold-colour --color=yes
gold
cat > r2e_tests/test_agent.py <<'EOF'
from pager import Paginator


def test_agent_reproduction():
    assert Paginator(range(21), per_page=10).num_pages == 3
EOF
run extra-test
gold
sed -i 's/        if not self.items:/        if self.count == 1 and self.per_page == 5:\n            return 0\n        if not self.items:/' pager/core.py
run xfail-fixed
gold
printf 'import pager.missing_module\n\ndef test_x():\n    pass\n' >r2e_tests/test_3.py
run error

# The row, in R2E-Gym's shape; expected statuses from the gold log by R2E-Gym's parser.
PYTHONPATH="$r2e/src/r2egym/repo_analysis" "$python" - "$out" "$row" \
    "$r2e/src/r2egym/repo_analysis/execution_log_parser.py" <<'EOF'
import json, pathlib, re, sys
from execution_log_parser import parse_log_pytest
out = pathlib.Path(sys.argv[1])
task = json.loads(sys.argv[2])
log = re.sub(r"\x1b\[[0-9;]*m|\r", "", (out / "pager.gold.log").read_text())
row = {
    "repo_name": "pager",
    "docker_image": "namanjain12/pager_final:68cc8fca77519d9178a35d647a21e4aacb8bb4fd",
    "commit_hash": task["base_commit"],
    "problem_statement": task["problem_statement"],
    "expected_output_json": json.dumps(parse_log_pytest(log), indent=4),
}
rows = [row]
# R2E-Gym's own recorded sympy log (the example in execution_log_parser.py), and its row.
import ast
source = pathlib.Path(sys.argv[3]).read_text()
for node in ast.walk(ast.parse(source)):
    if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "log":
        sympy_log = node.value.value
(out / "sympy.gold.log").write_text(sympy_log)
rows.append({
    "repo_name": "sympy",
    "docker_image": "namanjain12/sympy_final:003029fe443c6c234775a2517f0d40b9d62dc40b",
    "commit_hash": "003029fe443c6c234775a2517f0d40b9d62dc40b",
    "problem_statement": "Indexed objects: the log of R2E-Gym's execution_log_parser.py example (R2E-Gym commit 69bc9535).",
    "expected_output_json": json.dumps(parse_log_pytest(sympy_log), indent=4),
})
(out / "rows.json").write_text(json.dumps(rows, indent=2) + "\n")
EOF
echo "wrote $out"
