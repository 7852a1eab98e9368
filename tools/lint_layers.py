"""Check the import layers contract (``[tool.importlinter]`` in pyproject.toml).

import-linter finds a package's modules by walking its folder, but ``graders/``,
``emitters/``, ``reports/`` and ``conf/`` are installed under ``aces_bench`` from
folders beside it (``[tool.setuptools] package-dir`` in pyproject.toml). This script lays the package
out as it is installed, in a temporary folder (Python files only), and runs
``lint-imports`` there. Exit code: import-linter's (0 when every contract holds).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def mapped_folders() -> dict[str, str]:
    """Folder -> installed package name, for each folder pyproject.toml maps under ``aces_bench``."""
    with open(ROOT / "pyproject.toml", "rb") as fh:
        package_dir = tomllib.load(fh)["tool"]["setuptools"]["package-dir"]
    return {folder: name for name, folder in package_dir.items() if name != folder.replace("/", ".")}


def copy_python(src: Path, dst: Path) -> None:
    for path in src.rglob("*.py"):
        if "__pycache__" in path.parts:
            continue
        target = dst / path.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="aces-layers-") as tmp:
        staged = Path(tmp)
        copy_python(ROOT / "aces_bench", staged / "aces_bench")
        for folder, name in mapped_folders().items():
            copy_python(ROOT / folder, staged.joinpath(*name.split(".")))
        shutil.copyfile(ROOT / "pyproject.toml", staged / "pyproject.toml")
        env = {**os.environ, "PYTHONPATH": str(staged)}
        lint = Path(sys.executable).with_name("lint-imports")
        return subprocess.run([str(lint)], cwd=staged, env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
