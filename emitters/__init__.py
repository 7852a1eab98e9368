"""Emitters: turn a run spec into paired Harbor task directories.

May import (pyproject's layers contract): ``config`` and every layer below it (``backends``,
``agents``, ``judges``, ``cases``, ``inputs``, ``verifier``, ``core``).
"""

from aces_bench.emitters.emit import EmitResult, EmittedTask, emit_study, validate_task_dirs

__all__ = ["EmitResult", "EmittedTask", "emit_study", "validate_task_dirs"]
