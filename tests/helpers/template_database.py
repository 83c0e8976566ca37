"""One database migrated for these migrations, which the suite's test databases and the benches' are copied from.

Migrating an empty database takes seconds of Python and of PostgreSQL, and every pytest process (each pytest-xdist
worker, each run) made its test database so. ``CREATE DATABASE … TEMPLATE`` copies a migrated one in a fraction of
that, and ``migrate`` then finds nothing to do. The template is kept between runs; its comment names the migrations
it was migrated by (a digest of every migration file), and a run whose migrations differ makes it again.
"""

import hashlib
import os
from pathlib import Path

import psycopg
from filelock import FileLock
from psycopg import sql

from tests.helpers import preloaded
from tests.helpers.processes import ROOT

MIGRATE_TIMEOUT = 300  # seconds, on a busy machine


def migrated_template(tmp_path_factory) -> tuple[str, str]:
    """The server's URL (without a database) and the name of the template, migrated by the first pytest process of
    the run to ask, under a lock in the run's own temporary folder, unless a run with the same migrations did."""
    server, _, name = os.environ["DATABASE_URL"].rpartition("/")
    template = f"{name}_template"
    with FileLock(run_folder(tmp_path_factory) / "database-template.lock"):
        if template_comment(server, template) != (digest := migrations_digest()):
            drop_database(server, template)
            create_database(server, template)
            environment = os.environ | {
                "DATABASE_URL": f"{server}/{template}",
                "DJANGO_SETTINGS_MODULE": "tests.settings",
            }
            migrated = preloaded.run_module("manage", ["migrate", "--verbosity", "0"], environment, MIGRATE_TIMEOUT)
            assert migrated.returncode == 0, migrated.stderr
            with psycopg.connect(f"{server}/postgres", autocommit=True) as connection:
                connection.execute(sql.SQL("COMMENT ON DATABASE {} IS {}").format(sql.Identifier(template), digest))
    return server, template


def run_folder(tmp_path_factory) -> Path:
    """The run's own temporary folder, which its pytest-xdist workers share (each has a ``popen-gwN`` inside)."""
    folder = tmp_path_factory.getbasetemp()
    return folder.parent if os.environ.get("PYTEST_XDIST_WORKER") else folder


def migrations_digest() -> str:
    """A digest of every migration of the checkout, which a template migrated by them carries as its comment."""
    digest = hashlib.sha256()
    for path in sorted(ROOT.glob("*/migrations/*.py")):
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    return f"migrations {digest.hexdigest()}"


def template_comment(server: str, template: str) -> str | None:
    with psycopg.connect(f"{server}/postgres", autocommit=True) as connection:
        found = connection.execute(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s", [template]
        ).fetchone()
    return found[0] if found else None


def create_database(server: str, name: str, template: str | None = None) -> None:
    """Make the database ``name`` on ``server`` (a URL without a database), a copy of ``template`` where given."""
    statement = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
    if template:
        statement += sql.SQL(" TEMPLATE {}").format(sql.Identifier(template))
    with psycopg.connect(f"{server}/postgres", autocommit=True) as connection:
        connection.execute(statement)


def drop_database(server: str, name: str) -> None:
    with psycopg.connect(f"{server}/postgres", autocommit=True) as connection:
        connection.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
