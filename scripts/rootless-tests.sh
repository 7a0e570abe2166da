#!/usr/bin/env bash
# Runs the sandbox's test binary (every module of crates/swerve-sandbox/tests/sandbox) as an
# unprivileged user (nobody), to check the rootless path: user namespaces, and rlimits where no
# cgroup is writable. Needs root (to switch user) and setpriv; skipped with a message otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null 2>&1; then
  echo "rootless sandbox tests skipped: they need root (to become nobody) and setpriv"
  exit 0
fi
binaries=$(cargo test -p swerve-sandbox --tests --no-run --message-format=json 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("reason") == "compiler-artifact" and message.get("executable") and message["target"]["kind"] == ["test"]:
        print(message["executable"])
')
scratch=$(mktemp -d)
# Host files the adversarial tests must not reach, planted as root: in /root, in a fresh
# top-level directory, and a setuid-root program (tests/sandbox/security.rs).
top_level="/swerve-secret-rootless-$$"
trap 'rm -rf "$scratch" "$top_level" /root/.swerve-secret-rootless-$$' EXIT
chmod 755 "$scratch"
mkdir -m 1777 "$scratch/home"
mkdir -p "$top_level"
echo swerve-planted-secret > "$top_level/secret"
echo swerve-planted-secret > "/root/.swerve-secret-rootless-$$"
mkdir -m 755 "$scratch/setuid"
install -o root -g root -m 4755 "$(command -v id)" "$scratch/setuid/id"
for binary in $binaries; do
  install -m 755 "$binary" "$scratch/"
  echo "rootless: $(basename "$binary")"
  (cd "$scratch/home" && setpriv --reuid=65534 --regid=65534 --clear-groups \
    env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$scratch/home" TMPDIR="$scratch/home" \
    SWERVE_TEST_SECRET_IN_ROOT="/root/.swerve-secret-rootless-$$" \
    SWERVE_TEST_SECRET_TOP_LEVEL="$top_level/secret" SWERVE_TEST_SETUID_ID="$scratch/setuid/id" \
    "$scratch/$(basename "$binary")" --test-threads=2)
done

# The main job end to end as nobody: replay the bundled tasks' demonstrations, grade the
# patches, grade the gold patches; each must resolve 8 of 8. Rust's toolchain usually lives
# under root's home, which nobody cannot enter: a private mount namespace shows it (read-only)
# under a directory nobody can reach.
cargo build --quiet -p swerve-cli --bin swerve
swerve_binary="${CARGO_TARGET_DIR:-$PWD/target}/debug/swerve"
e2e=$(mktemp -d -p /var/tmp)
trap 'rm -rf "$scratch" "$top_level" "$e2e" /root/.swerve-secret-rootless-$$' EXIT
chmod 755 "$e2e"
mkdir -m 1777 "$e2e/home"
mkdir -p "$e2e/toolchains/cargo" "$e2e/toolchains/rustup"
install -m 755 "$swerve_binary" "$e2e/swerve"
cargo_home=${CARGO_HOME:-$HOME/.cargo}
rustup_home=${RUSTUP_HOME:-$HOME/.rustup}
echo "rootless: swerve run --model replay and swerve eval (--gold) on the bundled tasks"
results=$(unshare --mount --propagation private sh -c '
  set -e
  mount --bind "$1" "$3/toolchains/cargo"
  mount --bind "$2" "$3/toolchains/rustup"
  t="$3/toolchains"
  exec setpriv --reuid=65534 --regid=65534 --clear-groups env -i \
    PATH="$t/cargo/bin:/usr/local/bin:/usr/bin:/bin" HOME="$3/home" \
    RUSTUP_HOME="$t/rustup" CARGO_HOME="$t/cargo" SWERVE_CACHE_DIR="$3/home/cache" sh -c "
      set -e
      \"$3/swerve\" run --tasks examples/tasks/tasks.jsonl --model replay --out \"$3/home/run\"
      \"$3/swerve\" eval --tasks examples/tasks/tasks.jsonl --predictions \"$3/home/run/preds.jsonl\" --out \"$3/home/eval\"
      \"$3/swerve\" eval --tasks examples/tasks/tasks.jsonl --gold --out \"$3/home/gold\"
    "
' sh "$cargo_home" "$rustup_home" "$e2e" 2>&1) || { echo "$results"; exit 1; }
echo "$results" | grep -E '^[0-9]+/[0-9]+ (resolved|gold)'
echo "$results" | grep -qx '8/8 resolved; 0 errors; 0 not submitted' \
  || { echo "rootless: the replayed patches did not resolve 8/8"; echo "$results" | tail -20; exit 1; }
echo "$results" | grep -qx '8/8 gold patches resolve their task; 0 errors; 0 not submitted' \
  || { echo "rootless: the gold patches did not resolve 8/8"; echo "$results" | tail -20; exit 1; }

# The reward-hack corpus (crates/swerve-eval/tests/eval/reward_hacks.rs) as nobody: every hack
# graded with and without the guard, on the same real runners, in rootless sandboxes. The
# fixtures are copied where nobody can read them; the toolchains are shown as above.
eval_binary=$(cargo test -p swerve-eval --test eval --no-run --message-format=json 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("reason") == "compiler-artifact" and message.get("executable") and message["target"]["name"] == "eval":
        print(message["executable"])
')
install -m 755 "$eval_binary" "$e2e/eval-tests"
cp -r crates/swerve-eval/tests/fixtures/reward-hacks "$e2e/reward-hacks"
chmod -R a+rX "$e2e/reward-hacks"
echo "rootless: the reward-hack corpus"
results=$(unshare --mount --propagation private sh -c '
  set -e
  mount --bind "$1" "$3/toolchains/cargo"
  mount --bind "$2" "$3/toolchains/rustup"
  t="$3/toolchains"
  cd "$3/home"
  exec setpriv --reuid=65534 --regid=65534 --clear-groups env -i \
    PATH="$t/cargo/bin:/usr/local/bin:/usr/bin:/bin" HOME="$3/home" TMPDIR="$3/home" \
    RUSTUP_HOME="$t/rustup" CARGO_HOME="$t/cargo" SWERVE_REWARD_HACKS="$3/reward-hacks" \
    "$3/eval-tests" reward_hacks:: --skip the_corpus_is_whole --test-threads=2
' sh "$cargo_home" "$rustup_home" "$e2e" 2>&1) || { echo "$results" | tail -80; exit 1; }
echo "$results" | grep -E '^test result'

# Task images as nobody: import the SWE-bench-style test image (scripts/test-images.sh), check
# its whiteouts hide what they delete, and grade the image task's gold patch (must resolve)
# and an empty patch (must not). Layers unpack as nobody's mapped ids; whiteouts become
# overlay xattrs in the user.* namespace.
# The layout's version is test-images.sh's own, so a rebuilt image set is the one tested.
images_version=$(sed -n 's/^VERSION=\([0-9]*\).*/\1/p' scripts/test-images.sh)
layout="${SWERVE_TEST_IMAGES:-/var/cache/swerve-test-images}/layout-v$images_version"
if [ ! -f "$layout/.ready" ]; then
  echo "rootless images skipped: no test image layout at $layout (scripts/test-images.sh builds it)"
  exit 0
fi
images=$(mktemp -d -p /var/tmp)
trap 'rm -rf "$scratch" "$top_level" "$e2e" "$images" /root/.swerve-secret-rootless-$$' EXIT
chmod 755 "$images"
cp -r "$layout" "$images/layout"
chmod -R a+rX "$images/layout"
mkdir -m 1777 "$images/home"
install -m 755 "$swerve_binary" "$images/swerve"
python3 - "$images/tasks.jsonl" <<'PY'
import json, sys
gold = ("diff --git a/calc/__init__.py b/calc/__init__.py\n--- a/calc/__init__.py\n+++ b/calc/__init__.py\n"
        "@@ -4,4 +4,4 @@ def add(a, b):\n \n \n def subtract(a, b):\n-    return a + b\n+    return a - b\n")
test = ("diff --git a/tests/test_calc.py b/tests/test_calc.py\n--- a/tests/test_calc.py\n+++ b/tests/test_calc.py\n"
        "@@ -7,3 +7,7 @@ def test_add():\n \n def test_subtract_small():\n     assert subtract(1, 1) == 0\n"
        "+\n+\n+def test_subtract():\n+    assert subtract(5, 3) == 2\n")
row = {"instance_id": "swerve__calc-1", "repo": "swerve/calc", "base_commit": "", "image": "local/swe:latest",
       "problem_statement": "subtract(a, b) adds its arguments instead of subtracting them.",
       "patch": gold, "test_patch": test, "test_cmd": "python run_pytest.py", "log_parser": "pytest",
       "FAIL_TO_PASS": ["tests/test_calc.py::test_subtract"], "PASS_TO_PASS": ["tests/test_calc.py::test_add"]}
open(sys.argv[1], "w").write(json.dumps(row) + "\n")
PY
chmod 644 "$images/tasks.jsonl"
echo "rootless: an image imported, its whiteouts, gold and empty evaluations in it"
results=$(cd "$images" && setpriv --reuid=65534 --regid=65534 --clear-groups env -i \
  PATH=/usr/local/bin:/usr/bin:/bin HOME="$images/home" SWERVE_CACHE_DIR="$images/home/cache" sh -c '
    set -e
    ./swerve images pull --from layout --name swe local/swe:latest
    ./swerve env exec --tasks tasks.jsonl swerve__calc-1 -- \
      "test ! -e /etc/issue && test ! -e /opt/junk && test -d /testbed/.git && echo whiteouts-hold"
    ./swerve eval --tasks tasks.jsonl --gold --out home/gold
    ./swerve eval --tasks tasks.jsonl --empty --out home/empty || true
  ' 2>&1) || { echo "$results"; exit 1; }
echo "$results" | grep -qx 'whiteouts-hold' \
  || { echo "rootless: the image's whiteouts do not hold"; echo "$results" | tail -20; exit 1; }
echo "$results" | grep -qx '1/1 gold patches resolve their task; 0 errors; 0 not submitted' \
  || { echo "rootless: the image task's gold patch did not resolve"; echo "$results" | tail -20; exit 1; }
python3 - "$images/home/empty/results.json" <<'PY' || { echo "$results" | tail -20; exit 1; }
import json, sys
report = json.load(open(sys.argv[1]))["swerve__calc-1"]
if report.get("resolved") or report.get("error_class"):
    sys.exit(f"rootless: the empty patch must fail the image task without an error: {report}")
print("rootless images: gold resolves, empty fails, whiteouts hold")
PY
