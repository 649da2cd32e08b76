"""Shared helpers of bench/sysbench-matrix and bench/sysbench-vs-innodb.

  log(), Cleanup   - timestamped progress output; stop started servers/processes (by PID) and
                     remove temporary directories on exit, Ctrl-C, SIGTERM, SIGHUP
  StrataServer     - target/release/strata on its own datadir/port, stderr to a log file
  MariaDBServer    - mariadbd started directly (not via systemd) on a datadir made by
                     mariadb-install-db, own port/socket, --user=root (approach of
                     bench/oltplib/engines.py)
  sql()            - one statement through the mariadb client over TCP
  sysbench()       - one sysbench invocation, live progress, parsed summary
                     (oltplib.sysbench does the parsing)
  (process start/wait/stop is oltplib.proc, shared with bench/oltp)
  strata_binary()  - build once (cargo build --release -p strata-server) and copy the binary
                     into the work dir, so that a concurrent rebuild cannot swap it mid-run
"""

import datetime
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(BENCH)
sys.path.insert(0, BENCH)

from oltplib import sysbench as sb  # noqa: E402
from oltplib import proc as srvproc  # noqa: E402
from oltplib.engines import mariadb_version  # noqa: E402
from oltplib.procfs import dir_size, free_port, port_open  # noqa: E402

MARIADBD = "/usr/sbin/mariadbd"
CLIENT = "mariadb"
T0 = time.time()


def log(msg, *args):
    if args:
        msg = msg % args
    el = int(time.time() - T0)
    print("[%s +%02d:%02d:%02d] %s" % (datetime.datetime.now().strftime("%H:%M:%S"),
                                       el // 3600, el // 60 % 60, el % 60, msg), flush=True)


class Failure(Exception):
    pass


# --------------------------------------------------------------------------------------------
class Cleanup:
    """Everything this script started, stopped in reverse order at exit."""

    def __init__(self):
        self.servers = []
        self.procs = set()  # live sysbench Popen objects (registry of oltplib.sysbench.run)
        self.dirs = []
        self.keep_dirs = False
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, self._signal)

    def _signal(self, signum, frame):
        raise KeyboardInterrupt("signal %d" % signum)

    def tempdir(self, parent=None, prefix="sb-"):
        if parent:
            os.makedirs(parent, exist_ok=True)
        d = tempfile.mkdtemp(prefix=prefix, dir=parent)
        self.dirs.append(d)
        return d

    def run(self):
        # Ignore further signals while cleaning up.
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, signal.SIG_IGN)
        for p in list(self.procs):
            if p.poll() is None:
                log("cleanup: killing sysbench pid %d", p.pid)
                try:
                    p.kill()
                    p.wait(30)
                except (OSError, subprocess.TimeoutExpired):
                    pass
        for srv in reversed(self.servers):
            if srv.alive():
                log("cleanup: stopping %s pid %d", srv.label, srv.pid)
                srv.stop(timeout=120)
        if not self.keep_dirs:
            for d in self.dirs:
                shutil.rmtree(d, ignore_errors=True)
        elif self.dirs:
            log("kept work dirs: %s", " ".join(self.dirs))


# --------------------------------------------------------------------------------------------
def sql(port, query, timeout=600, db=None):
    """Rows (lists of strings) of one statement; raises Failure with the client's message."""
    cmd = [CLIENT, "--protocol=TCP", "-h", "127.0.0.1", "-P", str(port), "-uroot", "-N", "-B",
           "--connect-timeout=5"]
    if db:
        cmd.append("--database=%s" % db)
    cmd += ["-e", query]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise Failure("query timed out after %ds: %s" % (timeout, query))
    if p.returncode != 0:
        raise Failure("query failed: %s: %s" % (query, p.stderr.strip()))
    return [line.split("\t") for line in p.stdout.splitlines()]


