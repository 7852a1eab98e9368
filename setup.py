"""Package layout only; all metadata lives in pyproject.toml.

The top-level code folders are installed under the ``aces_bench`` namespace
(``graders/`` becomes ``aces_bench.graders``) so that no generic top-level name such
as ``reports`` lands in site-packages. setuptools' declarative ``packages.find``
cannot remap folders, hence this file.
"""

from setuptools import find_namespace_packages, setup

MAPPED_FOLDERS = {
    "conf": "aces_bench.conf",
    "emitters": "aces_bench.emitters",
    "graders": "aces_bench.graders",
    "reports": "aces_bench.reports",
}

# Namespace discovery also lists the data folders (example skills, templates) as
# packages, so their files ship as package data without setuptools warnings.
packages = find_namespace_packages(include=["aces_bench", "aces_bench.*"])
package_dir = {"aces_bench": "aces_bench"}
for folder, name in MAPPED_FOLDERS.items():
    package_dir[name] = folder
    packages.append(name)
    packages += [f"{name}.{sub}" for sub in find_namespace_packages(where=folder)]

setup(packages=packages, package_dir=package_dir)
