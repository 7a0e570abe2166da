"""swerve on Ray: swerve workers on the nodes of a Ray cluster, and the jobs between them.

One Ray actor per node owns a local ``swerve worker`` process (JSON lines on its stdin and
stdout). The worker gets the run's configuration and tasks once, then jobs (a rollout of
``swerve run``, a grading of ``swerve eval``); it runs them in a node-local scratch
directory and answers with the files they wrote. A job whose node dies is started again
on another node; each job is answered once.

Two ways in, both over :class:`Pool`:

* ``swerve run --ray ADDRESS`` and ``swerve eval --ray ADDRESS`` run this file as a
  script: it reads the start and the jobs on stdin and writes events on stdout
  (``docs/cluster.md``).
* Trainers already on Ray use it as the module ``swerve.ray``::

      import swerve.ray
      results = swerve.ray.rollouts("tasks.jsonl", samples=4, config="swerve.toml")
      for result in results:
          result["id"], result["outcome"]["patch"], result["trajectory"]

This file imports only Ray and the standard library.
"""

import collections
import json
import os
import shutil
import socket
import subprocess
import sys
import threading

try:
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
except ImportError as missing:
    if __name__ != "__main__":
        raise
    # Run by `swerve run --ray`: say what to fix in the driver's terms.
    print(json.dumps({"event": "fatal", "message":
                      f"{sys.executable} (cluster.python) cannot import Ray ({missing}): "
                      f"install it (`{sys.executable} -m pip install ray`) or set "
                      f"cluster.python to an interpreter that has it"}), flush=True)
    sys.exit(1)

__all__ = ["Pool", "SwerveClusterError", "rollouts", "setup"]

if __name__ != "__main__":
    # The actor class travels by value, so that nodes need Ray but not this package.
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

#: The ``[cluster]`` settings this module reads, with their defaults.
DEFAULTS = {
    "resource": "",
    "slots": 0,
    "slots_per_cpu": 4.0,
    "memory_per_slot_mb": 1024,
    "worker_cpus": 1.0,
    "start_timeout_secs": 120.0,
    "max_attempts": 3,
}


class SwerveClusterError(RuntimeError):
    """The cluster cannot run swerve workers; the message says what to fix."""


class _WorkerGone(RuntimeError):
    """The node's swerve worker process exited."""


