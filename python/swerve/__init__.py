"""swerve from Python: SWE-bench tasks, gym-style sandboxed environments, grading by
SWE-bench's rules and trainer integrations, over the same Rust code as the ``swerve``
command line (see docs/python.md).

- :func:`load_tasks` reads a SWE-bench JSON or JSONL file into :class:`Task` objects;
- :class:`Env` (and :class:`AsyncEnv`) opens a task's sandboxed workspace:
  ``reset()`` gives the opening messages and tools, ``step(action)`` runs a tool call (a
  model's reply in the configured tool-call format, an OpenAI assistant message, or a
  ``{"name", "arguments"}`` call), ``patch()`` is the diff, ``evaluate()`` grades it;
- :func:`evaluate` grades predictions as ``swerve eval`` does;
- :func:`read_trajectory` reads a swerve trajectory file; :func:`export` yields a run's
  trainer rows as ``swerve data export`` writes them;
- :mod:`swerve.integrations` adapts these to SkyRL, verl, OpenRLHF, rLLM, TRL and
  LLaMA-Factory.

Every call releases the GIL while Rust works: environments may be used from many threads
(each environment's calls take turns). Errors raise :class:`SwerveError` with the message
the command line prints.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
import uuid
import warnings
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, Iterator, List, Mapping, NamedTuple, Optional, Sequence, Union

import sys

from . import _swerve
from ._swerve import SwerveError

# A sandbox's init is this module's code: the interpreter loads the compiled module's file
# (its constructor then becomes the init and never returns), isolated from the environment.
_swerve.set_init_command(
    sys.executable,
    ["-I", "-S", "-c", "import ctypes, sys; ctypes.CDLL(sys.argv[1])", os.path.abspath(_swerve.__file__)],
)

__all__ = [
    "AsyncEnv",
    "EVALUATORS",
    "EXPORT_FORMATS",
    "Env",
    "Evaluation",
    "Step",
    "SwerveError",
    "Task",
    "Trajectory",
    "config_toml",
    "evaluate",
    "export",
    "load_tasks",
    "read_trajectory",
    "replay_turns",
    "run",
]

EXPORT_FORMATS = _swerve.EXPORT_FORMATS
"""The trainer formats :func:`export` writes (``swerve data export --format``), from swerve's
own list."""

EVALUATORS = _swerve.EVALUATORS
"""How patches can be graded (``run.evaluator``, ``swerve run --eval``), from swerve's own
list."""

PathLike = Union[str, "os.PathLike[str]"]
Settings = Union[Mapping[str, Any], Iterable[str]]
"""``--set`` overrides: ``{"agent.max_steps": 30}`` or ``["agent.max_steps=30"]``."""


def _sets(settings: Optional[Settings]) -> List[str]:
    if settings is None:
        return []
    if isinstance(settings, Mapping):
        return [f"{key}={value if isinstance(value, str) else json.dumps(value)}" for key, value in settings.items()]
    return [str(setting) for setting in settings]


def _path(path: Optional[PathLike]) -> Optional[str]:
    return None if path is None else os.fspath(path)


@dataclass(frozen=True)
class Task:
    """One SWE-bench task (a row of a task file). ``source`` is the file it was read from:
    its location finds the task's repository, as for the command line."""

    instance_id: str
    repo: str
    base_commit: str
    problem_statement: str
    patch: Optional[str]
    test_patch: Optional[str]
    FAIL_TO_PASS: List[str]
    PASS_TO_PASS: List[str]
    hints_text: Optional[str] = None
    created_at: Optional[str] = None
    version: Optional[str] = None
    environment_setup_commit: Optional[str] = None
    source: str = ""
    row: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    """The whole row as the task file holds it (extra fields included)."""

    @classmethod
    def _from_row(cls, row: Dict[str, Any], source: str) -> "Task":
        return cls(
            instance_id=row["instance_id"],
            repo=row["repo"],
            base_commit=row["base_commit"],
            problem_statement=row.get("problem_statement", ""),
            patch=row.get("patch"),
            test_patch=row.get("test_patch"),
            FAIL_TO_PASS=list(row.get("FAIL_TO_PASS") or []),
            PASS_TO_PASS=list(row.get("PASS_TO_PASS") or []),
            hints_text=row.get("hints_text"),
            created_at=row.get("created_at"),
            version=row.get("version"),
            environment_setup_commit=row.get("environment_setup_commit"),
            source=source,
            row=row,
        )

    def to_dict(self) -> Dict[str, Any]:
        """The row as the task file holds it."""
        return dict(self.row)


def load_tasks(path: PathLike) -> List[Task]:
    """The tasks of a SWE-bench JSON or JSONL file (errors name the file, record and field)."""
    source = os.path.abspath(os.fspath(path))
    return [Task._from_row(json.loads(row), source) for row in _swerve.load_tasks(source)]


