#!/usr/bin/env python3
"""The Ray scale-out tests, run by scripts/ray-tests.sh against the local multi-node Ray
cluster it started (RAY_ADDRESS_FOR_TESTS): runs and evaluations on the cluster give the
outputs of one-machine runs, a node killed mid-run loses no rollout and duplicates none,
bad input gets an error naming what to fix, and trainers' entry point (swerve.ray) returns
the rollouts. Uses only the standard library and Ray.
"""

import difflib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TASKS = os.path.join(ROOT, "examples/tasks/tasks.jsonl")
SWERVE = os.path.abspath(os.environ["SWERVE"])
PYTHON = os.path.abspath(os.environ["RAY_PYTHON"])
RAY = os.path.abspath(os.environ["RAY_BIN"])
ADDRESS = os.environ["RAY_ADDRESS_FOR_TESTS"]
SCRATCH = os.environ["RAY_TESTS_SCRATCH"]
SAMPLES = 3
# Keys whose values are timings or the process's own figures, and a grade's `log_path`: two
# samples with one patch share a cached grade, whose log is that of whichever was graded
# first (checked on its own below).
VARYING = re.compile(r"created_at|seconds|secs|timings|process|rss|log_path")
# Test runners and builds print their own durations ("Ran 3 tests in 0.002s", "finished in
# 0.00s", "Finished `test` profile [...] target(s) in 0.35s").
DURATIONS = re.compile(r"\b(in )[0-9]+(\.[0-9]+)?m?s\b")
# Lines of parallel test runners whose order or presence varies from run to run: cargo's
# result lines, and the backtrace note Rust prints after whichever test panics first.
PARALLEL_TEST = re.compile(r"^test .+ \.\.\. \w+$|^note: run with `RUST_BACKTRACE=1`")


def bad_out():
    """A new output directory for a run refused on bad input: runs refused with different
    settings must not meet in one directory, where resuming would refuse first."""
    return tempfile.mkdtemp(prefix="bad-", dir=SCRATCH)


