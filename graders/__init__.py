"""Graders: pure functions from a trial's evidence to metric scores.

Entry points (import the module you need; nothing is imported here, so importing one
grader never pulls in the judge layer or Harbor's job machinery):

- ``deterministic.grade_deterministic(inp)``: security, skill_execution,
  skill_efficiency and the self_correction section.
- ``judged.grade_judged(inp, judge)``: accuracy, goal_accuracy, behavior_check
  (prompts to an off-host judge redacted).
- ``author.discover_author_graders(skill_dir)`` / ``author.run_author_graders(...)``:
  a skill's own reward contract (``evals/graders/*.py|*.sh``), run on the host.
- ``modes.decide(grading, metrics, reward)``: composite and pass per grading mode.
- ``dimensions.dimension_scores(metrics)`` / ``dimensions.outcome_only(metrics)``.
- ``external.find_trials`` / ``external.subjects_for``: any Harbor job dir.

Per-trial orchestration lives in ``aces_bench.grading.grade`` (``StudyGrader``,
``grade_subject``) and ``aces_bench.grading.cli`` (``aces-bench grade``). What a grader
returns, ``MetricResult``, is a record (``aces_bench.records.results``).

May import (pyproject's layers contract): ``run`` and every layer below it (``emitters``,
``config``, ``agents``, ``judges``, ``cases``, ``records``, ``core``, ...); never
``grading``.
"""
