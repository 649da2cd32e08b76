"""What the harness needs on the machine: Debian packages, a quiet system MariaDB service,
matplotlib (in bench/.venv), and the Strata release build.

Nothing here is left changed at the end except installed packages and bench/.venv: a system
MariaDB service that was running is stopped for the duration and started again afterwards;
one that the package installation started is stopped and left stopped.
"""

import importlib.util
import os
import shutil
import subprocess
import sys

from .config import BENCH_DIR, REPO_DIR

PACKAGES = ["mariadb-server", "mariadb-client", "mariadb-plugin-rocksdb", "sysbench",
            "python3-venv"]


def missing_packages(pkgs=PACKAGES):
    out = []
    for p in pkgs:
        r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", p], capture_output=True, text=True)
        if r.returncode != 0 or "install ok installed" not in r.stdout:
            out.append(p)
    return out


def install_packages(log):
    """apt-get install what is missing. Returns a list of packages still missing."""
    miss = missing_packages()
    if not miss:
        return []
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        log("cannot install %s (not root or no apt-get)" % " ".join(miss))
        return miss
    log("installing %s from Debian ..." % " ".join(miss))
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    lock = ["-o", "DPkg::Lock::Timeout=900"]
    subprocess.run(["apt-get"] + lock + ["update", "-q"], env=env, stdout=subprocess.DEVNULL)
    p = subprocess.run(["apt-get"] + lock + ["install", "-y", "-q", "--no-install-recommends"] + miss,
                       env=env, capture_output=True, text=True)
    if p.returncode != 0:
        log("apt-get install failed:\n" + (p.stderr or p.stdout)[-3000:])
    return missing_packages()


def _systemd():
    return os.path.isdir("/run/systemd/system") and shutil.which("systemctl")


def system_mariadb_running():
    """The distribution's own mariadbd (pid file in /run/mysqld), not one of ours, nor a
    scratch server someone started with its own --datadir (which writes the same default pid
    file): stopping the service would end those too (Debian's init script falls back to
    `killall mariadbd`)."""
    for name in ("mariadb.pid", "mysqld.pid"):
        try:
            with open(os.path.join("/run/mysqld", name)) as f:
                pid = int(f.read().strip())
            os.kill(pid, 0)
            if _own_datadir(pid):
                continue
            return True
        except (OSError, ValueError):
            continue
    if _systemd():
        r = subprocess.run(["systemctl", "is-active", "--quiet", "mariadb"])
        return r.returncode == 0
    return False


def _own_datadir(pid):
    """True if the process was started with a --datadir other than the distribution's."""
    with open("/proc/%d/cmdline" % pid, "rb") as f:
        args = f.read().decode("utf-8", "replace").split("\0")
    return any(a.startswith("--datadir=") and a.rstrip("/") != "--datadir=/var/lib/mysql" for a in args)


def stop_system_mariadb(log):
    if not system_mariadb_running():
        return False
    log("stopping the system MariaDB service for the duration of the benchmark")
    cmd = ["systemctl", "stop", "mariadb"] if _systemd() else ["service", "mariadb", "stop"]
    subprocess.run(cmd, capture_output=True, timeout=300)
    return True


def start_system_mariadb(log):
    log("starting the system MariaDB service again")
    cmd = ["systemctl", "start", "mariadb"] if _systemd() else ["service", "mariadb", "start"]
    subprocess.run(cmd, capture_output=True, timeout=300)


VENV = os.path.join(BENCH_DIR, ".venv")


def ensure_matplotlib(log, script="oltp"):
    """Import matplotlib, or create bench/.venv with it and re-exec the harness (bench/<script>)
    there.
    Returns True if matplotlib is importable in this process (False: plots are skipped)."""
    if importlib.util.find_spec("matplotlib"):
        return True
    if os.environ.get("OLTP_IN_VENV"):
        return False
    py = os.path.join(VENV, "bin", "python")
    try:
        if not os.path.exists(py):
            log("creating %s for matplotlib ..." % VENV)
            subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", VENV],
                           check=True, capture_output=True, timeout=300)
        if subprocess.run([py, "-c", "import matplotlib"], capture_output=True).returncode != 0:
            log("pip install matplotlib into bench/.venv ...")
            subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                            "matplotlib"], check=True, capture_output=True, timeout=900)
    except (subprocess.SubprocessError, OSError) as e:
        err = getattr(e, "stderr", b"") or b""
        log("matplotlib unavailable, plots will be skipped: %s %s"
            % (e, err.decode(errors="replace")[-500:]))
        return False
    env = dict(os.environ, OLTP_IN_VENV="1")
    script = os.path.join(BENCH_DIR, script)
    os.execve(py, [py, script] + sys.argv[1:], env)


def find_cargo():
    c = shutil.which("cargo")
    if c:
        return c
    home = os.path.expanduser("~/.cargo/bin/cargo")
    return home if os.path.exists(home) else None


def build_strata(cfg, log, progress=None):
    """Returns (available, reason). Builds `strata-server` in release mode unless --no-build."""
    server_toml = os.path.join(REPO_DIR, "crates", "server", "Cargo.toml")
    if cfg.dry_run:
        if os.path.exists(server_toml) or os.path.exists(cfg.strata_bin):
            return True, ""
        return False, "not available: crates/server does not exist yet (no SQL server to test)"
    if cfg.build:
        if not os.path.exists(server_toml):
            return False, "not available: crates/server does not exist yet (no SQL server to test)"
        cargo = find_cargo()
        if not cargo:
            return False, "not available: cargo not found"
        log("building Strata: cargo build --release -p strata-server ...")
        if progress:
            progress.phase("building Strata (cargo build --release -p strata-server)")
        p = subprocess.run([cargo, "build", "--release", "-p", "strata-server"], cwd=REPO_DIR,
                           capture_output=True, text=True)
        if p.returncode != 0:
            return False, "not available: build failed:\n" + p.stderr[-3000:]
    if not os.path.exists(cfg.strata_bin):
        return False, "not available: %s not found" % cfg.strata_bin
    return True, ""


def git_revision():
    try:
        p = subprocess.run(["git", "-C", REPO_DIR, "rev-parse", "--short", "HEAD"],
                           capture_output=True, text=True, timeout=30)
        rev = p.stdout.strip() if p.returncode == 0 else "no commit"
        d = subprocess.run(["git", "-C", REPO_DIR, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True, timeout=30)
        return rev + ("+dirty" if d.stdout.strip() else "")
    except OSError:
        return ""


def package_versions():
    out = {}
    for p in PACKAGES:
        r = subprocess.run(["dpkg-query", "-W", "-f=${Version}", p], capture_output=True, text=True)
        if r.returncode == 0:
            out[p] = r.stdout.strip()
    return out
