#!/usr/bin/env python3
"""Real-task timings for BENCHMARKS.md: each instance's evaluation phases (from a
`swerve tasks check` directory, environment cached) beside the bare test command, and cold
environment builds with uv and with pip.

    scripts/bench-real.py warm CHECK_DIR TASKS REPOS      # after a warm `tasks check`
    scripts/bench-real.py cold TASKS REPOS ID…            # fresh caches, uv then pip

`warm` runs, per instance, the test command of its gold evaluation (the line after the
start marker in logs/gold/<id>/eval.sh) in a fresh workspace with the gold and test patches
applied, timed inside the sandbox: the bare test command. `cold` times `swerve env exec ID
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


def warm(check_dir, tasks, repos):
    checks = json.load(open(os.path.join(check_dir, "check.json")))
    by_id = {row["instance_id"]: row for row in rows(tasks)}
    print("| instance | environment (s) | gold evaluation (s) | its tests (s) | bare test command (s) | beyond the tests (s) |")
    print("|---|---:|---:|---:|---:|---:|")
    for check in checks:
        task = by_id[check["instance_id"]]
        bare = bare_seconds(task, check_dir, tasks, repos, dict(os.environ))
        s = check["seconds"]
        # The whole gold evaluation (spec, workspace, patch, eval script with its re-install,
        # grading) less the bare test command.
        beyond = s["gold"] - (bare or 0.0)
        print(f"| {check['instance_id']} | {s['environment']:.2f} | {s['gold']:.2f} | {s['gold_tests']:.2f} | "
              f"{'-' if bare is None else f'{bare:.2f}'} | {beyond:.2f} |")


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
