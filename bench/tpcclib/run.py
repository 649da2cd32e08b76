"""Loading the warehouses and one measured TPC-C run, each server in its own memory cgroup
(oltplib.cgroup, as bench/oltp), with the engines configured by oltplib.engines.

One run: restore the template (`cp -a`), drop caches, start the server in a fresh cgroup at
the limit, wait until it stops writing (settle), warm up (discarded), then the measured `run` with --report-interval=1 while the
server's /proc/PID/io and CPU, the machine's CPU (/proc/stat) and the cgroup's memory are
sampled (and the datadir's size every 1-10 s), datadir size before and after, then `check` (the script's consistency checks), stop.
"""

import os
import re
import shutil
import subprocess
import time

from oltplib import cgroup, engines, freeze, procfs
from oltplib import sysbench as sb

from . import stats

CHECK_RE = r"Check (\d+), warehouse: (\d+) (PASSED|FAILED)"
TABLES = ["warehouse", "district", "customer", "history", "orders", "new_orders", "order_line",
          "stock", "item"]


class Cfg:
    """What oltplib.engines reads from bench/oltp's configuration."""

    def __init__(self, a):
        self.engines = a.engines
        self.mems = a.mems
        # InnoDB's redo log is data/5 (Percona's ratio, as bench/oltp), at least 96 MB.
        self.data_bytes = a.warehouses * stats.WAREHOUSE_BYTES["innodb"]
        self.strata_args = a.strata_arg
        self.strata_bin = a.strata_bin
        self.build = not a.no_build
        self.dry_run = a.dry_run


