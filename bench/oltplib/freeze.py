"""Pausing other work on the machine during measured runs (`--freeze-cgroup`).

The machine is shared: other sessions' builds and tests take CPU and, worse for write runs,
disk bandwidth (their writeback slows the engines' WAL fsyncs). Lowering their CPU priority is
not enough: with the other work in an idle-priority cpu cgroup, oltp_write_only still ran at
0.82x of a frozen-neighbours window (notes: session 34). So the harness can freeze a cgroup v1
`freezer` group for the duration of each run (server start to stop) and thaw it in between
(loads, copies, restores), after `sync` so that the neighbours' dirty pages are written before
the run, not during it.

`hold(path)` is a context manager; path None or "" does nothing. The owner's pid is written
to OWNER_FILE while frozen so that a watchdog can thaw the group if the harness dies without
its `finally` (SIGKILL): see `thaw_if_orphaned`.
"""

import contextlib
import os
import signal
import threading
import time

OWNER_FILE = "/run/strata-bench-freeze.pid"


class FreezeError(Exception):
    pass


def _state_file(path):
    return os.path.join(path, "freezer.state")


def check_path(path):
    """Exits with a message unless path is a freezer group this process is not in (a harness
    inside the group it freezes would stop itself)."""
    if not path:
        return
    if not os.path.exists(_state_file(path)):
        raise SystemExit("--freeze-cgroup %s: not a cgroup v1 freezer group (no freezer.state)" % path)
    if os.getpid() in _pids(path):
        raise SystemExit("--freeze-cgroup %s: this harness is in that group itself (started from a "
                         "helper's directory?); run it from elsewhere" % path)


def state(path):
    """The freezer group's state (THAWED, FREEZING, FROZEN), or None if unreadable."""
    try:
        with open(_state_file(path)) as f:
            return f.read().strip()
    except OSError:
        return None


def _pids(path):
    try:
        with open(os.path.join(path, "cgroup.procs")) as f:
            return [int(x) for x in f.read().split() if x.isdigit()]
    except OSError:
        return []


def tasks(path):
    """Number of processes in the group (0 if unreadable)."""
    return len(_pids(path))


def _parent(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def ours(path, me=None):
    """Pids in the group that descend from this process (servers or clients under test)."""
    me = me or os.getpid()
    out = []
    for pid in _pids(path):
        p, seen = pid, 0
        while p > 1 and seen < 64:
            if p == me:
                out.append(pid)
                break
            p, seen = _parent(p), seen + 1
    return out


def _write(path, value):
    with open(_state_file(path), "w") as f:
        f.write(value)


def freeze(path, timeout=30.0):
    """Freezes the group and waits until the kernel reports FROZEN; then syncs. Returns
    seconds taken. Raises FreezeError (after thawing) if the group holds this process or its
    children, or does not reach FROZEN in time (e.g. a watchdog thawed it)."""
    t0 = time.time()
    mine = ours(path)
    if mine:
        raise FreezeError("the freezer group holds processes of this harness: %s" % mine)
    with open(OWNER_FILE, "w") as f:  # before FROZEN: the watchdog thaws an ownerless group
        f.write(str(os.getpid()))
    _write(path, "FROZEN")
    while state(path) != "FROZEN" and time.time() - t0 < timeout:
        time.sleep(0.05)
    if state(path) != "FROZEN":
        thaw(path)
        raise FreezeError("the group did not freeze within %.0f s (state %s)" % (timeout, state(path)))
    os.sync()
    return time.time() - t0


def thaw(path):
    """Thaws the group (never raises: called from finally blocks)."""
    try:
        _write(path, "THAWED")
    except OSError:
        pass
    try:
        os.unlink(OWNER_FILE)
    except OSError:
        pass


class _Held:
    """What hold() yields: release() thaws early (e.g. before a run's unmeasured check)."""

    def __init__(self, path):
        self.path = path

    def release(self):
        if self.path:
            thaw(self.path)
            self.path = None


def _sigterm(signum, frame):
    raise KeyboardInterrupt


@contextlib.contextmanager
def hold(path, rec=None):
    """Keeps the group frozen inside the block (or until release()); records what it did in
    rec (a dict) if given: {"cgroup", "tasks", "freeze_s"}, or {"cgroup", "failed"} when the
    freeze failed (the run then goes on unfrozen, and its background load shows it). SIGTERM
    inside the block raises KeyboardInterrupt so that the group is thawed."""
    if not path:
        yield _Held(None)
        return
    main = threading.current_thread() is threading.main_thread()
    old = signal.signal(signal.SIGTERM, _sigterm) if main else None
    held = _Held(path)
    try:
        n = tasks(path)
        try:
            took = freeze(path)
            if rec is not None:
                rec["frozen"] = {"cgroup": path, "tasks": n, "freeze_s": round(took, 2)}
        except (FreezeError, OSError) as ex:
            held.path = None
            if rec is not None:
                rec["frozen"] = {"cgroup": path, "failed": str(ex)}
        yield held
    finally:
        held.release()
        if main:
            signal.signal(signal.SIGTERM, old)


def thaw_if_orphaned(path, owner_file=OWNER_FILE):
    """Watchdog: thaws the group when it is frozen and its owner is gone. Returns True if it
    thawed."""
    if state(path) not in ("FROZEN", "FREEZING"):
        return False
    try:
        with open(owner_file) as f:
            pid = int(f.read().strip() or 0)
    except (OSError, ValueError):
        pid = 0
    if pid > 0:
        try:
            os.kill(pid, 0)
            return False
        except ProcessLookupError:
            pass
        except PermissionError:
            return False
    thaw(path)
    return True


if __name__ == "__main__":  # watchdog: python3 -m oltplib.freeze PATH
    import sys
    print("thawed" if thaw_if_orphaned(sys.argv[1]) else "nothing to do")