class _NodeWorker:
    """The actor on one node: owns its ``swerve worker`` process."""

    def __init__(self, swerve, setup_line):
        swerve = swerve or _installed_swerve()
        self._replies = {}
        self._lock = threading.Lock()
        self._gone = None
        try:
            self._process = subprocess.Popen(
                [swerve, "worker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                bufsize=1,
            )
        except OSError as error:
            self._ready = {"error": f"cannot run {swerve} worker ({error}): install swerve on "
                                    "the node or point cluster.swerve at its executable"}
            return
        self._process.stdin.write(setup_line + "\n")
        self._process.stdin.flush()
        first = self._process.stdout.readline()
        try:
            self._ready = json.loads(first)
        except ValueError:
            code = self._process.wait()
            self._ready = {"error": f"the swerve worker exited with status {code} before it "
                                    f"was ready (its messages are in the node's Ray logs)"}
            return
        threading.Thread(target=self._read, daemon=True).start()

    def ready(self):
        """The worker's answer to the setup: ``{"ready": {...}}`` or ``{"error": "..."}``."""
        return self._ready

    def run(self, job):
        """Runs one job; returns the worker's reply."""
        event = threading.Event()
        with self._lock:
            if self._gone:
                raise _WorkerGone(self._gone)
            self._replies[job["id"]] = [event, None]
            self._process.stdin.write(json.dumps(job) + "\n")
            self._process.stdin.flush()
        event.wait()
        with self._lock:
            reply = self._replies.pop(job["id"])[1]
        if reply is None:
            raise _WorkerGone(self._gone)
        return reply

    def stop(self, timeout=10.0):
        """Closes the worker's stdin and waits for it to exit (it deletes its scratch
        directory)."""
        try:
            self._process.stdin.close()
            self._process.wait(timeout=timeout)
        except (AttributeError, OSError, subprocess.TimeoutExpired):
            pass

    def _read(self):
        for line in self._process.stdout:
            try:
                reply = json.loads(line)
            except ValueError:
                continue
            with self._lock:
                waiting = self._replies.get(reply.get("id"))
                if waiting:
                    waiting[1] = reply
                    waiting[0].set()
        code = self._process.wait()
        with self._lock:
            self._gone = f"the swerve worker exited with status {code}"
            for waiting in self._replies.values():
                waiting[0].set()


def _slots(node, cluster):
    """Jobs at once on ``node``: ``slots``, else from its CPUs and memory."""
    if cluster["slots"]:
        return int(cluster["slots"])
    resources = node["Resources"]
    by_cpu = int(resources.get("CPU", 0) * cluster["slots_per_cpu"])
    by_memory = int(resources.get("memory", 0) // (cluster["memory_per_slot_mb"] << 20))
    return max(1, min(by_cpu, by_memory))


def _node_name(node):
    return f"{node.get('NodeManagerHostname', '?')} ({node.get('NodeManagerAddress', '?')}, node {node['NodeID'][:8]})"


def _installed_swerve():
    """This node's ``swerve`` command: the one the ``swerve`` wheel installed beside this
    interpreter (:func:`swerve.command.path`), else ``PATH``'s."""
    try:
        from swerve.command import path
    except ImportError:  # Ray's Python without the swerve package: PATH alone
        return shutil.which("swerve") or "swerve"
    return path() or "swerve"


class Pool:
    """swerve workers on the nodes of the Ray cluster this process is connected to.

    ``setup`` is the workers' setup (see :func:`setup`); ``swerve`` the swerve executable on
    the nodes (``None``: each node's own, see :func:`_installed_swerve`); ``cluster`` the
    ``[cluster]`` settings (:data:`DEFAULTS`). Raises
    :class:`SwerveClusterError` when no node can take a worker. ``warn`` gets a message for
    each node left out and why.
    """

    def __init__(self, setup, swerve=None, cluster=None, warn=None):
        self.cluster = dict(DEFAULTS, **(cluster or {}))
        self._warn = warn or (lambda message: print(f"warning: {message}", file=sys.stderr))
        self.workers = {}  # node id -> {"actor", "name", "slots", "busy"}
        self._start(setup, swerve)
        self._pending = collections.deque()  # (job, key)
        self._running = {}  # object ref -> (job, key, node id)
        self._attempts = collections.Counter()
        self._keys = collections.defaultdict(set)  # key -> node ids that ran it

    @property
    def slots(self):
        """Jobs at once across the live workers."""
        return sum(worker["slots"] for worker in self.workers.values())

    def describe(self):
        """One line per live worker."""
        return [f"{w['name']}: {w['slots']} slots" for w in self.workers.values()]

    def _start(self, setup, swerve):
        cluster = self.cluster
        nodes = [node for node in ray.nodes() if node.get("Alive")]
        resource = cluster["resource"]
        chosen, skipped = [], []
        for node in nodes:
            have = node["Resources"]
            if resource and have.get(resource, 0) < 1:
                skipped.append(f"{_node_name(node)} has no resource \"{resource}\"")
            elif have.get("CPU", 0) < cluster["worker_cpus"]:
                skipped.append(f"{_node_name(node)} has {have.get('CPU', 0):g} CPUs, fewer than "
                               f"cluster.worker_cpus = {cluster['worker_cpus']:g}")
            else:
                chosen.append(node)
        if not chosen:
            fixes = []
            if resource:
                fixes.append(f"start nodes with `ray start --resources '{{\"{resource}\": 1}}'` "
                             f"or unset cluster.resource")
            fixes.append("lower cluster.worker_cpus or add nodes with more CPUs")
            raise SwerveClusterError(
                f"no node of the Ray cluster can take a swerve worker ({len(nodes)} alive: "
                + "; ".join(skipped or ["none"]) + "); " + "; or ".join(fixes))
        actor = ray.remote(_NodeWorker)
        line = json.dumps(setup)
        started = {}
        for node in chosen:
            slots = _slots(node, cluster)
            options = {
                "scheduling_strategy": NodeAffinitySchedulingStrategy(node["NodeID"], soft=False),
                "num_cpus": cluster["worker_cpus"],
                "max_concurrency": slots + 1,
                "max_restarts": 0,
            }
            if resource:
                options["resources"] = {resource: 1}
            handle = actor.options(**options).remote(swerve, line)
            started[handle.ready.remote()] = (node, handle, slots)
        ready, late = ray.wait(list(started), num_returns=len(started),
                               timeout=cluster["start_timeout_secs"])
        problems = []
        for ref in late:
            node, handle, _ = started[ref]
            problems.append(f"{_node_name(node)}: its worker did not start within "
                            f"{cluster['start_timeout_secs']:g} s (cluster.start_timeout_secs; "
                            f"are its CPUs taken by other work?)")
            ray.kill(handle)
        for ref in ready:
            node, handle, slots = started[ref]
            try:
                answer = ray.get(ref)
            except ray.exceptions.RayError as error:
                answer = {"error": f"the actor failed: {error}"}
            if "error" in answer:
                problems.append(f"{_node_name(node)}: {answer['error']}")
                ray.kill(handle)
                continue
            self.workers[node["NodeID"]] = {
                "actor": handle, "slots": slots, "busy": 0,
                "name": _node_name(node),
            }
        if not self.workers:
            raise SwerveClusterError("no swerve worker started: " + "; ".join(problems))
        for problem in skipped + problems:
            self._warn(f"no swerve worker on {problem}")

    def submit(self, job, key=""):
        """Queues ``job`` (``{"id", "work"}``); jobs of one ``key`` share a node if they can."""
        self._pending.append((job, key))

    def busy(self):
        """Whether jobs are queued or running."""
        return bool(self._pending or self._running)

    def poll(self, timeout=0.1):
        """Places queued jobs and waits up to ``timeout`` s for some to end; returns events:
        ``{"event": "done", "reply"}``, ``{"event": "failed", "id", "error"}`` and
        ``{"event": "requeued", "id", "reason"}``."""
        events = []
        self._place(events)
        if not self._running:
            return events
        done, waiting = ray.wait(list(self._running), num_returns=1, timeout=timeout)
        if done and waiting:
            done += ray.wait(waiting, num_returns=len(waiting), timeout=0)[0]
        for ref in done:
            job, key, node = self._running.pop(ref)
            worker = self.workers.get(node)
            if worker:
                worker["busy"] -= 1
            try:
                events.append({"event": "done", "reply": ray.get(ref)})
            except (ray.exceptions.RayActorError, ray.exceptions.RayTaskError,
                    ray.exceptions.ObjectLostError) as error:
                reason = (f"its node {worker['name'] if worker else node[:8]} was lost "
                          f"({type(error).__name__})")
                self._lose(node)
                self._attempts[job["id"]] += 1
                if self._attempts[job["id"]] >= self.cluster["max_attempts"]:
                    events.append({"event": "failed", "id": job["id"],
                                   "error": f"{reason}, after {self._attempts[job['id']]} attempts "
                                            f"(cluster.max_attempts)"})
                else:
                    events.append({"event": "requeued", "id": job["id"], "reason": reason})
                    self._pending.appendleft((job, key))
        self._place(events)
        return events

    def _lose(self, node):
        worker = self.workers.pop(node, None)
        if worker:
            try:
                ray.kill(worker["actor"])
            except Exception:  # the actor is already gone
                pass

    def _place(self, events):
        while self._pending:
            free = [(node, w) for node, w in self.workers.items() if w["busy"] < w["slots"]]
            if not self.workers:
                while self._pending:
                    job, _ = self._pending.popleft()
                    events.append({"event": "failed", "id": job["id"],
                                   "error": "every node's swerve worker is gone"})
                return
            if not free:
                return
            job, key = self._pending.popleft()
            local = [item for item in free if item[0] in self._keys[key]]
            node, worker = max(local or free, key=lambda item: item[1]["slots"] - item[1]["busy"])
            self._keys[key].add(node)
            worker["busy"] += 1
            self._running[worker["actor"].run.remote(job)] = (job, key, node)

    def close(self):
        """Stops the workers, letting each clean up first."""
        stopping = [worker["actor"].stop.remote() for worker in self.workers.values()]
        ray.wait(stopping, num_returns=len(stopping), timeout=15)
        for node in list(self.workers):
            self._lose(node)


def setup(tasks, config_toml, out=".", grading=None):
    """The workers' setup: the resolved configuration as TOML (``swerve config show``), the
    task file ``tasks`` (its path and text), and the directory ``out`` that paths in the
    files sent back (a report's ``log_path``) point into."""
    path = os.path.abspath(tasks)
    with open(path, encoding="utf-8") as file:
        text = file.read()
    return {"config": config_toml, "task_file": path, "tasks": text, "cwd": os.getcwd(),
            "out": os.path.abspath(out), **({"grading": grading} if grading else {})}


def rollouts(tasks, instance_ids=None, samples=1, config=None, swerve=None, address=None,
             cluster=None, sets=()):
    """Runs ``samples`` rollouts of each task of the file ``tasks`` (those of
    ``instance_ids``, else all) on swerve workers in the Ray cluster, and returns one dict a
    rollout, in task then sample order: ``id``, ``instance_id``, ``sample``, ``outcome``
    (the trajectory's last line), ``trajectory`` (its lines: header, steps, outcome),
    ``log`` and, when it failed, ``error``.

    ``config`` is a swerve configuration file and ``sets`` ``KEY=VALUE`` overrides, as
    ``swerve run`` takes them; ``address`` is given to ``ray.init`` unless Ray is already
    initialized (a trainer's driver usually is); ``cluster`` holds ``[cluster]`` settings.
    """
    command = [swerve or _installed_swerve(), "config", "show"]
    if config:
        command[1:1] = ["--config", str(config)]
    for setting in sets:
        command[1:1] = ["--set", setting]
    resolved = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    with open(tasks, encoding="utf-8") as file:
        ids = [json.loads(line)["instance_id"] for line in file if line.strip()]
    if instance_ids:
        ids = [task for task in ids if task in set(instance_ids)]
    if not ray.is_initialized():
        ray.init(address=address, log_to_driver=False)
    pool = Pool(setup(tasks, resolved), swerve=swerve, cluster=cluster)
    order = []
    try:
        for task in ids:
            for sample in range(samples):
                job = {"id": f"{task}__{sample}",
                       "work": {"rollout": {"instance_id": task, "sample": sample}}}
                order.append((job["id"], task, sample))
                pool.submit(job, key=task)
        results = {}
        while pool.busy():
            for event in pool.poll():
                if event["event"] == "done":
                    results[event["reply"]["id"]] = event["reply"]
                elif event["event"] == "failed":
                    results[event["id"]] = {"id": event["id"], "error": event["error"], "files": []}
    finally:
        pool.close()
    return [_rollout_result(results[rollout_id], task, sample)
            for rollout_id, task, sample in order]


def _rollout_result(reply, task, sample):
    files = {file["path"]: file.get("text", "") for file in reply.get("files", [])}
    trajectory = files.get(f"trajectories/{reply['id']}.jsonl", "")
    result = {
        "id": reply["id"], "instance_id": task, "sample": sample,
        "outcome": reply.get("outcome"),
        "trajectory": [json.loads(line) for line in trajectory.splitlines() if line.strip()],
        "log": files.get(f"logs/{reply['id']}.log", ""),
    }
    if reply.get("error"):
        result["error"] = reply["error"]
    return result


def _unreachable(address, timeout=5.0):
    """Why nothing answers at ``address`` (``HOST:PORT`` or ``ray://HOST:PORT``), or
    ``None`` (also for ``auto``, which Ray resolves itself): Ray retries an unreachable
    address for minutes before it gives up."""
    target = address.split("://", 1)[-1]
    host, _, port = target.rpartition(":")
    if not host or not port.isdigit():
        return None if address == "auto" else "not HOST:PORT"
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as error:
        return f"nothing answers at {host}:{port} ({error.strerror or error})"
    return None


def _serve(commands, events):
    """The script ``swerve run --ray`` runs: the start, then jobs, on ``commands``; events on
    ``events``. Ends when ``commands`` closes and every job was answered."""
    def send(event):
        events.write(json.dumps(event) + "\n")
        events.flush()

    start = json.loads(commands.readline())
    unreachable = _unreachable(start["address"])
    if unreachable:
        send({"event": "fatal", "message":
              f"cannot connect to the Ray cluster at {start['address']}: {unreachable}; check "
              f"--ray ADDRESS (the head node's HOST:PORT as `ray start --head` printed it, "
              f"ray://HOST:10001, or auto) and that the head node is running"})
        return 1
    try:
        ray.init(address=start["address"], log_to_driver=False, logging_level="ERROR")
    except Exception as error:  # Ray raises ConnectionError, RuntimeError, ValueError...
        send({"event": "fatal", "message":
              f"cannot connect to the Ray cluster at {start['address']}: {error}; check --ray "
              f"ADDRESS (the head node's HOST:PORT as `ray start --head` printed it, "
              f"ray://HOST:10001, or auto) and that the head node is running"})
        return 1
    cluster = {key: start["cluster"].get(key, default) for key, default in DEFAULTS.items()}
    try:
        pool = Pool(start["setup"], swerve=start["swerve"], cluster=cluster,
                    warn=lambda message: send({"event": "warning", "message": message}))
    except SwerveClusterError as error:
        send({"event": "fatal", "message": f"Ray cluster at {start['address']}: {error}"})
        return 1
    send({"event": "ready", "nodes": pool.describe(), "slots": pool.slots})
    incoming = collections.deque()
    closed = threading.Event()

    def read():
        for line in commands:
            if line.strip():
                incoming.append(json.loads(line))
        closed.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        while not (closed.is_set() and not incoming and not pool.busy()):
            while incoming:
                command = incoming.popleft()
                pool.submit(command["job"], command.get("key", ""))
            for event in pool.poll(timeout=0.05):
                send(event)
            if not pool.busy():
                closed.wait(0.05)
    finally:
        pool.close()
    return 0


def _main():
    # Only events go to the driver's pipe: whatever else writes to stdout (Ray, libraries)
    # goes to stderr.
    events = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    code = _serve(sys.stdin, events)
    events.flush()
    sys.stderr.flush()
    # Without Ray's exit handlers, which take seconds to disconnect: the cluster kills the
    # actors of a driver that is gone.
    os._exit(code)


if __name__ == "__main__":
    _main()
