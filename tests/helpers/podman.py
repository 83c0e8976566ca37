"""podman on these machines, for the image of ``Containerfile``: its configuration, the Debian 13 base, the build.

No registry can be reached here, so the base is made with mmdebstrap and imported once per machine;
podman keeps it, and the image's layers, between runs.
"""

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from filelock import FileLock

from tests.helpers.processes import ROOT

BASE = "localhost/reviewqueue-base:trixie"
IMAGE = "localhost/reviewqueue:test"
# What podman needs on these machines: runc under cgroupfs (no systemd), no default ulimits, the host's network.
CONTAINERS_CONF = """\
[containers]
default_ulimits = []
netns = "host"
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
"""
# Like the official slim image: no manuals, documentation or translations of Debian's packages.
SLIM = [
    f"--dpkgopt=path-{kind}={path}"
    for kind, path in [
        ("exclude", "/usr/share/man/*"),
        ("exclude", "/usr/share/info/*"),
        ("exclude", "/usr/share/locale/*"),
        ("include", "/usr/share/locale/locale.alias"),
        ("exclude", "/usr/share/doc/*"),
        ("include", "/usr/share/doc/*/copyright"),
    ]
]
CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")  # this machine's, TLS-inspecting proxy included
# One build at a time on a machine (the image test and bench.container's smoke run may start together): the second
# then finds every layer in podman's cache instead of building the same ones beside the first.
BUILD_LOCK = Path(tempfile.gettempdir()) / "reviewqueue-podman-build.lock"
BUILD_TIMEOUT = 900  # a cold build downloads Debian's Python and every wheel of requirements.lock


def installed() -> bool:
    return all(shutil.which(program) for program in ("podman", "runc", "mmdebstrap"))


class Podman:
    """podman with this machine's containers.conf (written under ``scratch``)."""

    def __init__(self, scratch: Path):
        conf = scratch / "containers.conf"
        conf.write_text(CONTAINERS_CONF)
        self.environment = {**os.environ, "CONTAINERS_CONF": str(conf)}
        self.scratch = scratch

    def __call__(self, *arguments: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess:
        """Run podman; the finished process, raising on failure when ``check``."""
        done = subprocess.run(
            ["podman", *arguments], env=self.environment, capture_output=True, text=True, timeout=timeout, check=False
        )
        if check and done.returncode != 0:
            raise AssertionError(f"podman {' '.join(arguments[:2])} failed ({done.returncode}):\n{done.stderr[-3000:]}")
        return done

    def ensure_base(self) -> None:
        """The Debian 13 base, made with mmdebstrap unless podman has it already."""
        with FileLock(BUILD_LOCK):
            if self("image", "exists", BASE, check=False).returncode == 0:
                return
            root = self.scratch / "trixie.tar"
            subprocess.run(
                ["mmdebstrap", "--variant=minbase", "--mode=root", "--format=tar", *SLIM, "trixie", str(root)],
                check=True,
                capture_output=True,
                timeout=BUILD_TIMEOUT,
            )
            self("import", str(root), BASE, timeout=BUILD_TIMEOUT)
            root.unlink()

    def build(self, context: Path, *options: str) -> float:
        """Build ``IMAGE`` from ``context`` on ``BASE``; the seconds it took, a wait for another build not counted."""
        with FileLock(BUILD_LOCK):
            started = time.monotonic()
            self(
                "build",
                "--format=docker",  # keeps HEALTHCHECK, which the OCI format has no field for
                "--file=Containerfile",
                f"--tag={IMAGE}",
                f"--build-arg=BASE={BASE}",
                "--network=host",
                *([f"--volume={CA_BUNDLE}:/run/build-ca.crt:ro"] if CA_BUNDLE.exists() else []),
                *options,
                str(context),
                timeout=BUILD_TIMEOUT,
            )
            return time.monotonic() - started

    def image_megabytes(self) -> float:
        return json.loads(self("image", "inspect", IMAGE).stdout)[0]["Size"] / 1e6


def clean_copy(destination: Path) -> Path:
    """The checkout's files as a fresh clone has them (tracked, or untracked and not ignored), from the work tree."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for relative in filter(None, listed.split("\0")):
        source, copy = ROOT / relative, destination / relative
        if source.is_symlink():
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.symlink_to(os.readlink(source))
        elif source.is_file():  # a tracked file deleted in the work tree is not part of the copy
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy)
    return destination
