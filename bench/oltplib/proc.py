"""A benchmark's server process: started in its own session (a terminal's Ctrl-C reaches only
the script, which then stops the server) with its output appended to a log, awaited until it
answers queries, stopped with SIGTERM (a clean shutdown for both mariadbd and strata) and
SIGKILL after a timeout. Shared by bench/oltp (oltplib.engines.Server) and bench/sbkit.
"""

import signal
import subprocess
import time

from .procfs import port_open


def tail(path, n=20):
    """The last n lines of a log file ("" if it cannot be read)."""
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return ""


def spawn(argv, log_path, cwd, header=b""):
    """Start argv detached from the terminal, stdout and stderr appended to log_path."""
    out = open(log_path, "ab")
    try:
        if header:
            out.write(header)
            out.flush()
        return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True, cwd=cwd)
    finally:
        out.close()


def wait_ready(proc, port, ping, timeout, what, log_tail, error):
    """Seconds until the server listens on port and ping() is true. Raises error(message,
    with log_tail()) if it exits first or is not ready within timeout (then it is killed)."""
    t0 = time.time()
    while time.time() - t0 < timeout:
        if proc.poll() is not None:
            raise error("%s exited at start (code %s):\n%s" % (what, proc.returncode, log_tail()))
        if port_open(port) and ping():
            return time.time() - t0
        time.sleep(0.3)
    kill(proc)
    raise error("%s did not accept connections within %ds:\n%s" % (what, timeout, log_tail()))


def stop(proc, timeout):
    """SIGTERM, then SIGKILL after timeout seconds (None: wait as long as it takes).
    Returns (exit code, clean); a negative code is the signal that ended it."""
    if proc is None:
        return None, True
    clean = True
    if proc.poll() is None:
        try:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            clean = False
            kill(proc)
    return proc.returncode, clean


def kill(proc):
    if proc is not None and proc.poll() is None:
        try:
            proc.kill()
            proc.wait(30)
        except (OSError, subprocess.TimeoutExpired):
            pass
