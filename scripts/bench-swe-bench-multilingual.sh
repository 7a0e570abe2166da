#!/usr/bin/env bash
# Per-instance time of a SWE-bench Multilingual row in swerve beside its anchor, in one run:
#
#   scripts/bench-swe-bench-multilingual.sh REPOS_DIR ROWS.jsonl INSTANCE_ID
#
# 1. swerve: `swerve tasks check` of the row with an empty cache (the environment built cold,
#    then the gold and the empty evaluation).
# 2. the anchor: the row's SWE-bench commands run natively on the host, as its image build and
#    eval script run them, without Docker (which only adds to them): a fresh clone at the base
#    (with jq's oniguruma submodule from REPOS_DIR/kkos/oniguruma), the spec's `install` and
#    `build` steps (the recipe's `pre_install` and `install`, from the shipped recipes.toml),
#    with a fresh CARGO_HOME and target directory so crates are downloaded as the image build
#    downloads them; then the test patch and the gold patch, `build` again, and the test
#    command. One evaluation only (gold), where swerve's check makes two.
# Prints both timings. Needs the network (crates.io, npm) and a built swerve (SWERVE, default
# target/debug/swerve). Not part of CI: it needs fetched repositories.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
[ $# -eq 3 ] || { echo "usage: $0 REPOS_DIR ROWS.jsonl INSTANCE_ID" >&2; exit 2; }
repos="$(cd "$1" && pwd)"; rows="$(realpath "$2")"; id=$3
swerve="${SWERVE:-$root/target/debug/swerve}"
# Under the current directory, not /tmp: the sandbox gives every command a private /tmp.
work="$(mktemp -d -p "$PWD" bench-swe-bench-multilingual.XXXXXX)"; trap 'rm -rf "$work"' EXIT
# SWE-agent's batch keys dropped: its image_name names SWE-bench's local build of the image.
python3 -c 'import json, sys
for line in open(sys.argv[1]):
    row = json.loads(line)
    if row["instance_id"] == sys.argv[2]:
        row.pop("image_name", None); row.pop("repo_name", None)
        print(json.dumps(row)); break' "$rows" "$id" > "$work/row.jsonl"
[ -s "$work/row.jsonl" ] || { echo "$rows: no row $id" >&2; exit 1; }

start=$(date +%s.%N)
SWERVE_CACHE_DIR="$work/cache" "$swerve" tasks check "$work/row.jsonl" --repos "$repos" --out "$work/check" >"$work/check.log" 2>&1 || true
swerve_total=$(echo "$(date +%s.%N) - $start" | bc)
status=$(python3 -c 'import json,glob,sys; r=json.load(open(glob.glob(sys.argv[1]+"/checks/*.json")[0])); print(r["status"], " ".join(f"{k}={v:.1f}" for k,v in r["seconds"].items()))' "$work/check")

# The row's patches and its recipe's steps, as shell lines.
python3 - "$work" "$root/crates/swerve-eval/data/recipes.toml" <<'PY'
import json, sys, tomllib
work, recipes = sys.argv[1], sys.argv[2]
row = json.loads(open(f"{work}/row.jsonl").read())
open(f"{work}/test.patch", "w").write(row["test_patch"])
open(f"{work}/gold.patch", "w").write(row["patch"])
entry = [r for r in tomllib.load(open(recipes, "rb"))["recipe"]
         if r["repo"] == row["repo"] and row["version"] in r["versions"]][-1]
env = {k: v for k, v in entry.get("env", {}).items() if k not in ("CARGO_HOME", "CARGO_TARGET_DIR")}
exports = "".join(f"export {k}='{v}'\n" for k, v in env.items())
open(f"{work}/vars", "w").write(f"repo={row['repo']}\nsha={row['base_commit']}\n")
open(f"{work}/setup.sh", "w").write(exports + "".join(f"{c}\n" for c in entry.get("pre_install", []))
                                    + (entry.get("install", "") + "\n"))
open(f"{work}/eval.sh", "w").write(exports + "git apply test.patch gold.patch\n"
                                   + (entry.get("install", "") + "\n") + entry["test_cmd"] + "\n")
PY
. "$work/vars"
git clone -q "$repos/$repo" "$work/native" && git -C "$work/native" checkout -q "$sha"
if [ -f "$work/native/.gitmodules" ] && grep -q oniguruma "$work/native/.gitmodules"; then
  onig=$(git -C "$work/native" ls-tree HEAD modules/oniguruma | awk '{print $3}')
  rmdir "$work/native/modules/oniguruma" 2>/dev/null || true
  git clone -q "$repos/kkos/oniguruma" "$work/native/modules/oniguruma"
  git -C "$work/native/modules/oniguruma" checkout -q "$onig"
fi
cp "$work/test.patch" "$work/gold.patch" "$work/native/"
export CARGO_HOME="$work/cargo-home" CARGO_TARGET_DIR="$work/target"
start=$(date +%s.%N)
(cd "$work/native" && bash "$work/setup.sh" >"$work/setup.log" 2>&1 || true)
prepared=$(date +%s.%N)
(cd "$work/native" && bash "$work/eval.sh" >"$work/eval.log" 2>&1 || true)
done_at=$(date +%s.%N)
echo "$id swerve: $swerve_total s in all ($status)"
case "$status" in ok*) ;; *) echo "swerve's check did not pass; its log ends:" >&2; tail -20 "$work/check/checks/"*.json "$work/check.log" >&2 ;; esac
echo "$id anchor: setup $(echo "$prepared - $start" | bc) s, gold evaluation $(echo "$done_at - $prepared" | bc) s; its log ends:"
tail -3 "$work/eval.log"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