def swerve(*args, cache, check=True, **options):
    """Runs swerve from the repository root with cache directory ``cache``."""
    env = dict(os.environ, SWERVE_CACHE_DIR=cache)
    env.pop("RUST_LOG", None)
    done = subprocess.run([SWERVE, *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          **options)
    if check and done.returncode != 0:
        raise AssertionError(f"swerve {' '.join(args)} exited {done.returncode}:\n{done.stderr}")
    return done


def on_ray(*sets):
    """The options that run a command on the test cluster."""
    options = ["--ray", ADDRESS, "--set", f'cluster.python="{PYTHON}"',
               "--set", f'cluster.scratch="{SCRATCH}/node-scratch"']
    for setting in sets:
        options += ["--set", setting]
    return options


def normal(value, out=None):
    """``value`` without timings, with the run directory ``out`` named ``OUT``, and the
    grader's canaries by their statuses alone (their names and file are drawn afresh for
    every evaluation, docs/security.md)."""
    if isinstance(value, dict) and "must_pass" in value and "must_fail" in value:
        return {"placed": value.get("placed"),
                "statuses": [value[key].get("status") for key in ("must_pass", "must_fail")]}
    if isinstance(value, dict):
        return {k: normal(v, out) for k, v in value.items() if not VARYING.search(k)}
    if isinstance(value, list):
        return [normal(v, out) for v in value]
    if isinstance(value, str):
        value = ordered_tests(DURATIONS.sub(r"\1Xs", value))
        return value.replace(out, "OUT") if out else value
    return value


def ordered_tests(text):
    """``text`` without the lines of parallel test runners that vary from run to run
    (``cargo test``: ``test a::b ... ok`` in any order, so that a ``| tail`` of them shows
    different ones each time; their counts remain, in ``test result: ... 11 passed``)."""
    return "\n".join(line for line in text.split("\n") if not PARALLEL_TEST.match(line))


def lines(path):
    with open(path, encoding="utf-8") as file:
        return [json.loads(line) for line in file if line.strip()]


def load(path):
    with open(path, encoding="utf-8") as file:
        return json.load(file)


def same_run(local, ray):
    """The two run directories hold the same rollouts: predictions, trajectories step for
    step, summaries (timings aside)."""
    assert lines(f"{local}/preds.jsonl") == lines(f"{ray}/preds.jsonl"), "preds.jsonl differ"
    names = sorted(os.listdir(f"{local}/trajectories"))
    assert names == sorted(os.listdir(f"{ray}/trajectories")), "trajectory files differ"
    assert sorted(os.listdir(f"{local}/logs")) == sorted(os.listdir(f"{ray}/logs"))
    for name in names:
        a = normal(lines(f"{local}/trajectories/{name}"), local)
        b = normal(lines(f"{ray}/trajectories/{name}"), ray)
        assert len(a) == len(b), f"{name}: {len(a)} lines here, {len(b)} on Ray"
        for number, (x, y) in enumerate(zip(a, b)):
            if x != y:
                diff = difflib.unified_diff(json.dumps(x, indent=1).splitlines(),
                                            json.dumps(y, indent=1).splitlines(), lineterm="")
                raise AssertionError(f"{name}: line {number + 1} differs:\n" + "\n".join(diff))
    assert normal(load(f"{local}/summary.json"), local) == normal(load(f"{ray}/summary.json"), ray)
    return len(names)


def test_run_replay_matches_one_machine():
    local, ray = f"{SCRATCH}/run-local", f"{SCRATCH}/run-ray"
    common = ["run", "--tasks", TASKS, "--samples", str(SAMPLES)]
    swerve(*common, "--out", local, cache=f"{SCRATCH}/cache-driver")
    done = swerve(*common, "--out", ray, *on_ray(), cache=f"{SCRATCH}/cache-driver")
    assert "Ray cluster at" in done.stderr and "2 workers" in done.stderr, done.stderr
    count = same_run(local, ray)
    assert count == 8 * SAMPLES, count
    # The workers deleted their scratch run directories when the run ended.
    assert os.listdir(f"{SCRATCH}/node-scratch") == [], os.listdir(f"{SCRATCH}/node-scratch")
    # Resuming on the cluster runs nothing again.
    again = swerve(*common, "--out", ray, *on_ray(), cache=f"{SCRATCH}/cache-driver")
    assert f"0 rollouts to run, {count} already finished" in again.stderr, again.stderr


def test_run_with_eval_matches_one_machine():
    local, ray = f"{SCRATCH}/graded-local", f"{SCRATCH}/graded-ray"
    common = ["run", "--tasks", TASKS, "--samples", "2", "--eval"]
    swerve(*common, "--out", local, cache=f"{SCRATCH}/cache-graded")
    swerve(*common, "--out", ray, *on_ray(), cache=f"{SCRATCH}/cache-graded")
    same_run(local, ray)
    for name in os.listdir(f"{ray}/trajectories"):
        report = lines(f"{ray}/trajectories/{name}")[-1]["eval_report"]
        assert report["resolved"] is True, name
        assert report["log_path"].startswith(f"{ray}/eval-logs/"), report["log_path"]
        assert os.path.isfile(report["log_path"]), report["log_path"]


def test_eval_gold_matches_one_machine():
    local, ray = f"{SCRATCH}/eval-local", f"{SCRATCH}/eval-ray"
    common = ["eval", "--tasks", TASKS, "--gold", "--repeat", str(SAMPLES)]
    swerve(*common, "--out", local, cache=f"{SCRATCH}/cache-driver")
    done = swerve(*common, "--out", ray, *on_ray(), cache=f"{SCRATCH}/cache-driver")
    assert "8/8 gold patches resolve their task" in done.stdout, done.stdout
    for name in ["results.json", "report.json", "flaky.json"]:
        assert normal(load(f"{local}/{name}"), local) == normal(load(f"{ray}/{name}"), ray), name
    tasks = sorted(os.listdir(f"{local}/logs"))
    assert tasks == sorted(os.listdir(f"{ray}/logs")) and len(tasks) == 8
    listed = {row["instance_id"]: json.loads(row["FAIL_TO_PASS"]) + json.loads(row["PASS_TO_PASS"])
              for row in lines(TASKS)}
    for task in tasks:
        files = sorted(os.listdir(f"{local}/logs/{task}"))
        assert files == sorted(os.listdir(f"{ray}/logs/{task}")), task
        for name in files:
            with open(f"{local}/logs/{task}/{name}", encoding="utf-8") as a, \
                    open(f"{ray}/logs/{task}/{name}", encoding="utf-8") as b:
                a, b = a.read(), b.read()
                # The canaries: the tests either log runs that the task does not list (with
                # --repeat, the log kept may be another repeat's than the reports').
                names = unlisted_tests(a, listed[task]) + unlisted_tests(b, listed[task])
                here = normal(without_canaries(a, names), local)
                there = normal(without_canaries(b, names), ray)
                assert here == there or name == "report.json", f"{task}/{name}:\n" + "\n".join(
                    difflib.unified_diff(here.split("\n"), there.split("\n"), lineterm=""))


def unlisted_tests(log, listed):
    """The names of the tests ``log`` reports (unittest's and cargo's verbose lines) whose
    ids are not in ``listed``."""
    names = []
    for line in log.split("\n"):
        found = re.match(r"^(\w+) \(([\w.]+)\) \.\.\. ", line) or re.match(r"^test ([\w:]+) \.\.\. ", line)
        if found:
            test_id = found.group(0)[:-5].strip()
            name = found.group(1).rsplit("::", 1)[-1]
            if test_id not in listed and found.group(1) not in listed:
                names.append(name)
    return names


def without_canaries(text, names):
    """``text`` (a test log) without the lines that name a canary, and the failure report a
    line naming one heads: unittest's (from ``FAIL:`` past its ``----`` rule to the next
    rule), cargo's and pytest's (to the next blank line). The canaries are drawn afresh for
    every evaluation; the rest of the log is the same run to run."""
    rule = re.compile(r"^(=|-){20,}$")
    kept, skipping, rules_seen = [], None, 0
    for line in text.split("\n"):
        if skipping == "unittest":
            if rule.match(line.strip()):
                rules_seen += 1
                if rules_seen > 1:
                    skipping = None
                    kept.append(line)
            continue
        if skipping == "block":
            skipping = "block" if line.strip() else None
            continue
        if any(re.search(rf"\b{re.escape(name)}\b", line) for name in names):
            head = line.lstrip()
            if head.startswith(("FAIL:", "ERROR:")):
                skipping, rules_seen = "unittest", 0
            elif head.startswith(("---- ", "_", "thread '")):
                skipping = "block"
            continue
        kept.append(line)
    return "\n".join(kept)


def start_node(name, resources, prefix=()):
    """A Ray worker node in its own process group (so that it can be killed whole)."""
    log = open(f"{SCRATCH}/{name}.log", "w")
    env = dict(os.environ, SWERVE_CACHE_DIR=f"{SCRATCH}/cache-{name}")
    command = [*prefix, RAY, "start", f"--address={ADDRESS}", "--block", "--num-cpus=1",
               "--object-store-memory=80000000", "--disable-usage-stats",
               f"--resources={json.dumps(resources)}"]
    process = subprocess.Popen(command, stdout=log, stderr=log, env=env, start_new_session=True)
    import ray
    ray.init(address=ADDRESS, log_to_driver=False, logging_level="ERROR")
    try:
        deadline = time.time() + 60
        while sum(node["Alive"] for node in ray.nodes()) < 3:
            assert time.time() < deadline, f"node {name} did not join"
            time.sleep(0.5)
    finally:
        ray.shutdown()
    return process


def stop_node(process):
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def test_a_node_killed_mid_run_loses_no_rollout():
    node = start_node("node2", {"swerve": 1})
    out = f"{SCRATCH}/killed"
    # Two rollouts at once a node, so that the run lasts long enough to lose one.
    command = [SWERVE, "run", "--tasks", TASKS, "--samples", str(SAMPLES), "--out", out,
               *on_ray("cluster.slots=2")]
    env = dict(os.environ, SWERVE_CACHE_DIR=f"{SCRATCH}/cache-driver")
    run = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    stderr = []
    try:
        for line in run.stderr:
            stderr.append(line)
            if line.startswith("[2/"):
                stop_node(node)
                break
        stdout, rest = run.communicate(timeout=600)
    finally:
        if node.poll() is None:
            stop_node(node)
    stderr = "".join(stderr) + rest
    assert run.returncode == 0, stderr
    assert "3 workers" in stderr, stderr
    assert "running it again on another node" in stderr, stderr
    same_run(f"{SCRATCH}/run-local", out)
    predictions = lines(f"{out}/preds.jsonl")
    assert len({p["instance_id"] for p in predictions}) == len(predictions) == 8
    for name in os.listdir(f"{out}/trajectories"):
        steps = lines(f"{out}/trajectories/{name}")
        assert sum("exit_reason" in step for step in steps) == 1, name
    summary = load(f"{out}/summary.json")
    assert summary["rollouts"] == 8 * SAMPLES and summary["submitted"] == 8 * SAMPLES, summary


def test_a_task_whose_environment_cannot_be_built_fails_alone():
    # The pager task at a commit its repository does not have: every node fails to build it.
    rows = [json.loads(line) for line in open(TASKS, encoding="utf-8") if line.strip()]
    for row in rows:
        if row["instance_id"] == "swerve-examples__pager-1":
            row["base_commit"] = "0" * 40
    os.makedirs(f"{SCRATCH}/broken", exist_ok=True)
    tasks = f"{SCRATCH}/broken/tasks.jsonl"
    with open(tasks, "w", encoding="utf-8") as file:
        file.writelines(json.dumps(row) + "\n" for row in rows)
    out = f"{SCRATCH}/broken/run"
    done = swerve("--repos", f"{ROOT}/examples/repos", "run", "--tasks", tasks, "--samples", "2",
                  "--out", out, *on_ray(), cache=f"{SCRATCH}/cache-driver", check=False,
                  timeout=300)
    assert done.returncode == 1, done.stderr
    summary = load(f"{out}/summary.json")
    assert summary["submitted"] == 14, summary
    failed = sorted(failure["id"] for failure in summary["failed"])
    assert failed == ["swerve-examples__pager-1__0", "swerve-examples__pager-1__1"], failed
    for failure in summary["failed"]:
        assert "0000000" in failure["error"], failure
        assert os.path.getsize(failure["log"]) > 0, failure


def test_unreachable_address_says_what_to_fix():
    done = swerve("run", "--tasks", TASKS, "--out", bad_out(), "--ray", "127.0.0.1:9",
                  "--set", f'cluster.python="{PYTHON}"', cache=f"{SCRATCH}/cache-driver",
                  check=False, timeout=120)
    assert done.returncode == 1, done.stderr
    assert "cannot connect to the Ray cluster at 127.0.0.1:9" in done.stderr, done.stderr
    assert "check --ray ADDRESS" in done.stderr, done.stderr


def test_missing_resources_say_what_to_fix():
    done = swerve("eval", "--tasks", TASKS, "--gold", "--out", bad_out(),
                  *on_ray('cluster.resource="swerve_gpu"'), cache=f"{SCRATCH}/cache-driver",
                  check=False, timeout=120)
    assert done.returncode == 1, done.stderr
    assert 'has no resource "swerve_gpu"' in done.stderr, done.stderr
    assert "ray start --resources" in done.stderr, done.stderr
    done = swerve("run", "--tasks", TASKS, "--out", bad_out(),
                  *on_ray("cluster.worker_cpus=4"), cache=f"{SCRATCH}/cache-driver",
                  check=False, timeout=120)
    assert done.returncode == 1, done.stderr
    assert "fewer than cluster.worker_cpus = 4" in done.stderr, done.stderr


def test_missing_python_or_swerve_says_what_to_fix():
    done = swerve("run", "--tasks", TASKS, "--out", bad_out(), "--ray", ADDRESS,
                  "--set", 'cluster.python="/nonexistent/python3"',
                  cache=f"{SCRATCH}/cache-driver", check=False, timeout=120)
    assert done.returncode == 1 and "cluster.python" in done.stderr, done.stderr
    # An interpreter without Ray (the venv's base interpreter has none).
    done = swerve("run", "--tasks", TASKS, "--out", bad_out(), "--ray", ADDRESS,
                  "--set", f'cluster.python="{sys.base_prefix}/bin/python3"',
                  cache=f"{SCRATCH}/cache-driver", check=False, timeout=120)
    assert done.returncode == 1, done.stderr
    assert "cannot import Ray" in done.stderr and "pip install ray" in done.stderr, done.stderr
    done = swerve("run", "--tasks", TASKS, "--out", bad_out(),
                  *on_ray('cluster.swerve="/nonexistent/swerve"'),
                  cache=f"{SCRATCH}/cache-driver", check=False, timeout=120)
    assert done.returncode == 1, done.stderr
    assert "install swerve on the node or point cluster.swerve" in done.stderr, done.stderr


def test_a_node_without_user_namespaces_says_what_to_fix():
    # A node in a user namespace that may create no more of them: its sandboxes cannot start.
    node = start_node("nouserns", {"nouserns": 1}, prefix=[
        "unshare", "--user", "--map-root-user", "--",
        "sh", "-c", 'echo 0 > /proc/sys/user/max_user_namespaces && exec "$0" "$@"'])
    try:
        done = swerve("run", "--tasks", TASKS, "--out", bad_out(),
                      *on_ray('cluster.resource="nouserns"', 'sandbox.isolation="namespaces"'),
                      cache=f"{SCRATCH}/cache-driver", check=False, timeout=300)
    finally:
        stop_node(node)
    assert done.returncode == 1, done.stderr
    assert "sandboxes cannot start on this node" in done.stderr, done.stderr
    assert "user.max_user_namespaces" in done.stderr, done.stderr


def wheel_installed():
    """Whether the Ray environment has the swerve wheel (`swerve.ray` ships in it)."""
    if os.environ.get("RAY_TESTS_WHEEL") == "1":
        return True
    print("skipping: no swerve wheel in the Ray environment (scripts/python-tests.sh builds it)")
    return False


def test_trainers_get_rollouts_from_swerve_ray():
    """Trainers on Ray import `swerve.ray` from the installed package, and each node finds
    the `swerve` command the wheel installed (no `swerve=` given, none on PATH)."""
    if not wheel_installed():
        return
    program = f"""
import json, os, sys
import ray
import swerve.command, swerve.ray
assert swerve.command.path() == os.path.join(os.path.dirname(sys.executable), "swerve"), swerve.command.path()
ray.init(address={ADDRESS!r}, log_to_driver=False, logging_level="ERROR")
results = swerve.ray.rollouts({TASKS!r}, samples=2,
                              instance_ids=["swerve-examples__calc-1", "swerve-examples__pager-1"])
print(json.dumps([[r["id"], r["outcome"]["patch"], len(r["trajectory"])] for r in results]))
"""
    # No other swerve on PATH: the driver and the nodes must find the wheel's.
    path = [d for d in os.environ["PATH"].split(os.pathsep)
            if not os.path.exists(os.path.join(d, "swerve"))]
    env = dict(os.environ, SWERVE_CACHE_DIR=f"{SCRATCH}/cache-driver", PATH=os.pathsep.join(path))
    done = subprocess.run([PYTHON, "-c", program], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout.strip().splitlines()[-1])
    assert sorted(r[0] for r in results) == [
        "swerve-examples__calc-1__0", "swerve-examples__calc-1__1",
        "swerve-examples__pager-1__0", "swerve-examples__pager-1__1"], results
    local = {p["instance_id"]: p["model_patch"] for p in lines(f"{SCRATCH}/run-local/preds.jsonl")}
    for rollout_id, patch, steps in results:
        assert patch == local[rollout_id.rsplit("__", 1)[0]], rollout_id
        expected = len(lines(f"{SCRATCH}/run-local/trajectories/{rollout_id}.jsonl"))
        assert steps == expected, (rollout_id, steps, expected)


def test_swerve_env_steps_inside_ray_tasks_on_the_cluster():
    """The Python package's `Env` from Ray workers (the installed wheel, as a trainer's
    actors use it): each bundled task replayed step by step in a Ray task on a node with the
    `swerve` resource, every one resolved."""
    if not wheel_installed():
        return
    program = f"""
import json, os
import ray
ray.init(address={ADDRESS!r}, log_to_driver=False, logging_level="ERROR")

@ray.remote(num_cpus=0, resources={{"swerve": 0.01}})
def replay(instance_id):
    import swerve
    task = next(t for t in swerve.load_tasks({TASKS!r}) if t.instance_id == instance_id)
    with swerve.Env(task) as env:
        env.reset()
        for reply in swerve.replay_turns(os.path.join({ROOT!r}, "examples/demos", instance_id + ".json")):
            if env.step(reply)[2]:
                break
        graded = env.evaluate()
    return instance_id, graded.resolved

ids = [json.loads(line)["instance_id"] for line in open({TASKS!r})]
print(json.dumps(ray.get([replay.remote(i) for i in ids])))
"""
    env = dict(os.environ, SWERVE_CACHE_DIR=f"{SCRATCH}/cache-env")
    done = subprocess.run([PYTHON, "-c", program], cwd="/", env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(results) == len(lines(TASKS)), results
    assert all(resolved for _, resolved in results), results


def main():
    only = os.environ.get("RAY_TESTS_ONLY", "")
    tests = [value for name, value in globals().items()
             if name.startswith("test_") and only in name]
    failed = 0
    for test in tests:
        started = time.time()
        try:
            test()
            print(f"ok    {test.__name__} ({time.time() - started:.1f} s)", flush=True)
        except Exception:
            failed += 1
            print(f"FAIL  {test.__name__} ({time.time() - started:.1f} s)", flush=True)
            traceback.print_exc()
    print(f"{len(tests) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