def check_tables(port, tables, db="sbtest"):
    """CHECK TABLE on each table. Returns (ok, [{'table','rows':[[Table,Op,Msg_type,Msg_text]]}])."""
    out, ok = [], True
    for t in tables:
        try:
            rows = sql(port, "CHECK TABLE %s.%s" % (db, t))
            good = bool(rows) and all(len(r) >= 4 for r in rows) and \
                rows[-1][2].lower() == "status" and rows[-1][3] == "OK" and \
                not any(r[2].lower() == "error" for r in rows)
        except Failure as e:
            rows, good = [["%s.%s" % (db, t), "check", "client", str(e)]], False
        ok = ok and good
        out.append({"table": t, "ok": good, "rows": rows})
    return ok, out


def tail(path, n=30):
    return srvproc.tail(path, n)


def log_problems(path, limit=40):
    """Lines of a server log that look like trouble (panic, error, warning)."""
    rx = re.compile(r"panick|panic|error|fatal|assert|backtrace|warn", re.I)
    out = []
    try:
        with open(path, errors="replace") as f:
            for line in f:
                if rx.search(line):
                    out.append(line.rstrip("\n")[:2000])
                    if len(out) >= limit:
                        break
    except OSError:
        pass
    return out


# --------------------------------------------------------------------------------------------
class Server:
    label = "server"

    def __init__(self, datadir, port, log_path):
        self.datadir = datadir
        self.port = port
        self.log_path = log_path
        self.proc = None

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def argv(self):
        raise NotImplementedError

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def ping(self):
        try:
            sql(self.port, "SELECT 1", timeout=10)
            return True
        except Failure:
            return False

    def start(self, timeout=120):
        if port_open(self.port):
            raise Failure("port %d is already in use" % self.port)
        os.makedirs(os.path.dirname(self.log_path), exist_ok=True)
        self.proc = srvproc.spawn(self.argv(), self.log_path, os.path.dirname(self.log_path))
        return srvproc.wait_ready(self.proc, self.port, self.ping, timeout, self.label,
                                  lambda: tail(self.log_path), Failure)

    def stop(self, timeout=300):
        """SIGTERM (clean shutdown), SIGKILL after timeout. Returns (exit code, clean)."""
        return srvproc.stop(self.proc, timeout)

    def kill(self):
        srvproc.kill(self.proc)


class StrataServer(Server):
    label = "strata"

    def __init__(self, binary, datadir, port, log_path, args=()):
        super().__init__(datadir, port, log_path)
        self.binary = binary
        self.args = list(args)

    def argv(self):
        return [self.binary, "--datadir=%s" % self.datadir, "--port=%d" % self.port,
                "--bind-address=127.0.0.1", "--socket="] + self.args

    def start(self, timeout=120):
        os.makedirs(self.datadir, exist_ok=True)
        return super().start(timeout)


class MariaDBServer(Server):
    label = "mariadbd"

    def __init__(self, datadir, rundir, port, settings):
        super().__init__(datadir, port, os.path.join(rundir, "mariadbd.log"))
        self.rundir = rundir
        self.settings = settings
        self.cnf = os.path.join(rundir, "my.cnf")

    def write_cnf(self):
        os.makedirs(self.rundir, exist_ok=True)
        lines = ["[mariadbd]", "user=root", "datadir=%s" % self.datadir,
                 "socket=%s" % os.path.join(self.rundir, "mysqld.sock"),
                 "pid-file=%s" % os.path.join(self.rundir, "mysqld.pid"),
                 "port=%d" % self.port, "bind-address=127.0.0.1", "tmpdir=%s" % self.rundir,
                 "log-error=%s" % self.log_path]
        for k, v in self.settings.items():
            lines.append(k if v is None else "%s=%s" % (k, v))
        with open(self.cnf, "w") as f:
            f.write("\n".join(lines) + "\n")

    def install(self):
        if os.path.exists(self.datadir):
            shutil.rmtree(self.datadir)
        os.makedirs(self.datadir)
        self.write_cnf()
        p = subprocess.run(["mariadb-install-db", "--defaults-file=%s" % self.cnf, "--user=root",
                            "--datadir=%s" % self.datadir,
                            "--auth-root-authentication-method=normal", "--skip-test-db"],
                           capture_output=True, text=True, timeout=600)
        if p.returncode != 0:
            raise Failure("mariadb-install-db failed: %s" % (p.stderr or p.stdout)[-2000:])

    def argv(self):
        self.write_cnf()
        return [MARIADBD, "--defaults-file=%s" % self.cnf, "--user=root"]


