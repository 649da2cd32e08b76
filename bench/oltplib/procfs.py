"""Process and machine measurements: /proc/PID/io and /proc/PID/stat samples, size on disk,
free ports, and the machine facts recorded in results.json.

`read_bytes`/`write_bytes` in /proc/PID/io are the bytes the process made the kernel fetch
from or send to storage (page-cache hits are not reads; buffered writes count when dirtied),
summed over all its threads, so they include compaction, flushing and logging.
"""

import os
import platform
import socket
import subprocess

CLK_TCK = os.sysconf("SC_CLK_TCK")


def proc_sample(pid):
    """{'read_bytes','write_bytes','rchar','wchar','cpu_s','rss'} for a live pid, or None."""
    try:
        with open("/proc/%d/io" % pid) as f:
            io = dict(line.split(": ") for line in f.read().split("\n") if ": " in line)
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
    except (OSError, ValueError):
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    # fields[0] is field 3 (state); utime/stime are fields 14/15, rss (pages) field 24.
    utime, stime = int(fields[11]), int(fields[12])
    return {
        "read_bytes": int(io.get("read_bytes", 0)),
        "write_bytes": int(io.get("write_bytes", 0)),
        "rchar": int(io.get("rchar", 0)),
        "wchar": int(io.get("wchar", 0)),
        "cpu_s": (utime + stime) / float(CLK_TCK),
        "rss": int(fields[21]) * os.sysconf("SC_PAGE_SIZE"),
    }


def proc_delta(a, b):
    if not a or not b:
        return None
    return {k: b[k] - a[k] for k in ("read_bytes", "write_bytes", "rchar", "wchar", "cpu_s")}


def dir_size(path, suffix=None):
    """Allocated bytes under path (st_blocks, hard links counted once); 0 if missing. With
    `suffix`, only files whose names end with it."""
    total, seen = 0, set()
    stack = [path]
    while stack:
        p = stack.pop()
        try:
            it = os.scandir(p)
        except OSError:
            continue
        with it:
            for e in it:
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
                    continue
                if suffix and not e.name.endswith(suffix):
                    continue
                key = (st.st_dev, st.st_ino)
                if st.st_nlink > 1:
                    if key in seen:
                        continue
                    seen.add(key)
                total += st.st_blocks * 512
    return total


def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def port_open(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(0.5)
    try:
        s.connect(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def drop_caches():
    """sync, then drop the page cache, dentries and inodes (needs root). Returns True if done."""
    os.sync()
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


def _read(path, default=""):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return default


def machine_facts(workdir):
    cpu = ""
    for line in _read("/proc/cpuinfo").splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem = 0
    for line in _read("/proc/meminfo").splitlines():
        if line.startswith("MemTotal:"):
            mem = int(line.split()[1]) * 1024
    os_name = ""
    for line in _read("/etc/os-release").splitlines():
        if line.startswith("PRETTY_NAME="):
            os_name = line.split("=", 1)[1].strip('"')
    fs = dev = ""
    try:
        out = subprocess.run(["findmnt", "-n", "-o", "SOURCE,FSTYPE", "-T", workdir],
                             capture_output=True, text=True, timeout=10).stdout.split()
        dev, fs = (out + ["", ""])[:2]
    except (OSError, subprocess.SubprocessError):
        pass
    st = os.statvfs(workdir)
    return {
        "cpu_model": cpu,
        "cpus": os.cpu_count(),
        "mem_total_bytes": mem,
        "kernel": platform.release(),
        "os": os_name,
        "python": platform.python_version(),
        "workdir": workdir,
        "workdir_device": dev,
        "workdir_fs": fs,
        "workdir_free_bytes": st.f_bavail * st.f_frsize,
        "swap_total_bytes": next((int(line.split()[1]) * 1024 for line in _read("/proc/meminfo").splitlines()
                                  if line.startswith("SwapTotal:")), 0),
        "dirty_ratio": _read("/proc/sys/vm/dirty_ratio").strip(),
        "dirty_background_ratio": _read("/proc/sys/vm/dirty_background_ratio").strip(),
    }
