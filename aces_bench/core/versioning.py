"""Schema versions of the artifacts aces-bench writes, and reading them back.

Every on-disk record is one pydantic model derived from ``VersionedRecord``: it
names its artifact, current version, how to regenerate it and its migrations as
class variables, and gets its ``schema_version`` field and its ``mode="before"``
validator from the base. The validator calls ``migrate`` which brings an older
payload up to the current version and refuses one it cannot read: a version newer than this aces-bench
(the fix is to upgrade aces-bench) or one it never wrote (the fix is to regenerate
the file). Readers validate through ``load_model``, which turns either refusal into
an ``AcesError`` naming the file and the fix, and any other invalid value into one
line per dotted key.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ValidationError, model_validator

from aces_bench import __version__
from aces_bench.core.errors import AcesError, ReportError, from_validation

Migration = Callable[[dict[str, Any]], dict[str, Any]]


class SchemaVersionError(ValueError):
    """A payload's ``schema_version`` is one this aces-bench cannot read.

    A ValueError so that pydantic reports it as a validation error when raised in a
    validator; ``load_model`` finds it again and shows its own message and fix.
    """

    def __init__(self, artifact: str, found: str, readable: tuple[str, ...], regenerate: str):
        self.artifact = artifact
        self.found = found
        self.readable = readable
        self.newer = _is_newer(found, readable)
        if self.newer:
            self.message = (
                f"{artifact} schema_version {found!r} is newer than this aces-bench ({__version__}) reads "
                f"({', '.join(readable)})"
            )
            self.fix = f"upgrade aces-bench to the version that wrote this file, or {regenerate}"
        else:
            self.message = f"{artifact} schema_version {found!r} is not one this aces-bench reads ({', '.join(readable)})"
            self.fix = f"{regenerate} (this is aces-bench {__version__})"
        # The fix travels in the text too: a caller that validates the model directly sees it.
        super().__init__(f"{self.message}; fix: {self.fix}")


def _as_number(version: str) -> int | None:
    return int(version) if version.isdigit() else None


def _is_newer(found: str, readable: tuple[str, ...]) -> bool:
    number = _as_number(found)
    known = [n for n in map(_as_number, readable) if n is not None]
    return number is not None and bool(known) and number > max(known)


def migrate(
    data: Any,
    *,
    artifact: str,
    current: str,
    regenerate: str,
    migrations: Mapping[str, Migration] | None = None,
    unversioned: str = "1",
) -> Any:
    """Bring ``data`` to schema version ``current`` (pure; returns a new dict).

    ``migrations`` maps a version to the function that turns a payload of that version
    into one of the next version; they are applied in turn until ``current``. A payload
    without ``schema_version`` is taken as ``unversioned``. Anything but a dict is
    returned untouched for pydantic to reject. Raises ``SchemaVersionError`` for a
    version that is neither ``current`` nor migratable.
    """
    if not isinstance(data, dict):
        return data
    migrations = dict(migrations or {})
    readable = tuple(sorted({*migrations, current}, key=lambda v: (_as_number(v) is None, _as_number(v) or 0, v)))
    raw = data.get("schema_version", unversioned)
    version = str(raw)
    if version not in readable:
        raise SchemaVersionError(artifact, version, readable, regenerate)
    out = dict(data)
    while version != current:
        out = migrations[version](out)
        version = str(out.get("schema_version"))
        if version not in readable:  # a migration must hand over a version this reader knows
            raise SchemaVersionError(artifact, version, readable, regenerate)
    out["schema_version"] = current
    return out


class VersionedRecord(BaseModel):
    """Base of every artifact aces-bench writes: its ``schema_version`` and migration hook, once.

    A subclass sets ``SCHEMA_ARTIFACT`` (the name in messages), ``SCHEMA_VERSION`` (what
    it writes), ``SCHEMA_REGENERATE`` (the fix when a file cannot be read) and, when an
    older version can be read, ``SCHEMA_MIGRATIONS`` (version -> function to the next
    version). The ``schema_version`` field defaults to ``SCHEMA_VERSION``; a subclass
    whose stored field has another type (an int, a Literal) declares it itself.
    """

    SCHEMA_ARTIFACT: ClassVar[str] = "record"
    SCHEMA_VERSION: ClassVar[str] = "1"
    SCHEMA_REGENERATE: ClassVar[str] = "regenerate the file"
    SCHEMA_MIGRATIONS: ClassVar[Mapping[str, Migration]] = {}
    SCHEMA_UNVERSIONED: ClassVar[str] = "1"

    schema_version: str = "1"

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        field = cls.model_fields["schema_version"]
        if "schema_version" not in cls.__dict__.get("__annotations__", {}) and field.default != cls.SCHEMA_VERSION:
            field.default = cls.SCHEMA_VERSION
            cls.model_rebuild(force=True)

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: Any) -> Any:
        return migrate(data, artifact=cls.SCHEMA_ARTIFACT, current=cls.SCHEMA_VERSION,
                       regenerate=cls.SCHEMA_REGENERATE, migrations=cls.SCHEMA_MIGRATIONS,
                       unversioned=cls.SCHEMA_UNVERSIONED)


def version_error(err: ValidationError) -> SchemaVersionError | None:
    """The SchemaVersionError behind a validation error, if that is what failed."""
    for e in err.errors(include_url=False):
        cause = (e.get("ctx") or {}).get("error")
        if isinstance(cause, SchemaVersionError):
            return cause
    return None


def load_model[M: BaseModel](
    model: type[M],
    data: Any,
    *,
    where: str | Path,
    fix: str,
    cls: type[AcesError] = ReportError,
    prefix: str = "",
) -> M:
    """Validate ``data`` (a dict, or JSON text/bytes) as ``model`` or raise ``cls``.

    A version refusal keeps its own message and fix; other errors list dotted keys
    (under ``prefix``, e.g. ``line 3``) with ``fix``.
    """
    try:
        if isinstance(data, (str, bytes, bytearray)):
            return model.model_validate_json(data)
        return model.model_validate(data)
    except ValidationError as err:
        refused = version_error(err)
        if refused is not None:
            message = f"{prefix}: {refused.message}" if prefix else refused.message
            raise cls(message, where=where, fix=refused.fix) from None
        raise from_validation(err, cls=cls, where=where, prefix=prefix, fix=fix) from None


def read_record[M: BaseModel](model: type[M], path: Path, *, what: str, regenerate: str,
                              invalid_fix: str | None = None) -> M:
    """The record file at ``path`` validated (and migrated) as ``model``: a file that cannot be
    read, or does not validate, is a ReportError naming ``what`` and ``path``, with
    ``regenerate`` (for a bad file: ``invalid_fix``, default "<regenerate> or restore the file")
    as the fix."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ReportError(f"cannot read the {what}: {exc.strerror}", where=path, fix=regenerate) from None
    return load_model(model, data, where=path, fix=invalid_fix or f"{regenerate} or restore the file")
