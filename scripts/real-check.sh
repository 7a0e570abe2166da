#!/usr/bin/env bash
# The real-world check (issue 15): `swerve tasks check` over real SWE-bench rows whose
# repositories are in REPOS_DIR (bare git directories laid out as REPOS_DIR/owner/name).
#
#   scripts/real-check.sh REPOS_DIR [TASK_FILE…]
#
# Without task files it takes every row of ../shared/data/swe-bench/*.json (override the
# directory with SWERVE_REAL_DATA). Rows whose repository is not in REPOS_DIR are left out
# (and listed); a repeated instance id is checked once. Environments are built from PyPI on
# first use (network for the builds only; the tests run without it).
#
# Writes $OUT (default real-check/): tasks.jsonl (the rows checked), check.json (one record
# per task: status, reason, gold resolved, empty fails, seconds per phase), logs/ and the
# table with its summary per repository (table.txt). Settings: OUT, SWERVE (the binary;
# default: a release build of this checkout), SWERVE_CACHE_DIR, TIMEOUT (seconds per test
# run, default 900), WORKERS (1), RESUME (set: keep the tasks an interrupted run checked).
#
# Not part of CI: CI cannot fetch repositories. Never commit fetched code.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ $# -lt 1 ]; then
    echo "usage: $0 REPOS_DIR [TASK_FILE…]" >&2
    exit 2
fi
repos="$(cd "$1" && pwd)"
shift
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
    data="${SWERVE_REAL_DATA:-$root/../shared/data/swe-bench}"
    files=("$data"/*.json)
fi
out="${OUT:-real-check}"
mkdir -p "$out"
if [ -z "${SWERVE:-}" ]; then
    cargo build --release -q -p swerve-cli --manifest-path "$root/Cargo.toml"
    SWERVE="${CARGO_TARGET_DIR:-$root/target}/release/swerve"
fi

# The rows whose repository is in REPOS_DIR, each instance once, as JSON lines.
python3 - "$repos" "$out/tasks.jsonl" "${files[@]}" <<'EOF'
import json, os, sys
repos, target, files = sys.argv[1], sys.argv[2], sys.argv[3:]
seen, kept, missing = set(), [], {}
for path in files:
    with open(path) as f:
        text = f.read()
    try:
        rows = json.loads(text)
        rows = rows if isinstance(rows, list) else list(rows.values()) if "instance_id" not in rows else [rows]
    except json.JSONDecodeError:
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    for row in rows:
        repo = row["repo"]
        if not os.path.isdir(os.path.join(repos, repo)):
            missing.setdefault(repo, []).append(row["instance_id"])
            continue
        if row["instance_id"] in seen:
            continue
        seen.add(row["instance_id"])
        kept.append(row)
with open(target, "w") as f:
    for row in kept:
        f.write(json.dumps(row) + "\n")
for repo, ids in sorted(missing.items()):
    print(f"left out (no {repo} in {repos}): {', '.join(ids)}", file=sys.stderr)
print(f"{len(kept)} tasks from {len(files)} files", file=sys.stderr)
if not kept:
    sys.exit(1)
EOF

status=0
resume=()
if [ -n "${RESUME:-}" ]; then
    resume=(--resume)
fi
"$SWERVE" --repos "$repos" tasks check "$out/tasks.jsonl" --out "$out" "${resume[@]}" \
    --timeout "${TIMEOUT:-900}" --workers "${WORKERS:-1}" | tee "$out/table.txt" || status=$?
echo "check.json, logs and table.txt in $out" >&2
exit $status
