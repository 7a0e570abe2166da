#!/usr/bin/env bash
# Per-instance time of a Multi-SWE-bench row in swerve beside its anchor, in one run:
#
#   scripts/bench-multi-swe-bench.sh REPOS_DIR ROWS.jsonl INSTANCE_ID
#
# 1. swerve: `swerve tasks check` of the row with an empty cache (the environment built cold:
#    crates fetched and the base built once, then the gold and the empty evaluation).
# 2. the anchor: the row's Multi-SWE-bench commands run natively on the host, as its image
#    build and fix-run do, without Docker (which only adds to them): a fresh clone at the
#    base, `prepare` (the recipe's environment step, `cargo test` for the Rust repositories,
#    with a fresh CARGO_HOME so that the crates are downloaded as the image build downloads
#    them), then the test and fix patches applied and the test command (fix-run.sh).
# Only the Rust repositories' commands are known to the anchor. Prints both timings.
# Needs the network (crates.io) and a built swerve (SWERVE, default target/debug/swerve).
# Not part of CI: it needs fetched repositories.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
[ $# -eq 3 ] || { echo "usage: $0 REPOS_DIR ROWS.jsonl INSTANCE_ID" >&2; exit 2; }
repos="$(cd "$1" && pwd)"; rows="$(realpath "$2")"; id=$3
swerve="${SWERVE:-$root/target/debug/swerve}"
# Under the current directory, not /tmp: the sandbox gives every command a private /tmp.
work="$(mktemp -d -p "$PWD" bench-multi-swe-bench.XXXXXX)"; trap 'rm -rf "$work"' EXIT
grep -F "\"instance_id\": \"$id\"" "$rows" | head -1 > "$work/row.jsonl"
[ -s "$work/row.jsonl" ] || { echo "$rows: no row $id" >&2; exit 1; }
read -r repo sha < <(python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).read()); print(r["org"]+"/"+r["repo"], r["base"]["sha"])' "$work/row.jsonl")

start=$(date +%s.%N)
SWERVE_CACHE_DIR="$work/cache" "$swerve" tasks check "$work/row.jsonl" --repos "$repos" --out "$work/check" >"$work/check.log" 2>&1 || true
swerve_total=$(echo "$(date +%s.%N) - $start" | bc)
status=$(python3 -c 'import json,glob,sys; r=json.load(open(glob.glob(sys.argv[1]+"/checks/*.json")[0])); print(r["status"], " ".join(f"{k}={v:.1f}" for k,v in r["seconds"].items()))' "$work/check")

python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).read()); open(sys.argv[2]+"/test.patch","w").write(r["test_patch"]); open(sys.argv[2]+"/fix.patch","w").write(r["fix_patch"])' "$work/row.jsonl" "$work"
git clone -q "$repos/$repo" "$work/native" && git -C "$work/native" checkout -q "$sha"
export CARGO_HOME="$work/cargo-home"
start=$(date +%s.%N)
(cd "$work/native" && cargo test >"$work/prepare.log" 2>&1 || true)
prepared=$(date +%s.%N)
(cd "$work/native" && git apply "$work/test.patch" "$work/fix.patch" && cargo test >"$work/fix.log" 2>&1 || true)
done_at=$(date +%s.%N)
echo "$id swerve: $swerve_total s in all ($status)"
case "$status" in ok*) ;; *) echo "swerve's check did not pass; its log ends:" >&2; tail -20 "$work/check/checks/"*.json "$work/check.log" >&2 ;; esac
echo "$id anchor: prepare $(echo "$prepared - $start" | bc) s, fix-run $(echo "$done_at - $prepared" | bc) s, $(grep -c '\.\.\. ok' "$work/fix.log") tests passed"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