def replay_turns(
    demo: PathLike, config: Optional[PathLike] = None, *, presets: Sequence[str] = (), set: Optional[Settings] = None
) -> List[str]:
    """What the replay model (``--model replay``) answers, turn by turn, for a demonstration
    file (``examples/demos/<instance_id>.json``): its tool calls written in the configured
    tool-call format, ready for :meth:`Env.step`."""
    return _swerve.replay_turns(os.fspath(demo), _path(config), list(presets), _sets(set))


def config_toml(config: Optional[PathLike] = None, *, presets: Sequence[str] = (), set: Optional[Settings] = None) -> str:
    """The resolved configuration as TOML (what ``swerve config show`` prints)."""
    return _swerve.resolve_config(_path(config), list(presets), _sets(set))


class Step(NamedTuple):
    """What :meth:`Env.step` returns, gym-style: ``observation`` (the tool's output, or what
    the model is told when its reply could not be read), ``reward`` (0 for a step: the
    reward comes from :meth:`Env.evaluate`), ``done`` (the episode ended: the agent called
    ``finish``, or a limit, a repeated call or too many format errors ended it) and ``info``:
    ``messages`` (the next prompt, what the policy must be sent next under the configured
    context policy: with ``--preset agile`` the windowed context with digests, not the
    whole history; ``None`` once done), ``prompt_ids`` (its token ids, given
    ``run.tokenizer``), ``sample`` (this step's training sample: ``prompt_ids``,
    ``response_ids``, ``logprobs``, ``mask``), ``message`` (the observation as the chat
    message the format sends back), ``step``, ``call``, ``is_error``, ``format_error``,
    ``exit_reason`` and ``exit_detail``."""

    observation: str
    reward: float
    done: bool
    info: Dict[str, Any]


@dataclass(frozen=True)
class Evaluation:
    """A graded patch. ``reward`` is 1 resolved, 0 not (or the reward model's score), and
    ``None`` when grading failed for a reason that is not the model's (``report
    ["error_class"] == "infra"``): leave such a rollout out of training. From
    :meth:`Env.evaluate`, ``reward`` is the reward ``[reward]`` shapes from the episode's
    record, as ``swerve run --eval`` records it (turn penalty, compression bonus, format
    penalties), ``reward_terms`` its terms, ``score`` the grade's own score and
    ``exit_reason`` how the episode ended."""

    instance_id: str
    resolved: bool
    reward: Optional[float]
    patch: str
    report: Dict[str, Any]
    reward_terms: Optional[Dict[str, Any]] = None
    score: Optional[float] = None
    exit_reason: Optional[str] = None

    @property
    def infra_failure(self) -> bool:
        """Grading failed for the machinery's reason (no reward)."""
        return self.report.get("error_class") == "infra"


Action = Union[str, Mapping[str, Any]]
"""A step's action: a model reply's text; an OpenAI assistant message (``content``,
``tool_calls``); or a tool call ``{"name": ..., "arguments": {...}}``."""


