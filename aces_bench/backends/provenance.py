"""What the local sandbox records about each trial (``local-sandbox.json``) and how it is read.

Apart from the sandbox itself (``local.py``: bwrap, the egress relay and metering proxy,
Harbor's environment classes) so that a report, which only reads these records, does not
import what runs trials.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from pydantic import ConfigDict

from aces_bench.core.versioning import VersionedRecord, read_record

PROVENANCE_FILE = "local-sandbox.json"
_SANDBOX_REGENERATE = "re-run the trial on backend=local"
BOUNDARY_NOTE = ("a boundary against hostile skills: user namespace, no capabilities, no_new_privs, "
                 "seccomp, process limit; the verifier in a fresh sandbox")


def security_note(missing: dict[str, str]) -> str:
    """The one-line verdict the report shows for a trial's sandbox."""
    if not missing:
        return BOUNDARY_NOTE
    return ("isolation for honest workloads, not a security boundary against hostile code: missing "
            + "; ".join(f"{k} ({v})" for k, v in missing.items()))


class SandboxProvenance(VersionedRecord):
    """What ran a trial on the local backend; written as ``local-sandbox.json``."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    SCHEMA_ARTIFACT: ClassVar[str] = "local sandbox provenance"
    SCHEMA_REGENERATE: ClassVar[str] = _SANDBOX_REGENERATE

    schema_version: int = 1  # stored as a number (version "1")
    backend: str = "local"
    isolation: str
    security_note: str = ""
    dockerfile: str
    from_image: str
    image_used: bool = False
    userland: str
    network: str
    resource_limits_enforced: bool = False
    resource_limits: str = "not enforced"
    private_root: str
    # Each limit in force, as the report states it: keys memory, cpus, disk, network,
    # processes, isolation.
    limits: dict[str, str] = {}
    # Each protection of the sandbox as applied (bwrap.Sandbox.protections), and those
    # this host could not give, with why; "verifier" says how the verifier ran.
    protections: dict[str, str] = {}
    missing_protections: dict[str, str] = {}
    verifier: str = ""
    # What host-side copies of the trial's files cut or skipped (copyout.CopyReport).
    copy_out: dict = {}



def read_sandbox_provenance(path: Path) -> SandboxProvenance:
    """A trial's ``local-sandbox.json`` (the file or its trial dir), validated and migrated."""
    path = Path(path)
    if path.is_dir():
        path = path / PROVENANCE_FILE
    return read_record(SandboxProvenance, path, what="sandbox provenance", regenerate=_SANDBOX_REGENERATE)
