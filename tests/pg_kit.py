"""A throwaway PostgreSQL cluster for the tests: initdb (locale C) in a temporary directory, a free
port, its unix socket in that directory, torn down at exit. Each test gets a fresh database copied
from a migrated template (CREATE DATABASE ... TEMPLATE: a file copy, no migrations per test).

PostgreSQL refuses to run as root: as root the cluster belongs to the `postgres` system user (the
Debian package creates it), and its commands run through `runuser`.

The server outlives a killed owner (pg_ctl detaches it), so each cluster has a watchdog process of
its own (this module's entry point): when the owner dies without stopping it (kill -9 of pytest, a
CI timeout), the watchdog stops the server and removes its directory."""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from core import instance
from core.store import Database, open_database
from core.store.pg import PostgresConnection

TEMPLATE = "agentledger_template"


def find_bin(name: str) -> str | None:
    """A PostgreSQL program: on PATH, else in the newest /usr/lib/postgresql/<version>/bin."""
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), key=lambda p: int(Path(p).parts[-3]))
    return candidates[-1] if candidates else None


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PgCluster:
    def __init__(self, *, fsync: bool = False) -> None:
        """fsync=True: commits are synced to disk as in production (benchmarks); tests need not."""
        initdb, pg_ctl = find_bin("initdb"), find_bin("pg_ctl")
        if initdb is None or pg_ctl is None:
            raise RuntimeError("PostgreSQL is not installed (make install puts it there: apt-get install postgresql)")
        self._initdb, self._pg_ctl = initdb, pg_ctl
        self.dir = Path(tempfile.mkdtemp(prefix="agentledger-pg-"))
        self.port = _free_port()
        self._user: str | None = None
        if os.geteuid() == 0:  # the Debian package's user; any unprivileged one would do
            self._user = "postgres" if _user_exists("postgres") else "nobody"
            entry = pwd.getpwnam(self._user)
            os.chown(self.dir, entry.pw_uid, entry.pw_gid)
        self._names = itertools.count(1)
        self._started = False
        self._watchdog: subprocess.Popen[bytes] | None = None
        self.fsync = fsync

    def _run(self, *argv: str) -> None:
        cmd = ["runuser", "-u", self._user, "--", *argv] if self._user else list(argv)
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(argv[:2])} failed ({done.returncode}): {done.stderr or done.stdout}")

    def start(self) -> PgCluster:
        data = self.dir / "data"
        self._run(
            self._initdb,
            "-D",
            str(data),
            "--locale=C",
            "-E",
            "UTF8",
            "-A",
            "trust",
            "-U",
            "postgres",
            "--no-sync",
            "--no-instructions",
        )
        # A test cluster: no fsync (a crash of the machine loses nothing a test needs), minimal WAL
        # (CREATE DATABASE per test is cheaper); synchronous_commit is set by each connection.
        durability = "" if self.fsync else "-c fsync=off -c full_page_writes=off "
        options = (
            f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 {durability}"
            "-c max_connections=200 -c shared_buffers=32MB -c wal_level=minimal -c max_wal_senders=0"
        )
        self._options = options
        self.start_server()
        self._watchdog = subprocess.Popen(
            [sys.executable, "-m", "tests.pg_kit", instance.current(), str(self.dir), self._pg_ctl, self._user or ""],
            cwd=Path(__file__).resolve().parent.parent,
            start_new_session=True,  # a kill of the owner's process group leaves it to clean up
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        admin = self.connect_admin()
        try:
            admin.execute(f"CREATE DATABASE {TEMPLATE}")
        finally:
            admin.close()
        migrated = self.database(TEMPLATE).connect()  # migrate once; every test's database copies it
        migrated.close()
        return self

    def start_server(self) -> None:
        """Start the server (again: after stop_server, as a restarted or failed-over database comes back)."""
        data = str(self.dir / "data")
        self._run(self._pg_ctl, "-D", data, "-o", self._options, "-l", str(self.dir / "log"), "-w", "-s", "start")
        self._started = True

    def stop_server(self, mode: str = "fast") -> None:
        """Stop the server as an operator would (fast: every session is ended, open transactions rolled
        back; immediate: as a crash), leaving the cluster to start again."""
        self._run(self._pg_ctl, "-D", str(self.dir / "data"), "-m", mode, "-w", "-s", "stop")
        self._started = False

    def restart(self, mode: str = "fast") -> None:
        """`pg_ctl restart -m mode`: stopped and started again with the same settings."""
        self.stop_server(mode)
        self.start_server()

    def _server_pids(self) -> list[int]:
        """The postmaster and every process it started (sessions, background workers)."""
        postmaster = int((self.dir / "data" / "postmaster.pid").read_text().split()[0])
        found = [postmaster]
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                text = stat.read_text()
            except OSError:
                continue
            if int(text[text.rindex(")") + 2 :].split()[1]) == postmaster:  # field 4: the parent's pid
                found.append(int(stat.parent.name))
        return found

    def pause(self) -> None:
        """Stop every process of the server without closing anything (SIGSTOP): a hung host, or a network
        that drops packets with no reset, as the clients see it: nothing answers, nothing is closed."""
        for pid in self._server_pids():
            os.kill(pid, signal.SIGSTOP)

    def resume(self) -> None:
        for pid in self._server_pids():
            os.kill(pid, signal.SIGCONT)

    def terminate_sessions(self, database: Database) -> int:
        """End every session on `database` from the server side (a failover-like cut: the clients see their
        connections closed under them); the number ended."""
        name = database.location.rsplit("/", 1)[-1]
        admin = self.connect_admin()
        try:
            rows = admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ? AND pid <> pg_backend_pid()",
                (name,),
            ).fetchall()
        finally:
            admin.close()
        return sum(1 for (ended,) in rows if ended)

    def url(self, name: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def database(self, name: str) -> Database:
        return open_database(self.url(name))

    def connect_admin(self) -> PostgresConnection:
        return PostgresConnection(self.url("postgres"))

    def fresh(self) -> Database:
        """A new database with the migrated schema and no rows."""
        name = f"t{os.getpid()}_{next(self._names)}"
        admin = self.connect_admin()
        try:
            admin.execute(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}")
        finally:
            admin.close()
        return self.database(name)

    def drop(self, database: Database) -> None:
        """Drop a test's database (its connections are ended: a test need not close them)."""
        name = database.location.rsplit("/", 1)[-1]
        admin = self.connect_admin()
        try:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        finally:
            admin.close()

    def stop(self) -> None:
        """Stop the server at once; its directory is removed by a detached process. A long test run
        leaves a database per redirected file (about 600, some GB): removing them took 35-50 s at the
        end of each pytest worker when stop() waited for it."""
        if self._started:
            self._run(self._pg_ctl, "-D", str(self.dir / "data"), "-m", "immediate", "-w", "-s", "stop")
            self._started = False
        if self._watchdog is not None:  # the server is stopped: nothing left for it to watch
            self._watchdog.kill()
            self._watchdog.wait()
            self._watchdog = None
        if self.dir.exists():
            subprocess.run(  # the shell returns at once; its background rm is nobody's child to wait for
                ["sh", "-c", 'rm -rf -- "$1" &', "sh", str(self.dir)],
                start_new_session=True,  # it finishes even when the run's process group is gone
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                check=False,
            )


def deadlocks_broken(database: Database) -> int:
    """How many deadlocks the server has broken in `database` so far (SQLite: none can happen)."""
    if database.kind != "postgresql":
        return 0
    conn = database.connect()
    try:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        ((count,),) = conn.execute(
            "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()"
        ).fetchall()
        return int(count)  # type: ignore[arg-type]
    finally:
        conn.close()


def _watch(owner: str, directory: Path, pg_ctl: str, user: str) -> None:
    """Wait for `owner` (a core.instance id) to be gone (or the directory: a normal stop), then stop
    the server and remove the directory if they are still there."""
    while not instance.is_gone(owner) and directory.exists():
        time.sleep(0.5)
    if (directory / "data" / "postmaster.pid").exists():
        cmd = [pg_ctl, "-D", str(directory / "data"), "-m", "immediate", "-w", "-s", "stop"]
        subprocess.run(["runuser", "-u", user, "--", *cmd] if user else cmd, capture_output=True, check=False)
    shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    _watch(sys.argv[1], Path(sys.argv[2]), sys.argv[3], sys.argv[4])
