"""``backend=podman``: Harbor's own podman environment, made to work on an offline Debian host.

Three things it needs that a stock host lacks (measured with podman 4.3.1):

- A containers.conf selecting ``runc`` (the default crun fails with "cgroups in hybrid
  mode not supported") and ulimits within the host's hard limits (the defaults fail with
  "error setting rlimit"); passed as ``CONTAINERS_CONF``, so /etc is left alone.
- podman-compose >= 1.1 from PyPI (the ``podman`` extra; Debian's 1.0.3 rejects
  ``--in-pod=false``).
- A ``python:3.12-slim`` image that cannot be pulled: ``aces-bench podman image``
  (``make podman-image``) builds one offline from the Debian registry with debootstrap
  (Python 3 with ``python`` on PATH, ca-certificates) and imports it under that tag.
  The root is cached as a tarball in ``.aces-cache/images``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from aces_bench.core.errors import BackendError

IMAGE = "docker.io/library/python:3.12-slim"
DEBIAN_SUITE = "bookworm"
APT_SOURCES = (Path("/etc/apt/sources.list.d"), Path("/etc/apt/sources.list"))
PACKAGES = ("ca-certificates", "python3", "procps", "tmux")
CONTAINERS_CONF = """# Written by aces-bench for backend=podman (see aces_bench/backends/podman.py).
[containers]
default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]