def machine_cpu():
    """(busy jiffies, steal jiffies, total jiffies) of the whole machine from /proc/stat."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    steal = v[7] if len(v) > 7 else 0
    return sum(v[:8]) - idle, steal, sum(v[:8])


def table_bytes(e):
    """Bytes of the TPC-C tables on disk (InnoDB: the tpcc schema's .ibd files; MyRocks: all
    of #rocksdb; Strata: its SSTs)."""
    if e.name == "innodb":
        return procfs.dir_size(os.path.join(e.datadir, "tpcc"))
    return e.sizes()["tables"]


class Runner:
    def __init__(self, a, log):
        self.a = a
        self.log = log
        self.cg_version = None if a.no_cgroup else cgroup.detect("")
        self.servers, self.cgroups = set(), set()
        self.n = 0
        self.raw = os.path.join(a.out, "sysbench.log")

    # -- sysbench ------------------------------------------------------------------------
    def tpcc(self, e, *args):
        a = self.a
        cmd = ["sysbench", "tpcc.lua", "--db-driver=mysql", "--mysql-host=127.0.0.1",
               "--mysql-port=%d" % e.port, "--mysql-user=root", "--mysql-db=tpcc", "--tables=1",
               "--scale=%d" % a.warehouses]
        if e.name == "myrocks":
            cmd += ["--mysql_storage_engine=rocksdb", "--use_fk=0"]
        elif a.no_fk:
            cmd.append("--use_fk=0")
        return cmd + list(args)

    def sysbench(self, cmd, timeout, on_tick=None):
        """Runs sysbench-tpcc in its directory (it loads its Lua modules from there)."""
        cwd = os.getcwd()
        os.chdir(self.a.tpcc_dir)
        try:
            return sb.run(cmd, timeout, on_tick=on_tick, raw_path=self.raw)
        finally:
            os.chdir(cwd)

    # -- servers -------------------------------------------------------------------------
    def start(self, e, limit, probe=False):
        cg = None
        if self.cg_version:
            self.n += 1
            cg = cgroup.MemoryCgroup(self.cg_version, "", "strata-tpcc-%d-%d-%s" % (
                os.getpid(), self.n, e.name), limit)
            self.cgroups.add(cg)
        srv = engines.Server(e, limit, cg, probe)
        self.servers.add(srv)
        try:
            srv.start(600)
        except BaseException:
            self.stop(srv, 10)
            raise
        return srv

    def stop(self, srv, timeout=600):
        code = srv.stop(timeout)
        self.servers.discard(srv)
        if srv.cgroup:
            srv.cgroup.remove()
            self.cgroups.discard(srv.cgroup)
        return code

    def cleanup(self):
        for srv in list(self.servers):
            try:
                self.stop(srv, 30)
            except Exception:
                srv.kill()
        for cg in list(self.cgroups):
            try:
                cg.remove()
            except OSError:
                pass

    # -- load ----------------------------------------------------------------------------
    def prepare(self, e):
        """Loads the warehouses into e.template under the load limit; returns load facts."""
        a = self.a
        e.init_datadir()
        if e.name == "myrocks":  # it learns its compression here, used from the next start
            srv = self.start(e, a.load_mem, probe=True)
            try:
                e.post_init()
            finally:
                self.stop(srv)
        srv = self.start(e, a.load_mem)
        try:
            if e.name != "myrocks":
                e.post_init()
            engines.sql(e.port, "CREATE DATABASE tpcc")
            t0 = time.time()
            p0 = procfs.proc_sample(srv.pid)
            res = self.sysbench(self.tpcc(e, "--threads=%d" % min(a.warehouses, 8), "prepare"),
                                6 * 3600)
            if not res.clean:
                raise engines.EngineError("prepare failed:\n" + "\n".join(res.lines[-20:]))
            load_s = time.time() - t0
            io = procfs.proc_delta(p0, procfs.proc_sample(srv.pid))
            fks = 0
            for t in TABLES:
                rows = engines.sql(e.port, "SHOW CREATE TABLE tpcc.%s1" % t)
                fks += sum(r[1].count("FOREIGN KEY") for r in rows if len(r) > 1)
            e.before_template_stop()  # InnoDB slow shutdown; LSM engines settle compactions
            peak = srv.cgroup.peak() if srv.cgroup else None
        finally:
            code = self.stop(srv)
        if code != 0:
            raise engines.EngineError("%s: unclean shutdown after the load (exit %s)" % (e.label, code))
        tables = table_bytes(e)
        copy_dir(e.datadir, e.template)
        return {"load_s": round(load_s, 1), "template_bytes": procfs.dir_size(e.template),
                "table_bytes": tables, "table_bytes_per_warehouse": tables // a.warehouses,
                "foreign_keys": fks, "load_io": io, "load_peak_mem": peak,
                "settled": e.extra.get("load_compactions_settled"), "extra": dict(e.extra)}

    # -- one run -------------------------------------------------------------------------
    def one_run(self, e, spec):
        copy_dir(e.template, e.datadir)
        out = dict(spec, caches_dropped=procfs.drop_caches())
        frozen = {}
        with freeze.hold(self.a.freeze_cgroup, frozen) as held:
            self._one_run(e, spec, out, held)
        out.update(frozen)
        return out

    def _one_run(self, e, spec, out, held):
        a = self.a
        try:
            srv = self.start(e, spec["mem"])
        except engines.EngineError as ex:
            out.update(ok=False, tps=0.0, error="start failed: " + str(ex)[-2000:])
            return
        try:
            out["settle"] = settle(srv, 10 if a.quick else 120)
            out["size_before"], out["tables_before"] = procfs.dir_size(e.datadir), table_bytes(e)
            common = ["--threads=%d" % spec["threads"], "--trx_level=%s" % spec["iso"],
                      "--report-interval=1"]
            if spec["purge"]:
                common.append("--enable_purge=yes")
            if a.warmup:
                self.sysbench(self.tpcc(e, *common, "--time=%d" % a.warmup, "run"),
                              a.warmup + a.stall, on_tick=stall_tick(srv, a.stall))
            mem, sizes = [], []
            alive = stall_tick(srv, a.stall)
            every = max(1, min(10, a.duration // 30))

            def tick(iv, el):
                if srv.cgroup:
                    mem.append([round(el, 1), srv.cgroup.usage()])
                if not sizes or el - sizes[-1][0] >= every:
                    sizes.append([round(el, 1), procfs.dir_size(e.datadir)])
                return alive(iv, el)
            p0, m0, c0 = procfs.proc_sample(srv.pid), machine_cpu(), _try(e.counters)
            res = self.sysbench(self.tpcc(e, *common, "--time=%d" % a.duration, "run"),
                                a.duration + a.stall, on_tick=tick)
            p1, m1, c1 = procfs.proc_sample(srv.pid), machine_cpu(), _try(e.counters)
            out.update(measured(res, p0, p1, m0, m1))
            if alive.stalled or res.timed_out:
                out.update(ok=False, error="stalled: no transaction for %d s" % a.stall)
            out["engine_counters"] = {k: c1[k] - c0[k] for k in e.WRITE_KEYS.values()
                                      if isinstance(c0.get(k), int) and isinstance(c1.get(k), int)}
            out["mem_series"], out["size_series"] = mem, sizes
            out["size_after"], out["tables_after"] = procfs.dir_size(e.datadir), table_bytes(e)
            held.release()  # the check is not measured (MyRocks' takes many minutes)
            if e.name in self.a.check:
                out.update(self.check(e))
            else:
                out["check_skipped"] = True
        except engines.EngineError as ex:
            out["error"] = str(ex)[-2000:]
        finally:
            if srv.cgroup:
                out["peak_mem"], out["oom_kills"] = srv.cgroup.peak(), srv.cgroup.oom_kills()
            alive = srv.alive()
            out["exit_code"] = self.stop(srv)
            if not alive:
                out["server_died"] = True
                out["server_log_tail"] = srv.log_tail(30)[-3000:]

    def check(self, e):
        chk = self.sysbench(self.tpcc(e, "check"), 3600)
        checks = re.findall(CHECK_RE, "\n".join(chk.lines))
        return {"checks_passed": sum(1 for c in checks if c[2] == "PASSED"),
                "checks_failed": ["%s/w%s" % (c[0], c[1]) for c in checks if c[2] == "FAILED"],
                "check_ran": bool(checks) and chk.clean}


def settle(srv, cap):
    """Wait after the start until the server writes less than 1 MiB/s for 3 seconds (at most
    `cap` s): MyRocks compacts the loaded files when it opens the restored template (53 MB
    rewritten at 2 warehouses), which would otherwise fall into the warm-up and inflate the
    size before the run. Returns the seconds waited and the bytes written meanwhile."""
    first = prev = procfs.proc_sample(srv.pid)
    t0, quiet = time.time(), 0
    while first and time.time() - t0 < cap and quiet < 3:
        time.sleep(1)
        cur = procfs.proc_sample(srv.pid)
        if not cur:
            break
        quiet = quiet + 1 if cur["write_bytes"] - prev["write_bytes"] < 1024 * 1024 else 0
        prev = cur
    d = procfs.proc_delta(first, prev) or {}
    return {"seconds": round(time.time() - t0, 1), "quiet": quiet >= 3,
            "write_bytes": d.get("write_bytes")}


def stall_tick(srv, stall):
    """on_tick for sysbench.run: False (stop sysbench) once the server died or `stall`
    consecutive 1-second intervals had no transaction (a server thrashing at its limit);
    `.stalled` tells which."""
    state = {"t": None, "zero": 0}

    def tick(iv, _el):
        if iv and iv["t"] != state["t"]:
            state["t"] = iv["t"]
            state["zero"] = state["zero"] + 1 if iv["tps"] == 0 else 0
        tick.stalled = state["zero"] >= stall
        return srv.alive() and not tick.stalled
    tick.stalled = False
    return tick


def measured(res, p0, p1, m0, m1):
    """What one measured sysbench run gives: tps, the 1-second series and its percentiles,
    the server's KB/s read and written and CPU per transaction, the machine's other load."""
    s = res.summary
    tx = s.get("transactions", 0)
    secs = s.get("total_time_s") or 0
    series = [iv["tps"] for iv in res.intervals]
    out = {"ok": res.ok, "tps": s.get("tps", 0.0), "transactions": tx,
           "ignored_errors": s.get("ignored_errors", 0), "p95_ms": s.get("lat_p95_ms"),
           "fatal": res.fatal[:5], "per_second": series, "series": stats.series_summary(series),
           "measured_s": secs}
    io = procfs.proc_delta(p0, p1)
    if io and secs:
        out["io"] = io
        out["read_kbps"] = io["read_bytes"] / 1024.0 / secs
        out["write_kbps"] = io["write_bytes"] / 1024.0 / secs
        out["cpu_cores"] = io["cpu_s"] / secs
        if tx:
            out["cpu_ms_per_trx"] = 1000.0 * io["cpu_s"] / tx
            out["read_kb_per_trx"] = io["read_bytes"] / 1024.0 / tx
            out["write_kb_per_trx"] = io["write_bytes"] / 1024.0 / tx
    if m0 and m1 and io and m1[2] > m0[2]:
        hz = float(procfs.CLK_TCK)
        wall = (m1[2] - m0[2]) / hz / (os.cpu_count() or 1)
        busy = (m1[0] - m0[0]) / hz
        # Other processes' CPU (sysbench included) in cores, and steal, over the window.
        out["machine"] = {"other_cores": max(0.0, busy - io["cpu_s"]) / wall if wall else None,
                          "steal_cores": (m1[1] - m0[1]) / hz / wall if wall else None}
    return out


def copy_dir(src, dst):
    if os.path.exists(dst):
        shutil.rmtree(dst)
    subprocess.run(["cp", "-a", "--reflink=auto", src, dst], check=True)


def _try(fn):
    try:
        return fn() or {}
    except Exception:  # a failing status query must not lose the run
        return {}
