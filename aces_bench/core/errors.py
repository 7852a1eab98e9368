"""One exception family for everything a user can get wrong.

Every error names where the problem is (a file, a config key or a case id) and how to
fix it. The CLI prints ``str(error)`` and exits non-zero without a traceback.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only named in annotations: `aces-bench --help` starts without pydantic
    from pydantic import ValidationError


class AcesError(Exception):
    """A problem the user can fix. Printed without a traceback."""

    def __init__(self, message: str, *, where: str | Path | None = None, fix: str | None = None):
        self.message = message
        self.where = str(where) if where is not None else None
        self.fix = fix
        super().__init__(str(self))

    def __str__(self) -> str:
        head = f"{self.where}: {self.message}" if self.where else self.message
        return f"{head}\n  fix: {self.fix}" if self.fix else head


class ConfigError(AcesError):
    """The composed Hydra config or the run spec is invalid."""


class SkillError(AcesError):
    """A skill folder, its SKILL.md or its frontmatter is invalid."""


class EvalsError(AcesError):
    """A skill's evaluation cases are invalid."""


class EmitError(AcesError):
    """Task directories could not be emitted or do not load in Harbor."""


class BackendError(AcesError):
    """An execution backend cannot honour a task or is not available."""


class RunError(AcesError):
    """A job could not be run or its results could not be collected."""


class ReportError(AcesError):
    """Stored results cannot be read or reported."""


def dotted(loc: Iterable[str | int]) -> str:
    """Join a pydantic error location into a key a user can type back (``a.b[0].c``)."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "<root>"


def validation_lines(err: ValidationError, prefix: str = "") -> list[str]:
    """One line per pydantic error: ``key: message (got value)``."""
    lines = []
    for e in err.errors(include_url=False):
        key = dotted(e["loc"])
        if prefix:
            key = f"{prefix}.{key}" if key != "<root>" else prefix
        msg = e["msg"].removeprefix("Value error, ")
        got = e.get("input")
        # Whole-object validators receive the object itself: echoing it helps nobody.
        suffix = ""
        if e["type"] != "missing" and not isinstance(got, (dict, list)):
            shown = repr(got)
            suffix = f" (got {shown[:57] + '...' if len(shown) > 60 else shown})"
        lines.append(f"{msg}{suffix}" if key == "<root>" else f"{key}: {msg}{suffix}")
    return lines


def from_validation(
    err: ValidationError,
    *,
    cls: type[AcesError] = ConfigError,
    where: str | Path | None = None,
    prefix: str = "",
    fix: str | None = None,
) -> AcesError:
    """Turn a pydantic ValidationError into a user error listing dotted keys."""
    lines = validation_lines(err, prefix)
    message = "invalid values:\n    " + "\n    ".join(lines)
    return cls(message, where=where, fix=fix)


class OutputError(AcesError):
    """An output could not be written: the disk is full, the folder is read-only or not writable."""


# errno -> (what happened, how to fix it), for the failures of a write a user can fix.
_WRITE_ERRNOS = {
    "ENOSPC": ("no space left on the device", "free space on that disk, or write the output elsewhere"),
    "EDQUOT": ("the disk quota is exhausted", "free space within the quota, or write the output elsewhere"),
    "EROFS": ("the folder is on a read-only file system", "write the output to a writable folder"),
    "EACCES": ("permission denied", "make the folder writable for this user, or write the output elsewhere"),
    "EPERM": ("operation not permitted", "make the folder writable for this user, or write the output elsewhere"),
}


def output_error(exc: BaseException, *, where: str | Path | None = None, what: str = "cannot write") -> AcesError | None:
    """A one-line OutputError (file, cause, fix) for a full disk or an unwritable folder, else None.

    ``where`` defaults to the file the OSError names. Commands choose their own output
    flag in the fix text through ``what``/the caller; the CLI uses this as its last net
    so no write failure prints a traceback.
    """
    import errno as _errno

    if not isinstance(exc, OSError) or exc.errno is None:
        return None
    name = _errno.errorcode.get(exc.errno)
    if name not in _WRITE_ERRNOS:
        return None
    cause, fix = _WRITE_ERRNOS[name]
    target = where if where is not None else (exc.filename or None)
    return OutputError(f"{what}: {cause} ({name})", where=target,
                       fix=f"{fix} (output_dir=... for a study, --out for the other commands)")
