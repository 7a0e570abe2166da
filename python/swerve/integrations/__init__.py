"""Trainer integrations: each module adapts :class:`swerve.Env` and swerve's data to one
trainer's own interface, and imports that trainer only when it is used.

- :mod:`swerve.integrations.skyrl`: a skyrl-gym ``BaseTextEnv`` (``env_class: swerve``) and
  ``TrajectoryID``-keyed step-wise outputs with unique session ids;
- :mod:`swerve.integrations.verl`: an async token-in/token-out agent loop returning
  ``AgentLoopOutput`` fields (``metrics`` included), truncated to the configured lengths;
- :mod:`swerve.integrations.openrlhf`: a multi-turn ``AgentInstance``, the ``AgentExecutor``
  ``--train.agent_func_path`` loads, and the reward
  endpoint's prompt-mismatch rule;
- :mod:`swerve.integrations.rllm`: an rLLM ``BaseEnv`` wrapper and an agent sending
  swerve's prompt (``SwerveRllmAgent``).

TRL and LLaMA-Factory read files: ``swerve data export --format trl|llamafactory`` writes
them; ``swerve data prompts`` writes the prompt datasets of the trainers above.

Where the context policy rewrites the history each turn (``--preset agile``: SWE-AGILE's
reasoning window), verl, SkyRL and rLLM train step-wise (``run_step_wise_episode``,
``run_step_wise_trajectory``, ``SwerveRllmAgent``): one sample per step, its prompt the
windowed context, the trajectory's reward broadcast; the paths that keep one growing
history (verl's agent loop, SkyRL's ``BaseTextEnv``, OpenRLHF) refuse such a preset.

Every integration gives no reward (``None``, or leaves the sample out where the trainer
needs a number) when grading failed for the machinery's reason, rather than 0.
"""
