"""``python -m swerve ARGS``: the ``swerve`` command (see :mod:`swerve.command`)."""

from swerve.command import main

main()