class Env:
    """A gym-style environment over one task: a sandboxed copy-on-write workspace of its
    repository with swerve's tools.

    ``config`` is a configuration file (default ``./swerve.toml`` when present), ``presets``
    names presets and ``set`` overrides keys, as ``swerve --config --preset --set`` do.
    ``id`` names the environment in logs and grading (default: the task id and a random
    suffix, unique per environment). Use it as a context manager, or call :meth:`close`.
    """

    def __init__(
        self,
        task: Task,
        config: Optional[PathLike] = None,
        *,
        presets: Sequence[str] = (),
        set: Optional[Settings] = None,
        id: Optional[str] = None,
        log_dir: Optional[PathLike] = None,
    ) -> None:
        self.task = task
        self.id = id or f"{task.instance_id}-{uuid.uuid4().hex[:12]}"
        self._own_logs = log_dir is None
        self.log_dir = os.fspath(log_dir) if log_dir is not None else tempfile.mkdtemp(prefix="swerve-eval-")
        try:
            self._native = _swerve.NativeEnv(
                json.dumps(task.to_dict()),
                task.source,
                self.log_dir,
                _path(config),
                list(presets),
                _sets(set),
            )
        except BaseException:
            self._remove_logs()
            raise
        self._resets = 0

    def reset(self) -> Dict[str, Any]:
        """Opens a fresh workspace (closing the previous one) and returns the opening:
        ``messages`` (system and first user message), ``tools`` (OpenAI tool objects for the
        native format, else empty: the tools are described in the messages), ``tool_specs``,
        ``format``, ``max_steps``, ``id`` and ``instance_id``."""
        id = self.id if self._resets == 0 else f"{self.id}-r{self._resets}"
        self._resets += 1
        return json.loads(self._native.reset(id))

    def step(self, action: Action) -> Step:
        """Takes one action (see :data:`Action`) through the agent's step, as ``swerve run``
        takes a model's reply. An assistant message may also carry ``reasoning_content``,
        and the reply's ``response_ids`` and ``logprobs`` as sampled (the step's
        ``sample`` then uses them)."""
        if isinstance(action, str):
            raw = self._native.step_reply(action, "[]")
        elif "name" in action and "arguments" in action:
            arguments = action["arguments"]
            if isinstance(arguments, str):
                arguments = json.loads(arguments)
            raw = self._native.step_call(str(action["name"]), json.dumps(arguments))
        elif "content" in action or "tool_calls" in action:
            raw = self._native.step_reply(
                action.get("content") or "",
                json.dumps(list(action.get("tool_calls") or [])),
                action.get("reasoning_content"),
                action.get("response_ids"),
                action.get("logprobs"),
            )
        else:
            raise SwerveError(
                "step(action): give a model reply (text), an assistant message ({'content', 'tool_calls'}) "
                "or a tool call ({'name', 'arguments'})"
            )
        result = json.loads(raw)
        observation = result.pop("observation")
        done = bool(result.pop("done"))
        return Step(observation, 0.0, done, result)

    @property
    def done(self) -> bool:
        """Whether the episode has ended."""
        return self._native.is_done()

    def patch(self) -> str:
        """The workspace's diff against the task's base commit."""
        return self._native.patch()

    def evaluate(self, trajectory: Optional[PathLike] = None) -> Evaluation:
        """Grades the current patch by SWE-bench's rules, in a fresh workspace (this one
        stays as it is), and shapes the reward by the configuration's ``[reward]`` from the
        episode's record. With ``trajectory`` (a file path), the graded episode is also
        written there as a swerve trajectory, as ``swerve run --eval`` writes one: put the
        files under ``DIR/trajectories/`` and ``swerve data export --run DIR`` or ``swerve
        data advantages --run DIR`` read a trainer's rollouts as a run's."""
        path = _path(trajectory)
        if path is not None:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        graded = json.loads(self._native.evaluate(path))
        return Evaluation(
            graded["instance_id"],
            graded["resolved"],
            graded["reward"],
            graded["patch"],
            graded["report"],
            graded["reward_terms"],
            graded["score"],
            graded["exit_reason"],
        )

    def close(self) -> None:
        """Destroys the workspace; the environment can be reset again."""
        self._native.close()

    def _remove_logs(self) -> None:
        if self._own_logs:
            shutil.rmtree(self.log_dir, ignore_errors=True)

    def __enter__(self) -> "Env":
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
        self._remove_logs()

    def __del__(self) -> None:
        if getattr(self, "_own_logs", False):
            self._remove_logs()


class AsyncEnv:
    """:class:`Env` for asyncio: each call runs in a worker thread (the GIL is released
    while Rust works), so many environments step at once from one event loop."""

    def __init__(self, task: Task, config: Optional[PathLike] = None, **options: Any) -> None:
        self.env = Env(task, config, **options)
        self.id = self.env.id
        self.task = task

    async def reset(self) -> Dict[str, Any]:
        return await asyncio.to_thread(self.env.reset)

    async def step(self, action: Action) -> Step:
        return await asyncio.to_thread(self.env.step, action)

    async def patch(self) -> str:
        return await asyncio.to_thread(self.env.patch)

    async def evaluate(self, trajectory: Optional[PathLike] = None) -> Evaluation:
        return await asyncio.to_thread(self.env.evaluate, trajectory)

    async def close(self) -> None:
        await asyncio.to_thread(self.env.close)

    @property
    def done(self) -> bool:
        return self.env.done

    async def __aenter__(self) -> "AsyncEnv":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.to_thread(self.env.__exit__, *exc)


