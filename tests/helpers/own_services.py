"""A PostgreSQL cluster and a Redis server of a test's (or a bench's) own, on free ports, to stop and start at will.

Killing the suite's shared servers would break every other test running beside; these are
private to whoever starts them. The cluster is made once (``initdb``) and its schema copied
from the suite's migrated test database with ``pg_dump``, which takes seconds where
``migrate`` on a fresh database takes half a minute here.
"""

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import redis

from tests.helpers.processes import free_port


def _newest_server_programs() -> Path:
    """PG_BIN, else Debian's newest PostgreSQL (its pg_dump reads the suite's server, whatever its version)."""
    if os.environ.get("PG_BIN"):
        return Path(os.environ["PG_BIN"])
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda path: int(path.parts[-3]))
    return found[-1].parent if found else Path("/usr/lib/postgresql/15/bin")


PG_BIN = _newest_server_programs()
DATABASE = "reviewqueue"


def _as_server_user(command: list) -> list:
    """PostgreSQL's programs refuse to run as root: there, they run as the postgres user."""
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


class OwnPostgres:
    """A cluster in a directory of its own, listening on 127.0.0.1 only, with one database holding a migrated schema.

    The directory is made under the system's temporary folder rather than a test's, which the postgres user (who
    runs the server when this runs as root) could not enter.
    """

    def __init__(self):
        self.directory = Path(tempfile.mkdtemp(prefix="reviewqueue-postgres-"))
        if os.geteuid() == 0:
            shutil.chown(self.directory, "postgres")
        self.data = self.directory / "data"
        self.port = free_port()
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/{DATABASE}"
        subprocess.run(
            _as_server_user(
                [PG_BIN / "initdb", "-D", self.data, "-U", "postgres", "--auth=trust", "--no-sync", "--no-instructions"]
            ),
            check=True,
            capture_output=True,
        )

    def start(self) -> None:
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.directory} -c fsync=off"
        subprocess.run(
            _as_server_user(
                [
                    PG_BIN / "pg_ctl",
                    "-D",
                    self.data,
                    "-l",
                    self.directory / "postgres.log",
                    "-o",
                    options,
                    "-w",
                    "start",
                ]
            ),
            check=True,
            capture_output=True,
        )

    def stop(self) -> None:
        """``pg_ctl -m fast``: every session is ended and the server shuts down, as an operator's restart does."""
        subprocess.run(
            _as_server_user([PG_BIN / "pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop"]),
            check=True,
            capture_output=True,
        )

    def copy_schema(self, source_url: str) -> None:
        """An empty database with the schema (and the migrations' record) of the database at ``source_url``."""
        admin = f"postgres://postgres@127.0.0.1:{self.port}/postgres"
        subprocess.run([PG_BIN / "psql", admin, "-qc", f"CREATE DATABASE {DATABASE}"], check=True, capture_output=True)
        dump = subprocess.run(
            [PG_BIN / "pg_dump", "--no-owner", "--no-privileges", "--schema-only", source_url],
            check=True,
            capture_output=True,
        ).stdout
        dump += subprocess.run(
            [PG_BIN / "pg_dump", "--data-only", "--table=django_migrations", source_url],
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(
            [PG_BIN / "psql", self.url, "-q", "-v", "ON_ERROR_STOP=1"], input=dump, check=True, capture_output=True
        )

    def discard(self) -> None:
        subprocess.run(
            _as_server_user([PG_BIN / "pg_ctl", "-D", self.data, "-m", "immediate", "stop"]), capture_output=True
        )
        shutil.rmtree(self.directory, ignore_errors=True)


class OwnRedis:
    """A redis-server keeping nothing on disk (``--save ""``, as compose.yaml runs it): started again, it is empty."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        with open(self.directory / "redis.log", "ab") as log:
            self.process = subprocess.Popen(
                ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                cwd=self.directory,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        client = redis.Redis.from_url(self.url, socket_connect_timeout=0.5)
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                return
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def kill(self) -> None:
        """SIGKILL: every connection drops at once, and what it held is gone."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def discard(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.kill()
