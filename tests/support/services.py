"""Real Redis and PostgreSQL servers on loopback, started by the tests themselves.

``redis_server`` runs ``redis-server`` with persistence off; ``postgres_server``
runs ``initdb`` and ``pg_ctl`` in a temporary directory with password (SCRAM)
authentication on TCP. Both are session-scoped, listen on a free loopback port,
and are stopped at teardown. Each can be taken down and brought back inside a
test (``with server.down(): ...``) to show what a client sees of an outage.

PostgreSQL refuses to run as root, and CI runs as root: the server then runs as
the unprivileged ``nobody``, owning its temporary directory. A missing binary
fails the fixture with the command that installs it (``.ci/run`` does so in CI).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import redis

from tests.support.aws import free_port

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

__all__ = ["PostgresServer", "RedisServer", "postgres_bin_dir", "postgres_server", "redis_server"]

# How long a server may take to accept connections before the fixture gives up.
_READY_TIMEOUT = 30.0


def _missing(what: str, package: str) -> str:
    return (
        f"{what} not found: these tests start a real server. Install it with "
        f"`apt-get install -y --no-install-recommends {package}` (.ci/run does so in CI)."
    )


def _wait(ready: Callable[[], bool], what: str, log: Path | None = None) -> None:
    deadline = time.monotonic() + _READY_TIMEOUT
    while time.monotonic() < deadline:
        if ready():
            return
        time.sleep(0.05)
    detail = f"\n{log.read_text(errors='replace')[-2000:]}" if log and log.exists() else ""
    raise RuntimeError(f"{what} did not become ready in {_READY_TIMEOUT:.0f}s{detail}")


# -- Redis ------------------------------------------------------------------------------


@dataclass
class RedisServer:
    """A ``redis-server`` on 127.0.0.1 with persistence off; ``url`` reaches it."""

    binary: str
    port: int
    workdir: Path
    _process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start the server and wait until it answers PING."""
        log = self.workdir / "redis.log"
        command = [
            self.binary,
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--save", "",
            "--appendonly", "no",
            "--dir", str(self.workdir),
            "--logfile", str(log),
        ]  # fmt: skip
        self._process = subprocess.Popen(command, stdin=subprocess.DEVNULL)
        _wait(self._answers_ping, "redis-server", log)

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL if it lingers)."""
        if self._process is None:
            return
        self._process.terminate()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._process = None

    @contextlib.contextmanager
    def down(self) -> Iterator[None]:
        """The server stopped for the block, then started again on the same port (empty)."""
        self.stop()
        try:
            yield
        finally:
            self.start()

    def _answers_ping(self) -> bool:
        if self._process is not None and self._process.poll() is not None:
            raise RuntimeError(f"redis-server exited with {self._process.returncode}")
        client = redis.Redis.from_url(self.url, socket_connect_timeout=1)
        try:
            return bool(client.ping())
        except redis.RedisError:
            return False
        finally:
            client.close()


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """A real ``redis-server`` for the session, stopped at the end."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail(_missing("redis-server", "redis-server"), pytrace=False)
    workdir = Path(tempfile.mkdtemp(prefix="signoff-redis-"))
    server = RedisServer(binary=binary, port=free_port(), workdir=workdir)
    server.start()
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


# -- PostgreSQL -------------------------------------------------------------------------

# Debian installs the server outside PATH; /usr/local/bin may hold links to it.
_POSTGRES_DIRS = "/usr/lib/postgresql/*/bin"


def postgres_bin_dir() -> Path | None:
    """The directory holding ``initdb``, ``pg_ctl`` and ``postgres``: PATH first, then Debian's."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).resolve().parent
    candidates = sorted(
        Path("/").glob(_POSTGRES_DIRS.lstrip("/")),
        key=lambda path: int(path.parent.name) if path.parent.name.isdigit() else 0,
    )
    for directory in reversed(candidates):
        if (directory / "initdb").exists() and (directory / "pg_ctl").exists():
            return directory
    return None


@dataclass
class PostgresServer:
    """A PostgreSQL cluster on 127.0.0.1 whose superuser ``user`` logs in with ``password``."""

    bin_dir: Path
    root: Path
    port: int
    user: str = "signoff"
    password: str = field(default_factory=lambda: secrets.token_urlsafe(16))
    database: str = "postgres"
    # The OS account the server runs as: None for the current one (not root).
    run_as: pwd.struct_passwd | None = None

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def log(self) -> Path:
        return self.root / "server.log"

    def dsn(self, *, user: str | None = None, password: str | None = None) -> str:
        """A libpq URL for ``user`` (the superuser by default) over TCP."""
        return (
            f"postgresql://{user or self.user}:{password or self.password}"
            f"@127.0.0.1:{self.port}/{self.database}"
        )

    def init(self) -> None:
        """Create the cluster: password auth on TCP, trust only on its private socket."""
        password_file = self.root / "password"
        password_file.write_text(self.password)
        self._own(self.root, password_file)
        self._run(
            "initdb",
            "--pgdata", str(self.data),
            "--username", self.user,
            "--pwfile", str(password_file),
            "--auth-host", "scram-sha-256",
            "--auth-local", "trust",
            "--no-sync",
            "--encoding", "UTF8",
            "--locale", "C",
        )  # fmt: skip
        password_file.unlink()

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        # The unix socket lives in the private directory, never in /var/run.
        options = (
            f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.root} "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        )
        self._run(
            "pg_ctl", "start", "--wait", "--timeout", str(int(_READY_TIMEOUT)),
            "--pgdata", str(self.data), "--log", str(self.log), "--options", options,
        )  # fmt: skip

    def stop(self) -> None:
        """Stop the server, closing client connections (``fast`` mode)."""
        if (self.data / "postmaster.pid").exists():
            self._run("pg_ctl", "stop", "--wait", "--mode", "fast", "--pgdata", str(self.data))

    @contextlib.contextmanager
    def down(self) -> Iterator[None]:
        """The server stopped for the block, then started again (its data kept)."""
        self.stop()
        try:
            yield
        finally:
            self.start()

    def _run(self, program: str, *args: str) -> None:
        command = [str(self.bin_dir / program), *args]
        user = self.run_as
        result = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            check=False,
            cwd=self.root,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"},
            user=user.pw_uid if user else None,
            group=user.pw_gid if user else None,
            extra_groups=[] if user else None,
        )
        if result.returncode != 0:
            log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise RuntimeError(
                f"{program} failed ({result.returncode}):\n{result.stdout}{result.stderr}{log}"
            )

    def _own(self, *paths: Path) -> None:
        if self.run_as is not None:
            for path in paths:
                os.chown(path, self.run_as.pw_uid, self.run_as.pw_gid)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A real PostgreSQL server for the session, stopped and deleted at the end."""
    bin_dir = postgres_bin_dir()
    if bin_dir is None:
        pytest.fail(_missing("initdb / pg_ctl (PostgreSQL's server)", "postgresql"), pytrace=False)
    # PostgreSQL will not run as root; as root, hand the cluster to `nobody`.
    run_as = pwd.getpwnam("nobody") if os.geteuid() == 0 else None
    # mkdtemp's own directory (mode 0700) under /tmp, so `nobody` can reach it once it
    # owns it; pytest's tmp_path sits under a root-only directory.
    root = Path(tempfile.mkdtemp(prefix="signoff-postgres-"))
    server = PostgresServer(bin_dir=bin_dir, root=root, port=free_port(), run_as=run_as)
    try:
        server.init()
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)