def evaluate(
    tasks: Union[PathLike, Sequence[Task]],
    predictions: Union[PathLike, Mapping[str, Optional[str]], None] = None,
    *,
    gold: bool = False,
    config: Optional[PathLike] = None,
    presets: Sequence[str] = (),
    set: Optional[Settings] = None,
    log_dir: Optional[PathLike] = None,
    workers: int = 4,
) -> Dict[str, Evaluation]:
    """Grades patches by SWE-bench's rules, as ``swerve eval`` does: ``predictions`` is a
    predictions file (``.json`` / ``.jsonl``) or ``{instance_id: patch}``; ``gold=True``
    grades the tasks' own patches. Returns the graded tasks by id (tasks without a
    prediction are not graded)."""
    if isinstance(tasks, (str, os.PathLike)):
        loaded = load_tasks(tasks)
    else:
        loaded = list(tasks)
    if not loaded:
        raise SwerveError("evaluate: no tasks given")
    sources = {task.source for task in loaded}
    if len(sources) != 1:
        raise SwerveError(f"evaluate: the tasks come from {len(sources)} files; give tasks of one file at a time")
    if gold:
        patches: Dict[str, Optional[str]] = {task.instance_id: task.patch for task in loaded}
    elif predictions is None:
        raise SwerveError("evaluate: give predictions (a file or {instance_id: patch}) or gold=True")
    elif isinstance(predictions, (str, os.PathLike)):
        read = json.loads(_swerve.load_predictions(os.fspath(predictions)))
        for error in read["errors"]:
            warnings.warn(f"{error} (skipped)", stacklevel=2)
        wanted = {task.instance_id for task in loaded}
        patches = {id: patch for id, patch in read["patches"].items() if id in wanted}
    else:
        patches = dict(predictions)
    if not patches:
        return {}
    own_logs = log_dir is None
    logs = tempfile.mkdtemp(prefix="swerve-eval-") if own_logs else os.fspath(log_dir)
    try:
        graded = json.loads(
            _swerve.evaluate(sources.pop(), json.dumps(patches), logs, workers, _path(config), list(presets), _sets(set))
        )
    finally:
        if own_logs:
            shutil.rmtree(logs, ignore_errors=True)
    return {
        id: Evaluation(id, bool(result["report"].get("resolved")), result["reward"], patches[id] or "", result["report"])
        for id, result in graded.items()
    }


def run(
    tasks: PathLike,
    out: PathLike,
    *,
    ids: Sequence[str] = (),
    redo: bool = False,
    config: Optional[PathLike] = None,
    presets: Sequence[str] = (),
    set: Optional[Settings] = None,
) -> Dict[str, Any]:
    """Runs the agent on the tasks of the file ``tasks`` (those in ``ids``, all when empty),
    ``run.samples`` rollouts each, ``run.concurrency`` at once, into the run directory ``out``,
    as ``swerve run`` does: trajectories, ``preds.jsonl``, ``summary.json`` and
    ``config.toml`` there, finished rollouts kept unless ``redo``, resuming with settings
    that change results refused. Returns the summary (``summary.json``). The model is the
    configuration's (``set={"model.name": "replay"}`` replays the demonstrations)."""
    summary = _swerve.run(
        os.fspath(tasks), os.fspath(out), list(ids), redo, _path(config), list(presets), _sets(set)
    )
    return json.loads(summary)


def export(
    format: str,
    run: Optional[PathLike] = None,
    files: Sequence[PathLike] = (),
    *,
    min_reward: Optional[float] = None,
    max_response_len: Optional[int] = None,
    tokenizer: Optional[PathLike] = None,
    chat_template: Optional[PathLike] = None,
    config: Optional[PathLike] = None,
    presets: Sequence[str] = (),
    set: Optional[Settings] = None,
) -> Iterator[Dict[str, Any]]:
    """The trainer rows (``format``: one of :data:`EXPORT_FORMATS`) of a run directory's
    trajectories or of trajectory files, as ``swerve data export`` writes them
    (docs/training.md): rewarded with ``[reward]``, trajectories with no reward (infra
    failures) left out with a warning. ``tokenizer`` re-tokenizes steps without captured
    ids (``--retokenize``)."""
    read = json.loads(
        _swerve.export(
            _path(run),
            [os.fspath(file) for file in files],
            format,
            min_reward,
            max_response_len,
            _path(tokenizer),
            _path(chat_template),
            _path(config),
            list(presets),
            _sets(set),
        )
    )
    for warning in read["warnings"]:
        warnings.warn(warning, stacklevel=2)
    if read["no_reward"]:
        warnings.warn(
            f"{len(read['no_reward'])} trajectories left out with no reward (grading failed for the machinery's reason): "
            + ", ".join(read["no_reward"]),
            stacklevel=2,
        )
    return iter(read["rows"])


@dataclass(frozen=True)
class Trajectory:
    """A swerve trajectory file: ``header`` (ids, configuration, prompt), ``steps`` and
    ``outcome`` (``None`` while the run goes on), as docs/trajectories.md describes."""

    header: Dict[str, Any]
    steps: List[Dict[str, Any]]
    outcome: Optional[Dict[str, Any]]
    partial_line: Optional[int] = None
    """A cut-off last line (a crash while it was written) that was dropped: its number."""

    @property
    def id(self) -> str:
        return self.header["id"]

    @property
    def instance_id(self) -> str:
        return self.header["instance_id"]


def read_trajectory(path: PathLike) -> Trajectory:
    """Reads a swerve trajectory (``<run>/trajectories/<id>.jsonl``)."""
    read = json.loads(_swerve.read_trajectory(os.fspath(path)))
    return Trajectory(read["header"], read["steps"], read["outcome"], read["partial_line"])
