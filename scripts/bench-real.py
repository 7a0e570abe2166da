#!/usr/bin/env python3
"""Real-task timings for BENCHMARKS.md: each instance's evaluation phases (from a
`swerve tasks check` directory, environment cached) beside the bare test command, and cold
environment builds with uv and with pip.

    scripts/bench-real.py warm CHECK_DIR TASKS REPOS      # after a warm `tasks check`
    scripts/bench-real.py cold TASKS REPOS ID…            # fresh caches, uv then pip

`warm` runs, per instance whose check was ok, REPEAT (default 3) pairs of a gold evaluation
(`swerve eval --gold --no-cache`; the sum of its report's phases) and the bare test command
(the line after the start marker in logs/gold/<id>/eval.sh, run in a fresh workspace with the
gold and test patches applied, timed inside the sandbox), and prints the medians and the time
beyond the tests. `cold` times `swerve env exec ID
-- true` in a new cache per installer (SWERVE_ENV_INSTALLER=pip for pip): the dependencies,
the commit layer and one workspace. SWERVE names the binary (default `swerve`).
"""

import json
import os
import shlex
import subprocess
import sys
import tempfile
import time

SWERVE = os.environ.get("SWERVE", "swerve")


def rows(path):
    text = open(path).read()
    try:
        data = json.loads(text)
        return data if isinstance(data, list) else [data]
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]


def bare_seconds(task, check_dir, tasks, repos, env):
    script = open(os.path.join(check_dir, "logs", "gold", task["instance_id"], "eval.sh")).read()
    lines = script.splitlines()
    command = lines[lines.index(": '>>>>> Start Test Output'") + 1]
    patches = (task.get("patch") or "") + "\n" + (task.get("test_patch") or "")
    probe = (
        "cat > /tmp/p.diff <<'SWERVE_EOF'\n" + patches + "\nSWERVE_EOF\n"
        "git apply /tmp/p.diff >/dev/null 2>&1; "
        + "".join(f"export {line[len('export '):]}; " for line in lines if line.startswith("export "))
        + "s=$(date +%s.%N); " + command + " >/dev/null 2>&1; e=$(date +%s.%N); "
        "python3 -c \"print(round($e - $s, 3))\""
    )
    out = subprocess.run(
        [SWERVE, "--repos", repos, "env", "exec", "--tasks", tasks, "--timeout", "1800",
         task["instance_id"], "--", probe],
        capture_output=True, text=True, env=env,
    )
    try:
        return float(out.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None


def gold_seconds(instance, tasks, repos, env):
    """One `swerve eval --gold --no-cache` of `instance`: the sum of its report's phases
    (workspace, environment, patch, eval script, parsing), or None if it did not resolve."""
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as out:
        subprocess.run(
            [SWERVE, "--repos", repos, "eval", "--tasks", tasks, "--gold", "--no-cache",
             "--out", out, instance],
            capture_output=True, text=True, env=env,
        )
        try:
            report = json.load(open(os.path.join(out, "results.json")))[instance]
        except (OSError, KeyError, json.JSONDecodeError):
            return None
        if not report.get("resolved"):
            return None
        return sum(value for value in report["timings"].values() if value)


def median(values):
    values = sorted(v for v in values if v is not None)
    return values[len(values) // 2] if values else None


def warm(check_dir, tasks, repos):
    """Per instance, REPEAT (default 3) pairs of a gold evaluation and the bare test command,
    run one after the other so both see the same machine; the medians and their difference."""
    checks = json.load(open(os.path.join(check_dir, "check.json")))
    by_id = {row["instance_id"]: row for row in rows(tasks)}
    repeat = int(os.environ.get("REPEAT", "3"))
    env = dict(os.environ)
    print("| instance | gold evaluation (s) | bare test command (s) | beyond the tests (s) |")
    print("|---|---:|---:|---:|")
    for check in checks:
        if check.get("status") != "ok":
            continue
        task = by_id[check["instance_id"]]
        golds, bares = [], []
        for _ in range(repeat):
            golds.append(gold_seconds(task["instance_id"], tasks, repos, env))
            bares.append(bare_seconds(task, check_dir, tasks, repos, env))
        gold, bare = median(golds), median(bares)
        beyond = "-" if gold is None or bare is None else f"{gold - bare:.2f}"
        print(f"| {check['instance_id']} | {'-' if gold is None else f'{gold:.2f}'} | "
              f"{'-' if bare is None else f'{bare:.2f}'} | {beyond} |", flush=True)


def cold(tasks, repos, ids):
    print("| instance | uv (s) | pip (s) |")
    print("|---|---:|---:|")
    for instance in ids:
        times = []
        for installer in ("auto", "pip"):
            with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as cache:
                env = dict(os.environ, SWERVE_CACHE_DIR=cache, SWERVE_ENV_INSTALLER=installer)
                started = time.monotonic()
                out = subprocess.run(
                    [SWERVE, "--repos", repos, "env", "exec", "--tasks", tasks, "--timeout", "60",
                     instance, "--", "true"],
                    capture_output=True, text=True, env=env,
                )
                elapsed = time.monotonic() - started
                times.append(f"{elapsed:.1f}" if out.returncode == 0 else f"failed ({out.stderr.strip()[:80]})")
        print(f"| {instance} | {times[0]} | {times[1]} |")


if __name__ == "__main__":
    if len(sys.argv) >= 5 and sys.argv[1] == "warm":
        warm(*sys.argv[2:5])
    elif len(sys.argv) >= 5 and sys.argv[1] == "cold":
        cold(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        sys.exit(__doc__)
