"""Helpers for the attack suite: the hostile fixture skill, canaries, file sweeps.

The suite plays a hostile skill author (``fixtures/hostile-colsum``: its script dumps
every process environment, ``~/.aws``, ``/etc/shadow`` and plants files on the way out)
and an unlucky operator. It reuses the harness and backend test helpers.
"""

from __future__ import annotations

from pathlib import Path

# The attack suite's own folder (its fixtures and the probe's files live there).
HERE = Path(__file__).resolve().parents[1] / "security"
HOSTILE_SKILL = HERE / "fixtures" / "hostile-colsum"

# Values no real run would hold; each one is searched for byte for byte.
CANARIES = {
    "ACES_CANARY_TOKEN": "canary-0f1e2d3c4b5a69788796a5b4c3d2e1f0",
    "OPENAI_API_KEY": "sk-canary-openai-5b7c9d1e3f5a7b9c1d3e5f7a",
    "AWS_SECRET_ACCESS_KEY": "canaryAWSsecret/0123456789abcdefghijklmnopq",
}


def files_containing(root: Path, needles: list[str]) -> list[str]:
    """Every file under ``root`` (not following symlinks) holding any of ``needles``."""
    raw = [n.encode() for n in needles]
    hits = []
    for path in sorted(root.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if any(n in data for n in raw):
            hits.append(str(path.relative_to(root)))
    return hits


def environ_of(pid: int) -> bytes:
    """A process's environment as the host sees it (b"" when it is gone)."""
    try:
        return Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return b""
