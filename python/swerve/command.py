"""Where the ``swerve`` command is: the one ``pip install swerve`` put beside this
interpreter (the wheel carries it, as ruff's and uv's wheels carry theirs), else the first
``swerve`` on ``PATH``. ``python -m swerve ARGS`` runs it.

Pure Python and standard library only: :mod:`swerve.ray` uses it on every node.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from typing import Optional

__all__ = ["path"]


def path() -> Optional[str]:
    """The ``swerve`` executable to run, or ``None`` when there is none: the wheel's
    (installed into this interpreter's scripts directory, also for ``pip install --user``),
    else ``PATH``'s."""
    candidates = [sysconfig.get_path("scripts")]
    user_scheme = f"{os.name}_user"  # sysconfig.get_preferred_scheme is Python 3.10's
    if user_scheme in sysconfig.get_scheme_names():
        candidates.append(sysconfig.get_path("scripts", user_scheme))
    for directory in candidates:
        if directory:
            candidate = os.path.join(directory, "swerve")
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return candidate
    return shutil.which("swerve")


def main() -> None:
    """``python -m swerve``: replaces this process with the ``swerve`` command."""
    command = path()
    if command is None:
        sys.exit("swerve: the swerve command is not installed beside this Python "
                 "(pip install swerve) nor on PATH")
    os.execv(command, [command, *sys.argv[1:]])
