"""One measured run, mixed into the Harness: drop caches, start the server in a fresh cgroup,
discarded warm-up (reads: until the cgroup's memory stops growing), the measured sysbench run
with 1-second samples (QPS/TPS/p95, cgroup memory, size on disk, /proc I/O and CPU), leftover
work ("debt") at the end, a drain watch of background writes, then stop. A run that ends in
an OOM kill or a dead server is recorded as such (status "oom"/"server_died") and the data
directory is restored before the next one.
"""

import os
import resource
import statistics
import time

from . import freeze, procfs, rounds, sysbench
from .config import MiB, fmt_bytes, fmt_duration, fmt_size
from .engines import EngineError


class OneRun:
    def run_one(self, e, spec):
        """One run (server start to stop), with --freeze-cgroup's group frozen throughout."""
        frozen = {}
        with freeze.hold(self.cfg.freeze_cgroup, frozen):
            rec = self._run_one(e, spec)
        rec.update(frozen)
        return rec

    def _run_one(self, e, spec):
        cfg = self.cfg
        rid = spec.run_id()
        label = "%s %s %s %dthr%s%s%s" % (e.label, fmt_size(spec.mem), spec.workload, spec.threads,
                                           " binlog on" if spec.binlog == "on" else "",
                                           " round %d" % spec.round if spec.round else "",
                                         " sweep %s" % spec.variant if spec.variant else "")
        rec = {"id": rid, "engine": e.name, "mem": spec.mem, "workload": spec.workload,
               "threads": spec.threads, "binlog": spec.binlog, "status": "ok"}
        if spec.round:
            rec["round"] = spec.round
        if spec.variant:
            rec["variant"] = spec.variant
        rec["cache_variant"] = e.variant_name(spec.mem)
        raw = os.path.join(cfg.out_dir, "raw", rid + ".txt")
        self.progress.phase(label + ": starting")
        rec["caches_dropped"] = procfs.drop_caches()
        try:
            srv = self.start(e, spec.mem, binlog=spec.binlog == "on")
        except EngineError as ex:
            rec.update(status="start_failed", reason=str(ex)[-2000:], needs_restore=True)
            return rec
        try:
            rec["start_s"] = round(time.time() - srv.started, 2)
            if spec.binlog == "on":
                rec["binlog_vars"] = e.check_binlog()
            sz = e.sizes()
            rec["size_before"], rec["tables_before"] = sz["datadir"], sz["tables"]
            warm = self.warmup(e, srv, spec, label, raw)
            rec["warmup"] = warm
            if warm.get("failed"):
                return self.finish_failed(rec, srv, warm.get("reason", "warm-up failed"), warm.get("stalled"))
            log0 = e.binlog_bytes() if spec.binlog == "on" else None
            rec.update(self.measure(e, srv, spec, label, raw))
            if rec.get("stalled"):
                return self.finish_failed(rec, srv, "measure: no query completed for %ds" % cfg.stall, True)
            if log0 is not None:
                grown = e.binlog_bytes() - log0
                rec["binlog_bytes"] = grown
                if rec.get("transactions"):
                    rec["binlog_bytes_per_trx"] = round(grown / rec["transactions"], 1)
                if not spec.is_read and rec.get("transactions") and grown <= 0:
                    return self.finish_failed(rec, srv, "binlog on, but the binary log did not grow "
                                              "during %d transactions" % rec["transactions"])
            rec["debt_end"] = _try(e.debt)
            self.progress.phase(label + ": drain watch")
            rec["drain"] = self.drain(srv)
            rec["debt_after_drain"] = _try(e.debt)
            realized = e.realized_debt(rec["debt_end"], rec["debt_after_drain"])
            if realized is not None and rec["debt_end"]:
                rec["debt_end"]["drain_job_bytes"] = realized
            sz = e.sizes()
            rec["size_after"], rec["tables_after"] = sz["datadir"], sz["tables"]
            self.collect_memory(rec, srv)
            if not srv.alive():
                return self.finish_failed(rec, srv, "server exited during the run")
            if not rec["sysbench"]["ok"]:
                return self.finish_failed(rec, srv, "sysbench failed: " + " | ".join(rec["sysbench"]["fatal"][:3]))
            if rec["errors"] > cfg.max_error_rate * max(1, rec["transactions"]):
                rec["status"] = "too_many_errors"
                rec["reason"] = "%d ignored errors for %d transactions" % (rec["errors"], rec["transactions"])
            self.progress.phase(label + ": stopping")
            t0 = time.time()
            rec["exit_code"] = self.stop(srv)
            rec["stop_s"] = round(time.time() - t0, 2)
            if rec["exit_code"] != 0 and rec["status"] == "ok":
                rec["status"] = "unclean_shutdown"
                rec["reason"] = "exit code %s after SIGTERM (negative: killed by that signal after %ds)" % (
                    rec["exit_code"], rec["stop_s"])
                rec["server_log_tail"] = srv.log_tail(40)[-4000:]
                rec["needs_restore"] = True
            return rec
        except EngineError as ex:
            return self.finish_failed(rec, srv, str(ex))

    def finish_failed(self, rec, srv, reason, stalled=False):
        self.collect_memory(rec, srv)
        alive = srv.alive()
        rec["exit_code"] = self.stop(srv, timeout=60)
        oom = rec.get("oom_kills", 0) > 0
        rec["status"] = "oom" if oom else ("server_died" if not alive else ("stalled" if stalled else "failed"))
        rec["reason"] = ("killed by the cgroup OOM killer at %s; " % fmt_size(srv.limit) if oom else "") + reason
        if stalled and rec.get("peak_mem"):
            rec["reason"] += " (memory peak %s of the %s limit%s)" % (
                fmt_bytes(rec["peak_mem"]), fmt_size(srv.limit),
                "" if rec["peak_mem"] > 0.9 * srv.limit else ": not memory, the disk or CPU stalled")
        if not alive:
            rec["server_exit_code"] = rec["exit_code"]
            rec["server_log_tail"] = srv.log_tail(40)[-4000:]
        rec["needs_restore"] = True
        return rec

    def collect_memory(self, rec, srv):
        if srv.cgroup:
            rec["peak_mem"] = srv.cgroup.peak()
            rec["oom_kills"] = srv.cgroup.oom_kills()
            rec["mem_failcnt"] = srv.cgroup.failcnt()

    def _sampler(self, srv, label, phase, total, series=None, sizes=None, e=None):
        """on_tick callback: progress line, memory and size samples, last /proc sample."""
        state = {"last": procfs.proc_sample(srv.pid), "next_size": 0, "zero": 0, "iv_t": None,
                 "stalled": False}

        def tick(iv, el):
            if iv and iv["t"] != state["iv_t"]:
                state["iv_t"] = iv["t"]
                state["zero"] = state["zero"] + 1 if iv["tps"] == 0 else 0
                if state["zero"] >= self.cfg.stall:
                    state["stalled"] = True
            s = procfs.proc_sample(srv.pid)
            if s:
                state["last"] = s
            usage = srv.cgroup.usage() if srv.cgroup else (s or {}).get("rss", 0)
            if series is not None:
                st = srv.cgroup.stat() if srv.cgroup else {}
                series.append([round(el, 1), usage, st.get("cache"), st.get("rss")])
            if sizes is not None and el >= state["next_size"]:
                sizes.append([round(el, 1), procfs.dir_size(e.datadir)])
                state["next_size"] = el + self.cfg.size_every
            txt = "%s %s/%s" % (phase, fmt_duration(el), fmt_duration(total))
            if iv:
                txt += " qps %.0f tps %.0f p95 %.1fms err/s %.1f" % (iv["qps"], iv["tps"], iv["p95_ms"], iv["err"])
            txt += " mem %s" % fmt_bytes(usage)
            self.progress.status(txt)
            return srv.alive() and not state["stalled"]
        return tick, state

    def warmup(self, e, srv, spec, label, raw):
        cfg = self.cfg
        if cfg.warmup <= 0:
            return {"seconds": 0}
        adaptive = spec.is_read and srv.cgroup is not None
        total = cfg.warmup_read_max if adaptive else cfg.warmup
        self.progress.phase(label + ": warm-up" + (" (until memory stops growing)" if adaptive else ""))
        elapsed, chunks = 0, []
        prev = srv.cgroup.usage() if srv.cgroup else 0
        while elapsed < total:
            step = min(cfg.warmup_chunk, total - elapsed) if adaptive else total
            tick, state = self._sampler(srv, label, "warm-up", total)
            res = sysbench.run(sysbench.run_cmd(spec.workload, e.port, cfg.tables, cfg.table_size,
                                                spec.threads, step),
                               timeout=step + cfg.stall, on_tick=lambda iv, el: tick(iv, el + elapsed),
                               raw_path=raw, registry=self.procs)
            elapsed += step
            usage = srv.cgroup.usage() if srv.cgroup else 0
            chunks.append({"t": elapsed, "usage": usage, "qps": res.summary.get("qps")})
            stalled = state["stalled"] or res.timed_out
            if stalled:
                return {"seconds": elapsed, "chunks": chunks, "failed": True, "stalled": True,
                        "reason": "warm-up: no progress for %ds" % cfg.stall}
            if not srv.alive() or not res.clean:
                return {"seconds": elapsed, "chunks": chunks, "failed": True,
                        "reason": "warm-up: " + " | ".join(res.fatal[:3] or ["sysbench exit %s" % res.exit_code])}
            if not adaptive:
                break
            grew = usage - prev
            prev = usage
            if elapsed >= cfg.warmup and (grew < max(0.01 * spec.mem, 4 * MiB) or usage >= 0.97 * spec.mem):
                break
        return {"seconds": elapsed, "adaptive": adaptive, "chunks": chunks,
                "mem_at_end": srv.cgroup.usage() if srv.cgroup else None}

    def measure(self, e, srv, spec, label, raw):
        cfg = self.cfg
        dur = spec.seconds or cfg.duration(spec.workload)
        self.progress.phase(label + ": measuring")
        mem_series, size_series = [], []
        tick, state = self._sampler(srv, label, "measure", dur, mem_series, size_series, e)
        c0 = _try(e.counters)
        p0, w0 = procfs.proc_sample(srv.pid), _window_sample()
        res = sysbench.run(sysbench.run_cmd(spec.workload, e.port, cfg.tables, cfg.table_size,
                                            spec.threads, dur),
                           timeout=dur + cfg.stall, on_tick=tick, raw_path=raw, registry=self.procs)
        p1, w1 = procfs.proc_sample(srv.pid), _window_sample()
        server_cpu = (p1["cpu_s"] - p0["cpu_s"]) if p0 and p1 else 0.0
        p1 = p1 or state["last"]
        c1 = _try(e.counters) if srv.alive() else {}
        s = res.summary
        tx = s.get("transactions", 0)
        io = procfs.proc_delta(p0, p1)
        qps_1s = [iv["qps"] for iv in res.intervals]
        out = {"sysbench": dict(res.to_dict(), ok=res.ok), "transactions": tx, "tps": s.get("tps"),
               "qps": s.get("qps"), "p95_ms": s.get("lat_p95_ms"), "avg_ms": s.get("lat_avg_ms"),
               "errors": s.get("ignored_errors", 0), "reconnects": s.get("reconnects", 0),
               "measured_s": s.get("total_time_s"), "io": io,
               "series": [[iv["t"], iv["tps"], iv["qps"], iv["p95_ms"], iv["err"]] for iv in res.intervals],
               "series_fields": ["t", "tps", "qps", "p95_ms", "err_per_s"],
               "mem_series": mem_series, "mem_series_fields": ["t", "usage", "cache", "rss"],
               "size_series": size_series, "stalled": state["stalled"] or res.timed_out}
        # sysbench (a reaped child) and the harness itself are under test too: only the rest
        # of the machine's busy CPU, and steal, is background.
        under_test = server_cpu + (w1["children_s"] - w0["children_s"]) + (w1["self_s"] - w0["self_s"])
        out["background"] = rounds.background(w0["stat"], w1["stat"], under_test, w1["t"] - w0["t"],
                                              os.cpu_count(), threshold=cfg.max_background)
        out["tps_1s"] = rounds.series_stats([iv["tps"] for iv in res.intervals])
        if qps_1s:
            mean = statistics.mean(qps_1s)
            out["qps_1s"] = {"min": min(qps_1s), "max": max(qps_1s), "median": statistics.median(qps_1s),
                             "p05": sorted(qps_1s)[int(0.05 * (len(qps_1s) - 1))],
                             "cv": statistics.pstdev(qps_1s) / mean if mean else None}
        if io and tx:
            out["per_trx"] = {"read_bytes": io["read_bytes"] / tx, "write_bytes": io["write_bytes"] / tx,
                              "cpu_ms": 1000.0 * io["cpu_s"] / tx}
        writes = engine_writes(e, c0, c1)
        if writes:
            out["engine_writes"] = writes
            if tx:
                out["per_trx"] = dict(out.get("per_trx") or {}, engine={
                    k: v / tx for k, v in writes.items() if k != "stall_us"})
        return out

    def drain(self, srv):
        """Watch background writes after the load stops: seconds until 3 quiet seconds
        (< 1 MiB/s written), or the cap, and the bytes written meanwhile."""
        cap = self.cfg.drain
        first = prev = procfs.proc_sample(srv.pid)
        if not first:
            return None
        t0, quiet, quiet_since = time.time(), 0, None
        while time.time() - t0 < cap:
            time.sleep(1)
            cur = procfs.proc_sample(srv.pid)
            if not cur:
                break
            if cur["write_bytes"] - prev["write_bytes"] < MiB:
                quiet += 1
                quiet_since = quiet_since or (time.time() - t0 - 1)
            else:
                quiet, quiet_since = 0, None
            prev = cur
            self.progress.status("drain %ds, %s written" % (
                time.time() - t0, fmt_bytes(cur["write_bytes"] - first["write_bytes"])))
            if quiet >= 3:
                break
        d = procfs.proc_delta(first, prev) or {}
        return {"cap_s": cap, "quiet": quiet >= 3,
                "seconds": round(quiet_since if quiet >= 3 else time.time() - t0, 1),
                "write_bytes": d.get("write_bytes"), "read_bytes": d.get("read_bytes"),
                "cpu_s": d.get("cpu_s")}


def engine_writes(e, c0, c1):
    """Deltas of the engine's write counters (WRITE_KEYS) between two counters() samples."""
    out = {}
    for name, key in e.WRITE_KEYS.items():
        a, b = (c0 or {}).get(key), (c1 or {}).get(key)
        if isinstance(a, int) and isinstance(b, int):
            out[name] = b - a
    return out


def _window_sample():
    """Machine CPU (/proc/stat), CPU of reaped children (sysbench) and of this process, now."""
    ch, me = resource.getrusage(resource.RUSAGE_CHILDREN), resource.getrusage(resource.RUSAGE_SELF)
    return {"t": time.time(), "stat": rounds.read_cpu_stat(), "children_s": ch.ru_utime + ch.ru_stime,
            "self_s": me.ru_utime + me.ru_stime}


def _try(fn):
    try:
        return fn()
    except Exception as ex:  # a failing status query must not lose the run
        return {"error": str(ex)[:500]}