# --------------------------------------------------------------------------------------------
def strata_binary(args, workdir):
    """Build (unless --no-build or --strata-bin) and copy the server binary into workdir.
    Returns (path of the copy, facts for the results)."""
    src = args.strata_bin or os.path.join(REPO, "target", "release", "strata")
    if not args.strata_bin and not args.no_build:
        log("building: cargo build --release -p strata-server (waits if another build holds the lock)")
        p = subprocess.run(["cargo", "build", "--release", "-p", "strata-server"], cwd=REPO)
        if p.returncode != 0:
            raise Failure("cargo build failed (exit %d)" % p.returncode)
    if not os.path.isfile(src):
        raise Failure("no server binary at %s (build it or pass --strata-bin)" % src)
    os.makedirs(os.path.join(workdir, "bin"), exist_ok=True)
    dst = os.path.join(workdir, "bin", "strata")
    shutil.copy2(src, dst)
    h = hashlib.sha256()
    with open(dst, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    facts = {"source": src, "sha256": h.hexdigest(),
             "mtime": datetime.datetime.fromtimestamp(os.path.getmtime(src)).isoformat(timespec="seconds")}
    if not args.strata_bin:
        facts.update(git_facts())  # the binary was built from this checkout
    log("strata binary: %s (sha256 %s, built %s), copied to the work dir", src,
        facts["sha256"][:12], facts["mtime"])
    return dst, facts


def git_facts():
    def git(*a):
        try:
            return subprocess.run(["git"] + list(a), cwd=REPO, capture_output=True, text=True,
                                  timeout=30).stdout.rstrip("\n")
        except OSError:
            return ""
    return {"git_head": git("rev-parse", "--short", "HEAD").strip(),
            "git_dirty": [ln[3:] for ln in git("status", "--porcelain").splitlines()]}


# --------------------------------------------------------------------------------------------
def sysbench(cmd, timeout, raw_path, cleanup, label, every=10):
    """Run one sysbench command with a progress line every `every` s. Returns a dict:
    exit_code, timed_out, wall_s, summary (tps, qps, lat_p95_ms, ignored_errors, ...),
    fatal (FATAL/ALERT lines, the failing SQL included), ok."""
    state = {"next": every}

    def tick(last, elapsed):
        if elapsed >= state["next"]:
            state["next"] += every
            if last:
                log("  %s  %3ds  tps %.1f  qps %.1f  p95 %.2f ms  err/s %.2f  reconn/s %.2f",
                    label, elapsed, last["tps"], last["qps"], last["p95_ms"], last["err"],
                    last["reconn"])
            else:
                log("  %s  %3ds ...", label, elapsed)
        return True

    res = sb.run(cmd, timeout, on_tick=tick, raw_path=raw_path, registry=cleanup.procs)
    fatal = [ln[:4000] for ln in res.lines if "FATAL" in ln or "ALERT" in ln]
    return {"cmd": " ".join(cmd), "exit_code": res.exit_code, "timed_out": res.timed_out,
            "wall_s": round(res.wall_s, 1), "summary": res.summary, "fatal": fatal,
            "ok": res.exit_code == 0 and not res.timed_out and not fatal}


def sysbench_version():
    return sb.version()


def default_outdir(name, quick):
    stamp = datetime.datetime.now().strftime("%Y-%m-%d-%H%M%S")
    sub = os.path.join("results", "quick") if quick else "results"
    return os.path.join(BENCH, sub, "%s-%s" % (name, stamp))


__all__ = ["log", "Failure", "Cleanup", "sql", "check_tables", "tail", "log_problems",
           "StrataServer", "MariaDBServer", "mariadb_version", "strata_binary", "sysbench",
           "sysbench_version", "default_outdir", "dir_size", "free_port", "port_open", "REPO",
           "BENCH"]
