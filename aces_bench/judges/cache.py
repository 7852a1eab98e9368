"""A persistent cache of validated judge replies, so re-grading costs no judge call.

One JSON file per entry under the cache folder, named by a key over the judge model,
the prompt id, the prompt version and the sha256 of the exact input (system text,
user text and the reply schema). Changing any of them misses the cache; nothing is
ever invalidated by time. Only validated replies are stored: a failed call is retried
on the next run rather than remembered.

Each file is one ``CacheEntry``. An entry this aces-bench cannot read (damaged, or
written by a newer aces-bench sharing the cache folder) is a miss, never an error that
stops grading; a newer one is logged once per run so the user knows why it re-judges.
``read_cache_entry`` is the strict reader for tools and tests.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from aces_bench.core.io import write_json
from aces_bench.core.versioning import VersionedRecord, read_record, version_error

CACHE_SCHEMA_VERSION = "1"
_REGENERATE = "delete the entry and re-grade"
log = logging.getLogger(__name__)
T = TypeVar("T", bound=BaseModel)
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def input_sha256(system: str, user: str, schema: type[BaseModel]) -> str:
    """Hash of everything the judge sees; the schema counts because it shapes the reply."""
    raw = json.dumps(
        {"system": system, "user": user, "schema": schema.model_json_schema()},
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def cache_key(model: str, prompt_id: str, prompt_version: str, input_hash: str) -> str:
    """The entry key: stable across runs and machines for the same judge and input."""
    raw = f"{model}\x1f{prompt_id}\x1f{prompt_version}\x1f{input_hash}"
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


class CacheEntry(VersionedRecord):
    """One cached judge reply, as stored on disk."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    SCHEMA_ARTIFACT: ClassVar[str] = "judge cache entry"
    SCHEMA_VERSION: ClassVar[str] = CACHE_SCHEMA_VERSION
    SCHEMA_REGENERATE: ClassVar[str] = _REGENERATE

    model: str
    prompt_id: str
    prompt_version: str
    input_sha256: str
    value: dict[str, Any]


def read_cache_entry(path: Path) -> CacheEntry:
    """One entry file, validated and migrated; a bad or newer entry is a ReportError naming it."""
    return read_record(CacheEntry, path, what="judge cache entry", regenerate=_REGENERATE, invalid_fix=_REGENERATE)


class JudgeCache:
    """File-per-entry store: ``<root>/<prompt_id>/<key>.json``, written atomically."""

    def __init__(self, root: str | Path):
        self.root = Path(root)
        self._warned_newer = False

    def _path(self, prompt_id: str, key: str) -> Path:
        return self.root / (_UNSAFE.sub("_", prompt_id) or "_") / f"{key}.json"

    def get(
        self,
        *,
        model: str,
        prompt_id: str,
        prompt_version: str,
        input_hash: str,
        schema: type[T],
    ) -> T | None:
        """The stored reply, validated by ``schema``; None on a miss or an unreadable entry.

        An entry that no longer validates (the schema changed shape without changing its
        JSON schema, or the file was damaged) is treated as a miss and overwritten later.
        """
        key = cache_key(model, prompt_id, prompt_version, input_hash)
        path = self._path(prompt_id, key)
        try:
            entry = CacheEntry.model_validate_json(path.read_bytes())
            return schema.model_validate(entry.value)
        except ValidationError as err:
            refused = version_error(err)
            if refused is not None and refused.newer and not self._warned_newer:
                self._warned_newer = True
                log.warning("%s: %s; treated as a miss (%s)", path, refused.message, refused.fix)
            return None
        except OSError:
            return None

    def put(
        self,
        *,
        model: str,
        prompt_id: str,
        prompt_version: str,
        input_hash: str,
        value: BaseModel,
    ) -> Path:
        """Store a validated reply; concurrent writers of one key leave one whole file."""
        key = cache_key(model, prompt_id, prompt_version, input_hash)
        entry = CacheEntry(model=model, prompt_id=prompt_id, prompt_version=prompt_version,
                           input_sha256=input_hash, value=value.model_dump(mode="json"))
        return write_json(self._path(prompt_id, key), entry)
