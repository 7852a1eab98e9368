"""Guards on everything a skill's evaluation assets point at.

Evaluation assets are read from folders aces-bench did not write: a fixture path
must stay inside the skill folder (symlinks included), files have size limits, and
text must be UTF-8. Each refusal is an EvalsError naming the file, case and fix.
"""

from __future__ import annotations

from pathlib import Path

from aces_bench.core.errors import EvalsError
from aces_bench.inputs.skills import read_text_file

MAX_ASSET_BYTES = 5_000_000  # evals.json / eval.config / EVAL.md
MAX_FIXTURE_BYTES = 50_000_000  # one staged fixture
MAX_CASE_FIXTURE_BYTES = 200_000_000  # all fixtures of one case


def read_asset_text(path: Path, *, root: Path | None = None, limit: int | None = None) -> str:
    """Read an evaluation asset as UTF-8 text, refusing symlinks out of ``root``, huge, binary and non-UTF-8 files."""
    path = Path(path)
    if root is not None and not path.resolve().is_relative_to(Path(root).resolve()):
        raise EvalsError(
            f"is a symlink pointing outside the skill folder (to {path.resolve()})",
            where=path,
            fix="replace the symlink with a regular file inside the skill folder",
        )
    return read_text_file(
        path,
        limit=MAX_ASSET_BYTES if limit is None else limit,
        error=EvalsError,
        size_fix="keep evaluation assets small; put large inputs in fixture files under evals/files/",
    )


def check_fixture(root: Path, case_id: str, src: str, where: Path) -> int:
    """Check one fixture of a case; return its size in bytes.

    ``root`` is the resolved skill folder. Every path component is checked, so a
    symlinked folder pointing outside is refused as well as a symlinked file.
    """
    path = root / src
    probe = root
    for part in Path(src).parts:
        probe = probe / part
        if probe.is_symlink() and not probe.resolve().is_relative_to(root):
            raise EvalsError(
                f"case {case_id!r}: fixture {src!r} goes through a symlink pointing outside the skill folder "
                f"({probe.relative_to(root).as_posix()} -> {probe.resolve()})",
                where=where,
                fix="copy the file into the skill folder (for example under evals/files/) instead of linking it",
            )
    resolved = path.resolve()
    if not resolved.is_relative_to(root):
        raise EvalsError(
            f"case {case_id!r}: fixture {src!r} resolves outside the skill folder",
            where=where,
            fix="keep fixtures inside the skill folder (for example under evals/files/)",
        )
    if resolved.is_dir():
        raise EvalsError(
            f"case {case_id!r}: fixture {src!r} is a folder; fixtures are files",
            where=where,
            fix="list each file of the folder in the case's files",
        )
    if not resolved.is_file():
        raise EvalsError(
            f"case {case_id!r}: fixture {src!r} does not exist",
            where=where,
            fix=f"add the file at {path} or fix the path",
        )
    size = resolved.stat().st_size
    if size > MAX_FIXTURE_BYTES:
        raise EvalsError(
            f"case {case_id!r}: fixture {src!r} is {size:,} bytes, above the {MAX_FIXTURE_BYTES:,}-byte limit",
            where=where,
            fix="use a smaller sample of the input; fixtures are copied into every task directory",
        )
    return size


def check_case_fixtures(
    root: Path, case_id: str, sources: list[str], where: Path, seen: dict[str, int] | None = None
) -> None:
    """Check every fixture of a case and their total size; ``seen`` caches sizes of fixtures already checked."""
    seen = {} if seen is None else seen
    total = 0
    for src in sources:
        if src not in seen:
            seen[src] = check_fixture(root, case_id, src, where)
        total += seen[src]
    if total > MAX_CASE_FIXTURE_BYTES:
        raise EvalsError(
            f"case {case_id!r}: fixtures total {total:,} bytes, above the {MAX_CASE_FIXTURE_BYTES:,}-byte limit",
            where=where,
            fix="use smaller samples of the inputs",
        )
