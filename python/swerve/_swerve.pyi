"""Type stubs of the compiled binding (crates/swerve-python). Values cross as JSON text;
`swerve` (the package) is the API over them."""

from typing import List, Optional, Tuple

class SwerveError(Exception):
    """An error of swerve: its message is the one the command line prints."""

EXPORT_FORMATS: Tuple[str, ...]
EVALUATORS: Tuple[str, ...]

def set_init_command(program: str, args: List[str]) -> bool: ...
def load_tasks(path: str) -> List[str]: ...
def resolve_config(file: Optional[str] = None, presets: List[str] = ..., sets: List[str] = ...) -> str: ...
def read_trajectory(path: str) -> str: ...
def load_predictions(path: str) -> str: ...
def replay_turns(demo: str, config_file: Optional[str] = None, presets: List[str] = ..., sets: List[str] = ...) -> List[str]: ...
def export(
    run: Optional[str],
    files: List[str],
    format: str,
    min_reward: Optional[float] = None,
    max_response_len: Optional[int] = None,
    tokenizer: Optional[str] = None,
    chat_template: Optional[str] = None,
    config_file: Optional[str] = None,
    presets: List[str] = ...,
    sets: List[str] = ...,
) -> str: ...
def evaluate(
    task_file: str,
    patches: str,
    log_dir: str,
    workers: int = 4,
    config_file: Optional[str] = None,
    presets: List[str] = ...,
    sets: List[str] = ...,
) -> str: ...

def run(
    task_file: str,
    out: str,
    ids: List[str] = ...,
    redo: bool = False,
    config_file: Optional[str] = None,
    presets: List[str] = ...,
    sets: List[str] = ...,
) -> str: ...

class NativeEnv:
    def __init__(
        self,
        task: str,
        task_file: str,
        log_dir: str,
        config_file: Optional[str] = None,
        presets: List[str] = ...,
        sets: List[str] = ...,
    ) -> None: ...
    def reset(self, id: str) -> str: ...
    def step_call(self, name: str, arguments: str) -> str: ...
    def step_reply(
        self,
        reply: str,
        tool_calls: str,
        reasoning: Optional[str] = None,
        response_ids: Optional[List[int]] = None,
        logprobs: Optional[List[float]] = None,
    ) -> str: ...
    def is_done(self) -> bool: ...
    def patch(self) -> str: ...
    def evaluate(self, trajectory: Optional[str] = None) -> str: ...
    def close(self) -> None: ...
