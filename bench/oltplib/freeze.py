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
import time

OWNER_FILE = "/run/strata-bench-freeze.pid"


def _state_file(path):
    return os.path.join(path, "freezer.state")


def state(path):
    """The freezer group's state (THAWED, FREEZING, FROZEN), or None if unreadable."""
    try:
        with open(_state_file(path)) as f:
            return f.read().strip()
    except OSError:
        return None


def tasks(path):
    """Number of processes in the group (0 if unreadable)."""
    try:
        with open(os.path.join(path, "cgroup.procs")) as f:
            return sum(1 for line in f if line.strip())
    except OSError:
        return 0


def _write(path, value):
    with open(_state_file(path), "w") as f:
        f.write(value)


def freeze(path, timeout=30.0):
    """Freezes the group and waits until the kernel reports FROZEN; then syncs. Returns
    seconds taken. Raises OSError if the group does not exist."""
    t0 = time.time()
    _write(path, "FROZEN")
    while state(path) != "FROZEN" and time.time() - t0 < timeout:
        time.sleep(0.05)
    with open(OWNER_FILE, "w") as f:
        f.write(str(os.getpid()))
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


@contextlib.contextmanager
def hold(path, rec=None):
    """Keeps the group frozen inside the block (or until release()); records what it did in
    rec (a dict) if given."""
    if not path:
        yield _Held(None)
        return
    n = tasks(path)
    took = freeze(path)
    if rec is not None:
        rec["frozen"] = {"cgroup": path, "tasks": n, "freeze_s": round(took, 2)}
    held = _Held(path)
    try:
        yield held
    finally:
        held.release()


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
