"""A small client for `swerve serve` (docs/serve.md), on `requests` alone.

    client = SwerveClient("http://127.0.0.1:8765", token=os.environ["SWERVE_SERVE_TOKEN"])
    answer = client.rollout(task_id="...", model="Qwen/Qwen3-8B",
                            base_url="http://127.0.0.1:8000/v1",
                            overrides={"agent.capture_tokens": True})

A 429 (the service is full) is retried after its Retry-After, up to `max_waits` times;
every other error raises `SwerveError` with the service's message and the field at fault.
"""

import time

import requests


class SwerveError(RuntimeError):
    """An error answer of the service: its HTTP status, message and field."""

    def __init__(self, status, message, field=None):
        where = f" (field {field})" if field else ""
        super().__init__(f"swerve serve answered {status}: {message}{where}")
        self.status = status
        self.field = field


def _given(**fields):
    """The fields given (those not None), to send as they are."""
    return {name: value for name, value in fields.items() if value is not None}


class SwerveClient:
    def __init__(self, url, token, timeout=3600.0, max_waits=120):
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.max_waits = max_waits
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {token}"

    def _call(self, method, path, body=None):
        for _ in range(self.max_waits + 1):
            response = self.session.request(
                method, self.url + path, json=body, timeout=self.timeout
            )
            if response.status_code == 429:
                time.sleep(float(response.headers.get("Retry-After", "5")))
                continue
            try:
                answer = response.json()
            except ValueError:
                answer = {"error": {"message": response.text}}
            if response.status_code != 200:
                error = answer.get("error", {})
                raise SwerveError(response.status_code, error.get("message"), error.get("field"))
            return answer
        raise SwerveError(429, f"still full after {self.max_waits} waits")

    def rollout(self, model, task_id=None, task=None, base_url="", sampling=None,
                session_id=None, overrides=None, evaluate=True):
        """Runs one rollout to its end: trajectory, reward, tokens, patch."""
        body = {"model": model, "base_url": base_url, "evaluate": evaluate,
                "sampling": sampling or {}, "overrides": overrides or {},
                **_given(task_id=task_id, task=task, session_id=session_id)}
        return self._call("POST", "/v1/rollouts", body)

    def status(self, rollout_id):
        return self._call("GET", f"/v1/rollouts/{rollout_id}")

    def create_env(self, task_id=None, task=None, session_id=None, overrides=None):
        body = {"overrides": overrides or {},
                **_given(task_id=task_id, task=task, session_id=session_id)}
        return self._call("POST", "/v1/envs", body)

    def step(self, env_id, text=None, call=None, tool_calls=None):
        """One step: a model reply (`text`, with `tool_calls` for native calls) or a call."""
        body = {"call": call} if call is not None else {"text": text, "tool_calls": tool_calls or []}
        return self._call("POST", f"/v1/envs/{env_id}/step", body)

    def evaluate(self, env_id):
        return self._call("POST", f"/v1/envs/{env_id}/evaluate")

    def delete_env(self, env_id):
        return self._call("DELETE", f"/v1/envs/{env_id}")
