"""Memory cgroups that confine one server process each, like a small VM.

One cgroup is created per server start (so its peak is the peak of that start) and removed
when the server stops. cgroup v1 (`/sys/fs/cgroup/memory`) is preferred: it charges page
cache to the group, which is what a VM's RAM would hold. cgroup v2 works the same way
(`memory.max`, `memory.peak`, `memory.events`). The server is put into the group by a shell
that writes its own pid to `cgroup.procs` and then execs the server, so every allocation
from the first instruction on is charged.

Removal moves any remaining task back to the harness's own cgroup, asks the kernel to
reclaim the group's pages (v1 `memory.force_empty`) and removes the directory.
"""

import os
import time

V1_ROOT = "/sys/fs/cgroup/memory"
V2_ROOT = "/sys/fs/cgroup"


def detect(parent=""):
    """'v1', 'v2' or None: the first hierarchy where a test group with a memory limit can
    actually be created under `parent` (containers often mount cgroups read-only)."""
    candidates = []
    if os.path.exists(os.path.join(V1_ROOT, "memory.limit_in_bytes")):
        candidates.append("v1")
    try:
        with open(os.path.join(V2_ROOT, "cgroup.controllers")) as f:
            if "memory" in f.read().split():
                candidates.append("v2")
    except OSError:
        pass
    for version in candidates:
        try:
            MemoryCgroup(version, parent, "strata-oltp-probe-%d" % os.getpid(), 1 << 30).remove()
            return version
        except OSError:
            continue
    return None


def _own_cgroup(version):
    """The harness's own cgroup path (relative), where stray tasks are moved back to."""
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                _, ctrls, path = line.rstrip("\n").split(":", 2)
                if version == "v1" and "memory" in ctrls.split(","):
                    return path.lstrip("/")
                if version == "v2" and ctrls == "":
                    return path.lstrip("/")
    except OSError:
        pass
    return ""


def _write(path, value):
    with open(path, "w") as f:
        f.write(str(value))


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


class MemoryCgroup:
    """A memory-limited cgroup. `path` is its directory."""

    def __init__(self, version, parent, name, limit_bytes):
        self.version = version
        root = V1_ROOT if version == "v1" else V2_ROOT
        self.root = root
        self.path = os.path.join(root, parent, name) if parent else os.path.join(root, name)
        self.limit = limit_bytes
        if os.path.isdir(self.path):
            self.remove()
        os.mkdir(self.path)
        try:
            self._limit(version, limit_bytes)
        except OSError:
            if os.path.isdir(self.path):
                os.rmdir(self.path)
            raise

    def _limit(self, version, limit_bytes):
        if version == "v1":
            _write(os.path.join(self.path, "memory.limit_in_bytes"), limit_bytes)
            # No swap here; if there is swap, do not let the group hide in it.
            memsw = os.path.join(self.path, "memory.memsw.limit_in_bytes")
            if os.path.exists(memsw):
                try:
                    _write(memsw, limit_bytes)
                except OSError:
                    pass
        else:
            if not os.path.exists(os.path.join(self.path, "memory.max")):
                # v2: the parent must delegate the memory controller to its children.
                try:
                    _write(os.path.join(os.path.dirname(self.path), "cgroup.subtree_control"), "+memory")
                except OSError:
                    os.rmdir(self.path)
                    raise
            _write(os.path.join(self.path, "memory.max"), limit_bytes)
            try:
                _write(os.path.join(self.path, "memory.swap.max"), 0)
            except OSError:
                pass

    @property
    def procs_file(self):
        return os.path.join(self.path, "cgroup.procs")

    def usage(self):
        name = "memory.usage_in_bytes" if self.version == "v1" else "memory.current"
        try:
            return int(_read(os.path.join(self.path, name)) or 0)
        except ValueError:
            return 0

    def stat(self):
        """{'cache': page cache bytes, 'rss': anonymous bytes} from memory.stat."""
        out = {}
        for line in _read(os.path.join(self.path, "memory.stat")).splitlines():
            k, _, v = line.partition(" ")
            if v.isdigit():
                out[k] = int(v)
        if self.version == "v1":
            return {"cache": out.get("cache", 0), "rss": out.get("rss", 0)}
        return {"cache": out.get("file", 0), "rss": out.get("anon", 0)}

    def peak(self):
        name = "memory.max_usage_in_bytes" if self.version == "v1" else "memory.peak"
        try:
            return int(_read(os.path.join(self.path, name)) or 0) or None
        except ValueError:
            return None

    def oom_kills(self):
        """Number of OOM kills inside the group (v1 oom_control, v2 memory.events)."""
        name = "memory.oom_control" if self.version == "v1" else "memory.events"
        for line in _read(os.path.join(self.path, name)).splitlines():
            k, _, v = line.partition(" ")
            if k == "oom_kill":
                return int(v)
        return 0

    def failcnt(self):
        if self.version != "v1":
            return None
        try:
            return int(_read(os.path.join(self.path, "memory.failcnt")) or 0)
        except ValueError:
            return None

    def pids(self):
        return [int(x) for x in _read(self.procs_file).split() if x.isdigit()]

    def remove(self):
        """Move tasks out, reclaim, rmdir. Safe to call twice."""
        if not os.path.isdir(self.path):
            return
        home = _own_cgroup(self.version)
        home_procs = os.path.join(self.root, home, "cgroup.procs") if home else os.path.join(self.root, "cgroup.procs")
        for pid in self.pids():
            try:
                _write(home_procs, pid)
            except OSError:
                pass
        if self.version == "v1":
            try:
                _write(os.path.join(self.path, "memory.force_empty"), 0)
            except OSError:
                pass
        for _ in range(50):
            try:
                os.rmdir(self.path)
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.2)
        os.rmdir(self.path)
