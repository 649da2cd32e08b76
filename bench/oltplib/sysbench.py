"""sysbench command lines, live execution with a once-a-second callback, and output parsing.

Options follow seed 000: `--rand-type=uniform --skip-trx=off`, script defaults otherwise
(10 point selects, 4 ranges of 100 rows, 1 index update, 1 non-index update, 1 delete +
insert), `--report-interval=1` for the 1-second series. sysbench retries and counts as
"ignored errors" only 1213 (deadlock), 1205 (lock wait timeout) and 1020; any other error
stops it with a FATAL message and a non-zero exit status.
"""

import queue
import re
import subprocess
import threading
import time

COMMON = ["--db-driver=mysql", "--mysql-host=127.0.0.1", "--mysql-user=root",
          "--mysql-db=sbtest", "--rand-type=uniform", "--skip-trx=off"]

INTERVAL_RE = re.compile(
    r"^\[\s*(?P<t>\d+)s\s*\]\s+thds:\s*(?P<thds>\d+)\s+tps:\s*(?P<tps>[\d.]+)\s+"
    r"qps:\s*(?P<qps>[\d.]+)\s+\(r/w/o:\s*(?P<r>[\d.]+)/(?P<w>[\d.]+)/(?P<o>[\d.]+)\)\s+"
    r"lat\s+\(ms,\s*\d+%\):\s*(?P<lat>[\d.]+)\s+err/s:?\s*(?P<err>[\d.]+)\s+"
    r"reconn/s:\s*(?P<reconn>[\d.]+)")

SUMMARY_RE = {
    "reads": r"^\s*read:\s+(\d+)",
    "writes": r"^\s*write:\s+(\d+)",
    "other": r"^\s*other:\s+(\d+)",
    "queries_total": r"^\s*total:\s+(\d+)",
    "transactions": r"^\s*transactions:\s+(\d+)",
    "tps": r"^\s*transactions:\s+\d+\s+\(([\d.]+) per sec",
    "queries": r"^\s*queries:\s+(\d+)",
    "qps": r"^\s*queries:\s+\d+\s+\(([\d.]+) per sec",
    "ignored_errors": r"^\s*ignored errors:\s+(\d+)",
    "reconnects": r"^\s*reconnects:\s+(\d+)",
    "total_time_s": r"^\s*total time:\s+([\d.]+)s",
    "lat_min_ms": r"^\s*min:\s+([\d.]+)",
    "lat_avg_ms": r"^\s*avg:\s+([\d.]+)",
    "lat_max_ms": r"^\s*max:\s+([\d.]+)",
    "lat_p95_ms": r"^\s*95th percentile:\s+([\d.]+)",
}


def base_cmd(workload, port, tables, table_size):
    return ["sysbench", workload, "--mysql-port=%d" % port, "--tables=%d" % tables,
            "--table-size=%d" % table_size] + COMMON


def prepare_cmd(port, tables, table_size, engine_args, threads):
    return base_cmd("oltp_read_write", port, tables, table_size) + engine_args + [
        "--threads=%d" % threads, "prepare"]


def run_cmd(workload, port, tables, table_size, threads, seconds, report=True):
    cmd = base_cmd(workload, port, tables, table_size) + [
        "--threads=%d" % threads, "--time=%d" % seconds, "--events=0"]
    if report:
        cmd.append("--report-interval=1")
    return cmd + ["run"]


def parse_interval(line):
    m = INTERVAL_RE.match(line.strip())
    if not m:
        return None
    d = {k: float(v) for k, v in m.groupdict().items()}
    d["t"] = int(d["t"])
    d["thds"] = int(d["thds"])
    d["p95_ms"] = d.pop("lat")
    return d


def parse_summary(lines):
    out = {}
    for line in lines:
        for key, rx in SUMMARY_RE.items():
            if key in out:
                continue
            m = re.match(rx, line)
            if m:
                v = m.group(1)
                out[key] = float(v) if "." in v else int(v)
    return out


class Result:
    def __init__(self):
        self.cmd = []
        self.lines = []
        self.intervals = []
        self.summary = {}
        self.exit_code = None
        self.timed_out = False
        self.wall_s = 0.0

    @property
    def fatal(self):
        return [ln for ln in self.lines if "FATAL" in ln or "ALERT" in ln
                or re.search(r"\berror\b", ln, re.I) and not ln.lstrip().startswith("ignored errors")]

    @property
    def ok(self):
        return (self.exit_code == 0 and not self.timed_out and self.summary.get("transactions", 0) > 0
                and not any("FATAL" in ln for ln in self.lines))

    @property
    def clean(self):
        """sysbench 1.0 exits 0 even when prepare hits a FATAL error."""
        return self.exit_code == 0 and not self.timed_out and not any("FATAL" in ln for ln in self.lines)

    def to_dict(self):
        return {"cmd": " ".join(self.cmd), "exit_code": self.exit_code, "timed_out": self.timed_out,
                "wall_s": round(self.wall_s, 3), "summary": self.summary,
                "fatal": self.fatal[:20]}


def run(cmd, timeout, on_tick=None, raw_path=None, registry=None):
    """Run sysbench; call on_tick(last_interval_or_None, elapsed_s) about once a second.
    on_tick may return False to stop sysbench early. `registry` (a set) holds the live
    Popen so that the harness can kill it on interrupt."""
    res = Result()
    res.cmd = cmd
    t0 = time.time()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, text=True, bufsize=1, start_new_session=True)
    if registry is not None:
        registry.add(proc)
    q = queue.Queue()

    def reader():
        for line in proc.stdout:
            q.put(line.rstrip("\n"))
        q.put(None)

    th = threading.Thread(target=reader, daemon=True)
    th.start()
    last = None
    done = False
    next_tick = t0 + 1
    try:
        while not done:
            try:
                line = q.get(timeout=max(0.05, next_tick - time.time()))
                if line is None:
                    done = True
                else:
                    res.lines.append(line)
                    iv = parse_interval(line)
                    if iv:
                        res.intervals.append(iv)
                        last = iv
            except queue.Empty:
                pass
            now = time.time()
            if now >= next_tick:
                next_tick = now + 1
                if on_tick and on_tick(last, now - t0) is False:
                    proc.terminate()
                if now - t0 > timeout:
                    res.timed_out = True
                    proc.kill()
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
        if registry is not None:
            registry.discard(proc)
    res.exit_code = proc.returncode
    res.wall_s = time.time() - t0
    res.summary = parse_summary(res.lines)
    if raw_path:
        with open(raw_path, "a") as f:
            f.write("$ %s\n%s\n[exit %s, %.1fs]\n\n" % (" ".join(cmd), "\n".join(res.lines),
                                                        res.exit_code, res.wall_s))
    return res


def version():
    try:
        return subprocess.run(["sysbench", "--version"], capture_output=True, text=True,
                              timeout=30).stdout.strip()
    except OSError:
        return ""
