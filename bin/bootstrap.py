#!/usr/bin/env python3
"""Find a Python new enough for Django 6 and keep the project's virtualenv in step with a lock file.

Runs on any Python 3.8+ so that ``python3 bin/quickstart`` works even where the
default ``python3`` is older than the 3.12 that Django 6 needs. The lock files
(``bin/lock`` writes them) pin every package with its hashes, so pip installs
exactly what was tested or nothing.

    python3 bin/bootstrap.py requirements-dev.lock   # prints the venv's python
"""

import glob
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = Path(os.environ.get("REVIEWQUEUE_VENV", ROOT / ".venv"))
MINIMUM = (3, 12)
CANDIDATES = ("python3.14", "python3.13", "python3.12", "python3")


def _version(executable: str):
    try:
        out = subprocess.run(
            [executable, "-c", "import sys; print('%d %d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=20,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None  # e.g. a pyenv shim for a version that is not selected
    major, minor = out.stdout.split()
    return int(major), int(minor)


def find_python() -> str:
    if sys.version_info[:2] >= MINIMUM:
        return sys.executable
    found = [shutil.which(name) for name in CANDIDATES]
    pyenv_root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    installed = glob.glob(os.path.join(pyenv_root, "versions", "3.*", "bin", "python3"))
    found += sorted(installed, key=_version_in_path, reverse=True)
    for executable in filter(None, found):
        version = _version(executable)
        if version and version >= MINIMUM:
            return executable
    sys.exit(
        "Review Queue needs Python %d.%d or newer (Django 6 requires it), and none was found.\n"
        "Install one (Debian/Ubuntu: apt-get install python3.12 python3.12-venv; macOS: brew install python@3.12)\n"
        "and run this command again." % MINIMUM
    )


def _version_in_path(path: str):
    """(3, 12, 1) for .../versions/3.12.1/bin/python3, so 3.13 sorts after 3.9."""
    name = Path(path).parent.parent.name
    return tuple(int(part) if part.isdigit() else 0 for part in name.split("."))


def venv_python() -> Path:
    return VENV / "bin" / "python"


def ensure_venv(lock: str) -> Path:
    """Create the venv if needed and install the ``lock`` file when it changed since the last install."""
    python = venv_python()
    if not python.exists() or (_version(str(python)) or (0, 0)) < MINIMUM:
        print("Creating the virtualenv in %s ..." % VENV, file=sys.stderr, flush=True)
        shutil.rmtree(VENV, ignore_errors=True)
        subprocess.run([find_python(), "-m", "venv", str(VENV)], check=True, stdout=sys.stderr)
    lock_path = ROOT / lock
    digest = _requirements_digest(lock_path)
    stamp = VENV / (".installed-" + lock_path.name)
    if not stamp.exists() or stamp.read_text() != digest:
        print("Installing %s ..." % lock, file=sys.stderr, flush=True)
        _install(python, lock_path)
        stamp.write_text(digest)
    return python


def _install(python: Path, lock_path: Path) -> None:
    """Install ``lock_path`` into the venv with uv, at the version and hashes requirements-dev.lock pins: it installs
    the lock in seconds where pip takes most of a minute. pip does it where uv cannot be had or cannot install it
    (a machine that reaches only pip's own configured index, say); both check every hash."""
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--require-hashes"]
    uv = python.parent / "uv"
    pin = _pinned("uv", ROOT / "requirements-dev.lock")
    if not uv.exists() and pin:
        with tempfile.TemporaryDirectory() as folder:
            requirement = Path(folder, "uv.txt")
            requirement.write_text(pin)
            subprocess.run(pip + ["-r", str(requirement)], stdout=sys.stderr)
    if uv.exists():
        uv_install = [str(uv), "pip", "install", "--quiet", "--no-config", "--python", str(python), "--require-hashes"]
        if subprocess.run(uv_install + ["-r", str(lock_path)], stdout=sys.stderr).returncode == 0:
            return
        print("uv could not install %s; installing it with pip" % lock_path.name, file=sys.stderr, flush=True)
    subprocess.run(pip + ["-r", str(lock_path)], check=True, stdout=sys.stderr)


def _pinned(package: str, lock_path: Path) -> str:
    """``package``'s requirement in the lock file, with its hashes ("" when it has none)."""
    lines = lock_path.read_text().splitlines()
    starts = [number for number, line in enumerate(lines) if line.startswith(package + "==")]
    if not starts:
        return ""
    pinned = [lines[starts[0]]]
    while pinned[-1].endswith("\\"):
        pinned.append(lines[starts[0] + len(pinned)])
    return "\n".join(pinned) + "\n"


def _requirements_digest(path: Path) -> str:
    """A digest over the file and the files it includes with ``-r``."""
    digest = hashlib.sha256()
    for line in path.read_text().splitlines():
        digest.update(line.encode())
        if line.startswith("-r "):
            digest.update(_requirements_digest(path.parent / line[3:].strip()).encode())
    return digest.hexdigest()


if __name__ == "__main__":
    print(ensure_venv(sys.argv[1] if len(sys.argv) > 1 else "requirements.lock"))
