"""Emitters: turn a run spec into paired Harbor task directories."""

from aces_bench.emitters.emit import EmitResult, EmittedTask, emit_study, validate_task_dirs

__all__ = ["EmitResult", "EmittedTask", "emit_study", "validate_task_dirs"]
