#!/usr/bin/env bash
# No future state in the agent's sandbox (issue 26), checked on real SWE-bench rows whose
# repositories are in REPOS_DIR (bare git directories laid out as REPOS_DIR/owner/name):
#
#   scripts/scrub-check.sh REPOS_DIR [TASK_FILE…]
#
# Without task files it takes every row of ../shared/data/swe-bench/*.json (override the
# directory with SWERVE_REAL_DATA). For each row it computes the gold patch's post-image
# blobs on the host (the base's files with the patch applied, hashed, never written to the
# repository), then opens the task's workspace as a rollout does (`swerve env exec`) and,
# inside the sandbox, asks git for those blobs (`git cat-file -e`) and for every commit in
# the object store (`git cat-file --batch-all-objects`) that `git rev-list --all` (HEAD and
# the kept tags) does not reach. A post-image blob that a commit of the base's own history
# holds (a patch that restores a file's older content) is the past, not the future: it is
# counted apart. The rows are stripped to what a workspace needs (no
# environment is built: the check is about the repository) and a recipe table without
# environments is used.
#
# Prints one line per row and a total; exits 1 if any sandbox holds a post-image blob or an
# unreachable commit. Settings: SWERVE (the binary; default: a debug build of this
# checkout), SWERVE_CACHE_DIR (default: a fresh temporary cache), OUT (scratch directory).
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
out="${OUT:-$(mktemp -d)}"
mkdir -p "$out"
cache="${SWERVE_CACHE_DIR:-$out/cache}"
if [ -z "${SWERVE:-}" ]; then
    cargo build -q -p swerve-cli --manifest-path "$root/Cargo.toml"
    SWERVE="${CARGO_TARGET_DIR:-$root/target}/debug/swerve"
fi

# The rows whose repository is in REPOS_DIR, each instance once, stripped to what a workspace
# needs; a recipe table giving each of their repositories no environment; and, per row, the
# gold patch's post-image blobs.
python3 - "$repos" "$out" "${files[@]}" <<'EOF'
import json, os, subprocess, sys, tempfile
repos, out, files = sys.argv[1], sys.argv[2], sys.argv[3:]
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
        if not os.path.isdir(os.path.join(repos, row["repo"])):
            missing.setdefault(row["repo"], []).append(row["instance_id"])
        elif row["instance_id"] not in seen:
            seen.add(row["instance_id"])
            kept.append(row)
for repo, ids in sorted(missing.items()):
    print(f"left out (no {repo} in REPOS_DIR): {' '.join(ids)}", file=sys.stderr)

def post_image_blobs(row):
    """The blob ids of the files the gold patch leaves, computed in a scratch directory."""
    git = os.path.join(repos, row["repo"])
    with tempfile.TemporaryDirectory() as scratch:
        patch = os.path.join(scratch, "gold.diff")
        with open(patch, "w") as f:
            f.write(row["patch"])
        tree = os.path.join(scratch, "tree")
        os.mkdir(tree)
        # The base's files as a checkout has them (`git archive` would expand export-subst
        # files such as a versioneer `_version.py`, which the patch then does not fit).
        checkout = dict(os.environ, GIT_INDEX_FILE=os.path.join(scratch, "index"))
        for step in (["read-tree", row["base_commit"]], ["checkout-index", "--all", "--force"]):
            done = subprocess.run(["git", "--git-dir", git, "--work-tree", tree, *step],
                                  capture_output=True, env=checkout)
            if done.returncode != 0:
                return None, "its base cannot be read from REPOS_DIR: " + done.stderr.decode(errors="replace").strip().splitlines()[-1]
        applied = subprocess.run(["git", "apply", "--whitespace=nowarn", patch], cwd=tree,
                                 capture_output=True, text=True)
        if applied.returncode != 0:
            # SWE-bench's fallback (a gold patch with a "Binary files differ" entry, say)
            applied = subprocess.run(["patch", "--batch", "--fuzz=5", "-p1", "-i", patch],
                                     cwd=tree, capture_output=True, text=True)
        if applied.returncode != 0:
            return None, "the gold patch does not apply to the base: " + applied.stderr.strip().splitlines()[-1]
        paths = subprocess.run(["git", "apply", "--numstat", "-z", patch], cwd=tree,
                               check=True, capture_output=True).stdout.decode().split("\0")
        blobs = []
        for entry in paths:
            name = entry.split("\t", 2)[-1] if "\t" in entry else ""
            if name and os.path.isfile(os.path.join(tree, name)):
                blobs.append(subprocess.run(["git", "hash-object", os.path.join(tree, name)],
                                            check=True, capture_output=True, text=True).stdout.strip())
        return blobs, None

