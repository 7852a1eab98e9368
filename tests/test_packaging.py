"""pyproject.toml's package list is the tree on disk: a folder added without listing it
would install without its files (or warn at every build), and a listed one that is gone
would fail the build."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _setuptools() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as fh:
        return tomllib.load(fh)["tool"]["setuptools"]


def _packages_on_disk(package_dir: dict[str, str]) -> set[str]:
    """Every folder under a mapped root reached through importable names only and holding a
    file (at any depth): what setuptools would install from the package data globs."""
    found = set()
    for name, folder in package_dir.items():
        root = ROOT / folder
        for d in (root, *root.rglob("*")):
            if not d.is_dir() or "__pycache__" in d.parts:
                continue
            rel = d.relative_to(root).parts
            if all(part.isidentifier() for part in rel) and any(
                    f.is_file() and "__pycache__" not in f.parts for f in d.rglob("*")):
                found.add(".".join((name, *rel)))
    return found


def test_every_package_and_data_folder_is_listed_and_nothing_else():
    config = _setuptools()
    listed = config["packages"]
    assert len(listed) == len(set(listed)), "a package is listed twice"
    on_disk = _packages_on_disk(config["package-dir"])
    assert set(listed) == on_disk, (f"add to [tool.setuptools] packages: {sorted(on_disk - set(listed))}; "
                                    f"remove: {sorted(set(listed) - on_disk)}")


def test_the_top_level_folders_install_under_aces_bench_only():
    package_dir = _setuptools()["package-dir"]
    assert package_dir == {"aces_bench": "aces_bench", "aces_bench.conf": "conf", "aces_bench.emitters": "emitters",
                           "aces_bench.graders": "graders", "aces_bench.reports": "reports"}
    assert all(name.split(".")[0] == "aces_bench" for name in _setuptools()["packages"])