[engine]
runtime = "runc"
"""


def cache_dir() -> Path:
    return Path(os.environ.get("ACES_PODMAN_CACHE") or Path.cwd() / ".aces-cache" / "podman").resolve()


def containers_conf() -> Path:
    """The containers.conf backend=podman runs with (written once into the cache)."""
    path = cache_dir() / "containers.conf"
    if not path.is_file() or path.read_text() != CONTAINERS_CONF:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(CONTAINERS_CONF)
    return path


def missing_tools() -> list[str]:
    """What backend=podman needs and this host lacks, each with how to get it.

    podman-compose installed into this interpreter's environment (the ``podman``
    extra) counts even when that environment's bin dir is not on PATH: it is added.
    """
    scripts = str(Path(sys.executable).parent)
    if shutil.which("podman-compose") is None and shutil.which("podman-compose", path=scripts):
        os.environ["PATH"] = f"{scripts}{os.pathsep}{os.environ.get('PATH', '')}"
    missing = []
    if shutil.which("podman") is None:
        missing.append("podman (apt-get install podman)")
    if shutil.which("runc") is None:
        missing.append("runc (apt-get install runc)")
    if shutil.which("podman-compose") is None:
        missing.append("podman-compose >= 1.1 (pip install 'aces-bench[podman]' or pip install podman-compose)")
    return missing


def image_present() -> bool:
    if shutil.which("podman") is None:
        return False
    probe = subprocess.run(["podman", "image", "exists", IMAGE], env=podman_env(), capture_output=True)
    return probe.returncode == 0


def podman_env() -> dict[str, str]:
    return {**os.environ, "CONTAINERS_CONF": str(containers_conf())}


def preflight() -> None:
    """Refuse backend=podman before any trial when a tool or the base image is missing."""
    missing = missing_tools()
    if missing:
        raise BackendError(f"backend=podman needs {'; '.join(missing)}", where="backend=podman",
                           fix="install the listed tools, or use backend=local")
    os.environ["CONTAINERS_CONF"] = str(containers_conf())
    if not image_present():
        raise BackendError(f"the base image {IMAGE} is not in podman's store (it cannot be pulled offline)",
                           where="backend=podman", fix="build it offline: aces-bench podman image (or make podman-image)")


def debian_mirror(sources: tuple[Path, ...] = APT_SOURCES) -> str:
    """The Debian mirror to debootstrap from: $ACES_DEBIAN_MIRROR, else the host's own apt source.

    The host's mirror is the first ``deb`` source that serves the ``DEBIAN_SUITE`` suite,
    read from deb822 ``*.sources`` files or one-line ``sources.list`` entries; the
    project names no mirror of its own.
    """
    if os.environ.get("ACES_DEBIAN_MIRROR"):
        return os.environ["ACES_DEBIAN_MIRROR"]
    files: list[Path] = []
    for src in sources:
        files += sorted(src.glob("*.sources")) + sorted(src.glob("*.list")) if src.is_dir() else [src]
    for path in files:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for url in _suite_urls(text, deb822=path.suffix == ".sources"):
            return url
    raise BackendError(
        f"no Debian {DEBIAN_SUITE} apt source found in /etc/apt to debootstrap from",
        where="aces-bench podman image",
        fix=f"set ACES_DEBIAN_MIRROR to a Debian mirror URL that serves {DEBIAN_SUITE}",
    )


def _suite_urls(text: str, *, deb822: bool) -> list[str]:
    """Mirror URLs of the ``deb`` entries in one apt source file that serve ``DEBIAN_SUITE``."""
    urls: list[str] = []
    if deb822:
        for stanza in text.split("\n\n"):
            fields = {}
            for line in stanza.splitlines():
                key, sep, value = line.partition(":")
                if sep and not line.startswith(("#", " ")):
                    fields[key.strip().lower()] = value.split()
            if "deb" in fields.get("types", []) and DEBIAN_SUITE in fields.get("suites", []):
                urls += fields.get("uris", [])[:1]
        return urls
    for line in text.splitlines():
        words = [w for w in line.split("#", 1)[0].split() if not w.startswith("[")]
        if len(words) >= 3 and words[0] == "deb" and words[2] == DEBIAN_SUITE:
            urls.append(words[1])
    return urls


def build_rootfs_tarball(tarball: Path, *, mirror: str | None = None) -> Path:
    """debootstrap a minimal Debian root with Python 3 and pack it as ``tarball``."""
    if shutil.which("debootstrap") is None:
        raise BackendError("debootstrap is not installed", fix="apt-get install debootstrap")
    mirror = mirror or debian_mirror()
    tarball.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="aces-rootfs-", dir=tarball.parent) as tmp:
        root = Path(tmp) / "root"
        argv = ["debootstrap", "--variant=minbase", f"--include={','.join(PACKAGES)}", DEBIAN_SUITE, str(root), mirror]
        done = subprocess.run(argv, capture_output=True, text=True)
        if done.returncode != 0:
            tail = " | ".join((done.stderr or done.stdout).strip().splitlines()[-4:])
            raise BackendError(f"debootstrap failed: {tail}", fix=f"check that {mirror} is reachable")
        # python:3.12-slim has python and python3 in /usr/local/bin.
        (root / "usr/local/bin").mkdir(parents=True, exist_ok=True)
        for name in ("python", "python3"):
            link = root / "usr/local/bin" / name
            if not link.exists():
                link.symlink_to("/usr/bin/python3")
        shutil.rmtree(root / "var/cache/apt/archives", ignore_errors=True)
        partial = tarball.with_suffix(".partial")
        subprocess.run(["tar", "-C", str(root), "-cf", str(partial), "."], check=True)
        os.replace(partial, tarball)
    return tarball


def build_image(*, force: bool = False) -> str:
    """Make ``python:3.12-slim`` available to podman offline; return a one-line summary."""
    missing = [m for m in missing_tools() if not m.startswith("podman-compose")]
    if missing:
        raise BackendError(f"cannot build the image: missing {'; '.join(missing)}", fix="install the listed tools")
    if image_present() and not force:
        return f"{IMAGE} is already in podman's store"
    tarball = cache_dir() / f"debian-{DEBIAN_SUITE}-python3.tar"
    start = time.monotonic()
    if force or not tarball.is_file():
        build_rootfs_tarball(tarball)
    with open(tarball, "rb") as data:
        done = subprocess.run(["podman", "import", "--change", "CMD [\"python3\"]", "-", IMAGE], stdin=data,
                              env=podman_env(), capture_output=True, text=True)
    if done.returncode != 0:
        raise BackendError(f"podman import failed: {done.stderr.strip()[-300:]}", where=tarball)
    return f"{IMAGE} imported from {tarball} [{time.monotonic() - start:.0f} s]"


def main(argv: list[str]) -> int:
    """``aces-bench podman image [--force] | check``."""
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: aces-bench podman {image [--force],check}")
        return 0
    if argv[0] == "image":
        print(build_image(force="--force" in argv[1:]))
        return 0
    if argv[0] == "check":
        preflight()
        print(f"backend=podman ready: {shutil.which('podman')}, {shutil.which('podman-compose')}, {IMAGE}, "
              f"CONTAINERS_CONF={containers_conf()}")
        return 0
    print(f"error: unknown podman command {argv[0]!r}", file=sys.stderr)
    return 2