fields = ("instance_id", "repo", "base_commit", "patch", "problem_statement", "version")
with open(os.path.join(out, "tasks.jsonl"), "w") as tasks, open(os.path.join(out, "blobs.tsv"), "w") as table:
    for row in kept:
        blobs, why = post_image_blobs(row)
        if blobs is None:
            print(f"{row['instance_id']}: left out: {why}", file=sys.stderr)
            continue
        tasks.write(json.dumps({key: row[key] for key in fields if key in row}) + "\n")
        table.write(f"{row['instance_id']}\t{row['repo']}\t{' '.join(blobs)}\n")
with open(os.path.join(out, "recipes.toml"), "w") as recipes:
    for repo in sorted({row["repo"] for row in kept}):
        recipes.write(f'[[recipe]]\nrepo = "{repo}"\nversions = ["*"]\ntest_cmd = "true"\n\n')
EOF

# Inside the sandbox: the post-image blobs present, then the object store's commits, then
# those `git rev-list --all` reaches.
inside='for blob in $BLOBS; do git cat-file -e $blob 2>/dev/null || continue; past=$(git log --all --format=%h -1 --find-object=$blob); if [ -n "$past" ]; then echo "past $blob $past"; else echo "present $blob"; fi; done;
git cat-file --batch-all-objects --batch-check="%(objecttype) %(objectname)" | sed -n "s/^commit //p" | sort >"$HOME/stored";
git rev-list --all | sort >"$HOME/reachable";
echo "stored $(wc -l <"$HOME/stored") reachable $(wc -l <"$HOME/reachable") unreachable $(comm -23 "$HOME/stored" "$HOME/reachable" | wc -l)"'

leaked=0
errors=0
total=0
while IFS=$'\t' read -r id repo blobs; do
    total=$((total + 1))
    in_source=0
    for blob in $blobs; do
        git --git-dir "$repos/$repo" cat-file -e "$blob" 2>/dev/null && in_source=$((in_source + 1))
    done
    report=$("$SWERVE" --cache-dir "$cache" --repos "$repos" --set run.recipes="\"$out/recipes.toml\"" \
        env exec --tasks "$out/tasks.jsonl" --timeout 600 "$id" -- "BLOBS='$blobs'; $inside" \
        2>"$out/$id.stderr") || {
        echo "$id: not checked: swerve env exec failed (see $out/$id.stderr)"
        errors=$((errors + 1))
        continue
    }
    present=$(grep -c '^present ' <<<"$report" || true)
    past=$(grep -c '^past ' <<<"$report" || true)
    counts=$(grep '^stored ' <<<"$report")
    unreachable=${counts##* }
    echo "$id: post-image blobs $(wc -w <<<"$blobs"), in the source $in_source, in the sandbox $present (and $past that the base's own history holds: the patch restores an older content); commits $counts"
    if [ "$present" != 0 ] || [ "$unreachable" != 0 ]; then
        leaked=$((leaked + 1))
    fi
done <"$out/blobs.tsv"
echo "rows: $total; future state in the sandbox: $leaked; not checked: $errors"
[ "$leaked" = 0 ] && [ "$errors" = 0 ]
