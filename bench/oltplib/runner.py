"""The orchestration: set the machine up, then per engine load the tables once, keep the
prepared data directory as a template, and for every memory limit and workload restore it and
run each thread count (onerun.py); always clean up (servers, cgroups, data directories,
system service).

One run = drop caches, start the server in a fresh memory cgroup, discarded warm-up (reads:
until the cgroup's memory stops growing), measured sysbench run with 1-second samples, drain
watch (background writes once the load stops), inspect, stop.
"""

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import traceback

from . import HARNESS_VERSION, cgroup, engines, procfs, rounds, setup, sysbench
from .config import BINLOG_TEXT, RunSpec, describe, fmt_bytes, fmt_duration, fmt_size
from .engines import EngineError, Server
from .onerun import OneRun, _try
from .progress import Progress


class Harness(OneRun):
    def __init__(self, cfg):
        self.cfg = cfg
        self.progress = Progress()
        self.log = self.progress.log
        self.servers, self.cgroups, self.procs = set(), set(), set()
        self.cg_version = None
        self.cg_counter = 0
        self.workdir = None
        self.own_workdir = False
        self.made_dirs = []
        self.restart_system_mariadb = False
        self.engines = []
        self.results = {"runs": [], "engines": {}, "notes": []}
        self.failures = []

    # -- top level -------------------------------------------------------------------------
    def main(self):
        cfg = self.cfg
        if os.geteuid() != 0 and not cfg.dry_run:
            raise SystemExit("bench/oltp needs root (cgroups, drop_caches, apt-get, servers as root)")
        was = os.environ.get("OLTP_SYSTEM_MARIADB_WAS")
        if was is None:
            was = "1" if setup.system_mariadb_running() else "0"
            os.environ["OLTP_SYSTEM_MARIADB_WAS"] = was
        if cfg.install and not cfg.dry_run:
            still = setup.install_packages(self.log)
            if still:
                self.log("still missing: %s" % " ".join(still))
        if cfg.plots and not cfg.dry_run:
            cfg.plots = setup.ensure_matplotlib(self.log)  # may re-exec into bench/.venv
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, _raise_interrupt)
        try:
            return self._main()
        except KeyboardInterrupt:
            self.log("interrupted; cleaning up")
            if "harness" in self.results:
                self.results["harness"]["interrupted"] = True
                self.write_outputs()
            return 130
        except Exception:
            self.log("harness error:\n" + traceback.format_exc())
            if "harness" in self.results:
                self.results["harness"]["error"] = traceback.format_exc()[-3000:]
                self.write_outputs()
            return 2
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                signal.signal(sig, signal.SIG_IGN)
            self.cleanup(was == "1")
            self.progress.close()

    def _main(self):
        cfg = self.cfg
        if not cfg.dry_run:
            if cfg.quick and os.path.isdir(cfg.out_dir):
                shutil.rmtree(cfg.out_dir)
            for sub in ("raw", "logs"):
                os.makedirs(os.path.join(cfg.out_dir, sub), exist_ok=True)
            self.progress.set_log(os.path.join(cfg.out_dir, "harness.log"))
            self.restart_system_mariadb = setup.stop_system_mariadb(self.log) and \
                os.environ.get("OLTP_SYSTEM_MARIADB_WAS") == "1"
        if cfg.use_cgroup:
            self.cg_version = cgroup.detect(cfg.cgroup_parent)
            if not self.cg_version:
                if not cfg.quick:
                    raise SystemExit("no memory cgroup controller; use --no-cgroup to run unconfined")
                self.log("WARNING: no memory cgroup controller; running without memory limits")
        self.workdir = cfg.workdir or "/var/tmp"
        os.makedirs(self.workdir, exist_ok=True)
        if not cfg.workdir and not cfg.dry_run:
            self.workdir = tempfile.mkdtemp(prefix="strata-oltp-", dir="/var/tmp")
            self.own_workdir = True
        self.engines = engines.make(cfg, self.workdir, procfs.free_port)
        for e in self.engines:
            if e.name in cfg.configs:
                e.variant.update({m: cfg.configs[e.name] for m in cfg.mems})
        self.check_engines()
        available = [e.name for e in self.engines if e.available]
        self.results.update(self.skeleton())
        for line in describe(cfg, available):
            self.log(line)
        for e in self.engines:
            if not e.available:
                self.log("%s: %s" % (e.label, e.reason.splitlines()[0]))
        if cfg.dry_run:
            per = sorted({(s.workload, cfg.estimate_run_seconds(s)) for s in cfg.plan(available)})
            for w, sec in per:
                print("  one %s run: at most ~%s" % (w, fmt_duration(sec)))
            return 0
        # Rounds keep every engine's template until the end, beside one data directory.
        need = (max(3.0, len(available) + 1.5) if cfg.interleaved else 3.0) * cfg.data_bytes
        free = procfs.machine_facts(self.workdir)["workdir_free_bytes"]
        if free < need:
            raise SystemExit("need about %s free in %s, have %s" % (fmt_bytes(need), self.workdir, fmt_bytes(free)))
        self.order = self.execution_order(available)
        self.progress.run_total = len(self.order)
        self.t_start = time.time()
        if cfg.interleaved:
            self.run_interleaved(available)
        else:
            for e in self.engines:
                if e.available:
                    self.run_engine(e, available)
        self.results["harness"]["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
        self.results["harness"]["duration_s"] = round(time.time() - self.t_start, 1)
        code = self.exit_status()
        self.write_outputs()
        ok = sum(1 for r in self.results["runs"] if r["status"] == "ok" and rounds.counted(r))
        # A plain closing line for CI logs: runs that passed, and failures of required engines.
        print("oltp: %d passed, %d failed" % (ok, len(self.results["harness"]["failures"])), flush=True)
        return code

    def check_engines(self):
        if not shutil.which("sysbench"):
            for e in self.engines:
                e.available, e.reason = False, "not available: sysbench is not installed"
            return
        for e in self.engines:
            if e.name in ("innodb", "myrocks") and not os.path.exists(engines.MARIADBD):
                e.available, e.reason = False, "not available: mariadb-server is not installed"
            elif e.name == "myrocks" and not os.path.exists("/usr/lib/mysql/plugin/ha_rocksdb.so"):
                e.available, e.reason = False, "not available: mariadb-plugin-rocksdb is not installed"
            elif e.name == "strata":
                e.available, e.reason = setup.build_strata(self.cfg, self.log, self.progress)

    def skeleton(self):
        cfg = self.cfg
        return {
            "harness": {"version": HARNESS_VERSION, "mode": cfg.mode, "argv": cfg.argv,
                        "started": time.strftime("%Y-%m-%d %H:%M:%S"), "out_dir": cfg.out_dir,
                        "interrupted": False, "cgroup": self.cg_version},
            "machine": procfs.machine_facts(self.workdir),
            "versions": {"mariadbd": engines.mariadb_version(),
                         "sysbench": sysbench.version(), "strata_git": setup.git_revision(),
                         "packages": setup.package_versions()},
            "config": {"engines": cfg.engines, "workloads": cfg.workloads, "threads": cfg.threads,
                       "mem_limits": cfg.mems, "mem_specs": cfg.mem_specs,
                       "data_bytes_nominal": cfg.data_bytes, "tables": cfg.tables,
                       "table_size": cfg.table_size, "duration_read_s": cfg.duration_read,
                       "duration_write_s": cfg.duration_write, "warmup_s": cfg.warmup,
                       "warmup_read_max_s": cfg.warmup_read_max, "drain_s": cfg.drain,
                       "load_mem_limit": cfg.load_mem, "stall_s": cfg.stall, "rounds": cfg.rounds,
                       "max_background": cfg.max_background, "repeat_disturbed": cfg.repeat_disturbed,
                       "sweep_peers": cfg.sweep_peers, "sweep_workloads": cfg.sweep_workloads,
                       "sweep_threads": cfg.sweep_threads, "sweep_duration_s": cfg.sweep_duration,
                       "sysbench_options": " ".join(sysbench.COMMON + ["--report-interval=1"]),
                       "binlog": BINLOG_TEXT["/".join(cfg.binlog)], "binlog_modes": cfg.binlog,
                       "freeze_cgroup": cfg.freeze_cgroup, "configs": cfg.configs,
                       "estimated_s": round(cfg.estimate_seconds(
                           [e.name for e in self.engines if e.available]))},
            "engines": {e.name: {"label": e.label, "available": e.available, "reason": e.reason,
                                 "settings": {}, "extra": e.extra, "load": None}
                        for e in self.engines},
        }

    # -- servers and cgroups ---------------------------------------------------------------
    def start(self, e, limit, probe=False, binlog=False):
        """Start the engine's server at this limit (binlog: with its binary log on)."""
        e.binlog = binlog and not probe
        cg = None
        if self.cg_version:
            self.cg_counter += 1
            name = "strata-oltp-%d-%d-%s" % (os.getpid(), self.cg_counter, e.name)
            cg = cgroup.MemoryCgroup(self.cg_version, self.cfg.cgroup_parent, name, limit)
            self.cgroups.add(cg)
        srv = Server(e, limit, cg, probe)
        self.servers.add(srv)
        try:
            srv.start(timeout=120 if self.cfg.quick else 1800)
        except BaseException:
            self.stop(srv, timeout=10)
            raise
        if not probe:
            key = fmt_size(limit) + (" binlog on" if e.binlog else "")
            self.results["engines"][e.name]["settings"][key] = e.settings(limit)
        return srv

    def stop(self, srv, timeout=None):
        code = srv.stop(timeout or (30 if self.cfg.quick else 900))
        self.servers.discard(srv)
        if srv.cgroup:
            srv.cgroup.remove()
            self.cgroups.discard(srv.cgroup)
        return code

    def stop_clean(self, srv):
        """Stop a server whose data directory is kept: it must shut down cleanly."""
        code = self.stop(srv, timeout=None if self.cfg.quick else 3600)
        if code != 0:
            raise EngineError("%s: exit code %s after SIGTERM (not a clean shutdown):\n%s" % (
                srv.engine.label, code, srv.log_tail()))
        return code

    def cleanup(self, restart_service):
        for p in list(self.procs):
            try:
                p.kill()
                p.wait(10)
            except Exception:
                pass
        for srv in list(self.servers):
            try:
                self.stop(srv, timeout=30)
            except Exception as ex:
                self.log("cleanup: stopping %s failed: %s" % (srv.engine.label, ex))
                srv.kill()
        for cg in list(self.cgroups):
            try:
                cg.remove()
            except OSError as ex:
                self.log("cleanup: cannot remove cgroup %s: %s" % (cg.path, ex))
        for e in self.engines:
            if os.path.isdir(e.rundir):
                dst = os.path.join(self.cfg.out_dir, "logs")
                if os.path.isdir(dst):
                    for f in ("server.log", "my.cnf", "stdout.log"):
                        src = os.path.join(e.rundir, f)
                        if os.path.exists(src):
                            shutil.copy(src, os.path.join(dst, "%s-%s" % (e.name, f)))
        if self.workdir and not self.cfg.keep_workdir:
            if self.own_workdir:
                shutil.rmtree(self.workdir, ignore_errors=True)
            else:
                for e in self.engines:
                    shutil.rmtree(e.base, ignore_errors=True)
        if self.restart_system_mariadb:
            setup.start_system_mariadb(self.log)

    # -- per engine --------------------------------------------------------------------------
    def run_engine(self, e, available):
        cfg = self.cfg
        info = self.results["engines"][e.name]
        try:
            self.load(e, info)
        except EngineError as ex:
            self.load_failed(e, info, ex)
            self.progress.run_index += len([s for s in self.order if s.engine == e.name])
            return
        for mem in cfg.mems:
            if cfg.sweep_peers:
                self.sweep(e, mem)
            for b in cfg.binlog:
                for w in cfg.workloads:
                    self.restore(e)
                    for t in cfg.threads:
                        rec = self.run_spec(e, RunSpec(e.name, mem, w, t, binlog=b), fresh=False)
                        if rec.get("needs_restore"):
                            self.restore(e)
        if not cfg.keep_workdir:
            shutil.rmtree(e.template, ignore_errors=True)
            shutil.rmtree(e.datadir, ignore_errors=True)

    def load_failed(self, e, info, ex):
        for srv in [s for s in self.servers if s.engine is e]:
            self.stop(srv, timeout=60)
        info["load"] = {"status": "failed", "error": str(ex)[:3000]}
        self.log("%s: load failed: %s" % (e.label, str(ex)[:1500]))
        if e.name == "strata":
            info["available"], info["reason"] = False, "load failed: " + str(ex).splitlines()[0]
        if e.name in self.cfg.require:
            self.failures.append("%s load failed" % e.label)

    def run_interleaved(self, available):
        """Rounds: load every engine's template first; then per memory limit the peer sweep
        (if asked), and per cell (workload x threads) every round runs the engines in a
        rotated order, each on a fresh copy of its template."""
        cfg = self.cfg
        loaded = []
        for e in self.engines:
            if not e.available:
                continue
            info = self.results["engines"][e.name]
            try:
                self.load(e, info)
                loaded.append(e)
            except EngineError as ex:
                self.load_failed(e, info, ex)
        by_name = {e.name: e for e in loaded}
        self.order = [s for s in self.order if s.engine in by_name]
        self.progress.run_total = len(self.order)
        for mem in cfg.mems:
            if cfg.sweep_peers:
                for e in loaded:
                    self.sweep(e, mem)
            for spec in cfg.plan([e.name for e in loaded]):
                if spec.mem == mem:
                    e = by_name[spec.engine]
                    self.run_spec(e, spec, fresh=True)
                    if not cfg.keep_workdir:
                        shutil.rmtree(e.datadir, ignore_errors=True)
        if not cfg.keep_workdir:
            for e in loaded:
                shutil.rmtree(e.template, ignore_errors=True)

    def run_spec(self, e, spec, fresh, store=None):
        """One cell's run of one engine, recorded in `store` (the runs): quick mode retries a
        stall once, and --repeat-disturbed runs a disturbed window once more (the first run
        stays in the results, marked, and out of the tables and ratios)."""
        cfg = self.cfg
        store = self.results["runs"] if store is None else store
        self.progress.run_index += 1
        self.progress.set_remaining(self.remaining(spec))
        if fresh:
            self.restore(e)
        rec = self.run_one(e, spec)
        if rec["status"] == "stalled" and cfg.quick:
            # Quick mode's data fit in memory, so a stall is the machine (a disk or CPU
            # starved by other work), not the engine at its limit: record it, and let one
            # retry decide.
            rec["retried"] = True
            store.append(rec)
            self.log("%s: stalled (%s); retrying once" % (spec.run_id(), rec.get("reason", "")[:200]))
            self.restore(e)
            rec = self.run_one(e, spec)
            rec["retry"] = True
        bg = rec.get("background") or {}
        if cfg.repeat_disturbed and rec["status"] == "ok" and bg.get("disturbed"):
            rec["superseded"] = True
            store.append(rec)
            self.log("%s: disturbed window (background %.0f%% of the CPU: other %.0f%%, steal %.0f%%); "
                     "repeating once" % (spec.run_id(), 100 * bg["background_share"], 100 * bg["other_share"],
                                         100 * bg["steal_share"]))
            self.restore(e)
            rec = self.run_one(e, spec)
            rec["id"] += "-again"
            rec["repeat_of_disturbed"] = True
        store.append(rec)
        self.write_json()
        if rec["status"] != "ok":
            self.log("%s: %s %s" % (spec.run_id(), rec["status"], rec.get("reason", "")[:300]))
        return rec

    def sweep(self, e, mem):
        """--sweep-peers: run every cache configuration of the engine on the sweep cells and
        keep the best that completed for this limit (rounds.best_config)."""
        from .engines import VARIANT_LABEL, VARIANTS
        cfg = self.cfg
        store = self.results.setdefault("sweep_runs", [])
        cands = []
        for v, (num, den) in VARIANTS[e.name]:
            e.variant[mem] = v
            runs = []
            for spec in cfg.sweep_plan(e.name, mem):
                if spec.variant == v:
                    rec = self.run_spec(e, spec, fresh=True, store=store)
                    runs.append({k: rec.get(k) for k in ("id", "workload", "threads", "status", "tps", "qps",
                                                         "reason", "background", "tps_1s")})
            cands.append({"variant": v, "label": VARIANT_LABEL[v], "fraction": "%d/%d" % (num, den),
                          "setting": cache_setting(e, mem), "runs": runs})
        best = rounds.best_config(cands)
        default = VARIANTS[e.name][0][0]
        e.variant[mem] = best or default
        self.results.setdefault("sweeps", []).append({
            "engine": e.name, "mem": mem, "workloads": cfg.sweep_workloads, "threads": cfg.sweep_threads,
            "duration_s": cfg.sweep_duration, "candidates": cands, "default": default,
            "best": best, "chosen": e.variant[mem],
            "rule": "best = highest geometric mean of TPS over the sweep runs among configurations "
                    "whose sweep runs all completed; a tie goes to the default; none completed: the default"})
        self.write_json()
        self.log("%s at %s: sweep chose %s (%s)" % (
            e.label, fmt_size(mem), VARIANT_LABEL[e.variant[mem]],
            ", ".join("%s %s" % (c["variant"], "%.0f tps" % c["score"] if c["ok"] else "did not complete")
                      for c in cands)))

    def execution_order(self, available):
        cfg = self.cfg
        if cfg.interleaved:
            out = []
            for m in cfg.mems:
                out += [s for e in available for s in cfg.sweep_plan(e, m)]
                out += [s for s in cfg.plan(available) if s.mem == m]
            return out
        return [s for e in available for m in cfg.mems
                for s in cfg.sweep_plan(e, m) + [x for x in cfg.plan([e]) if x.mem == m]]

    def remaining(self, current):
        """Estimated seconds left from `current` on (its run included): runs, restores, and
        the loads of engines not loaded yet."""
        cfg = self.cfg
        ids = [s.run_id() for s in self.order]
        idx = ids.index(current.run_id()) if current.run_id() in ids else 0
        left = self.order[idx:]
        later = []
        if not cfg.interleaved:
            engines = list(dict.fromkeys(s.engine for s in self.order))
            later = engines[engines.index(current.engine) + 1:] if current.engine in engines else []
        return (sum(cfg.estimate_run_seconds(s) + (cfg.copy_seconds() if s.round or s.variant else 0)
                    for s in left) + sum(cfg.estimate_load_seconds(x) for x in later))

    def load(self, e, info):
        cfg = self.cfg
        limit = cfg.load_mem
        self.progress.phase("%s: initialising data directory" % e.label)
        e.init_datadir()
        srv = self.start(e, limit, probe=True)
        e.post_init()
        self.stop_clean(srv)
        self.progress.phase("%s: loading %d x %d rows (limit %s)" % (
            e.label, cfg.tables, cfg.table_size, fmt_size(limit)))
        srv = self.start(e, limit)
        p0, t0 = procfs.proc_sample(srv.pid), time.time()

        def tick(_iv, el):
            self.progress.status("%s, datadir %s" % (fmt_duration(el), fmt_bytes(procfs.dir_size(e.datadir))))
        res = sysbench.run(sysbench.prepare_cmd(e.port, cfg.tables, cfg.table_size, e.prepare_args,
                                                min(cfg.tables, 4)),
                           timeout=24 * 3600, on_tick=tick, registry=self.procs,
                           raw_path=os.path.join(cfg.out_dir, "raw", "%s-prepare.txt" % e.name))
        load_s = time.time() - t0
        p1 = procfs.proc_sample(srv.pid)
        if not res.clean or not srv.alive():
            oom = srv.cgroup.oom_kills() if srv.cgroup else 0
            self.stop(srv)
            why = ("server OOM-killed at %s" % fmt_size(limit)) if oom else \
                ("server exited" if not srv.alive() and srv.proc.returncode not in (0, None) else "")
            first = (res.fatal or ["exit %s" % res.exit_code])[0][:200]
            raise EngineError("sysbench prepare failed: %s\n%s" % (
                why or first, "\n".join(ln[:300] for ln in res.lines[-15:])))
        debt = _try(e.debt)
        e.before_template_stop()
        t1 = time.time()
        peak = srv.cgroup.peak() if srv.cgroup else None
        self.stop_clean(srv)
        sizes = e.sizes()
        os.rename(e.datadir, e.template)
        info["load"] = {"status": "ok", "seconds": round(load_s, 1),
                        "shutdown_s": round(time.time() - t1, 1), "rows": cfg.tables * cfg.table_size,
                        "size_bytes": sizes, "limit": limit, "peak_mem": peak,
                        "data_to_min_limit": round(sizes["datadir"] / min(cfg.mems), 2),
                        "io": procfs.proc_delta(p0, p1), "debt_after_load": debt}
        info["extra"] = e.extra
        info["version"] = e.version()
        self.log("%s: loaded %d rows in %s, %s on disk (%.1fx the smallest limit)" % (
            e.label, cfg.tables * cfg.table_size, fmt_duration(load_s), fmt_bytes(sizes["datadir"]),
            sizes["datadir"] / min(cfg.mems)))

    def restore(self, e):
        self.progress.phase("%s: restoring the data directory from the template" % e.label)
        if os.path.exists(e.datadir):
            shutil.rmtree(e.datadir)
        subprocess.run(["cp", "-a", "--reflink=auto", e.template, e.datadir], check=True)

    # -- outputs -------------------------------------------------------------------------------
    def exit_status(self):
        bad = list(self.failures)
        for e in self.engines:
            if e.name not in self.cfg.require:
                continue
            if not e.available:
                bad.append("%s %s" % (e.label, e.reason.splitlines()[0]))
            for r in self.results["runs"]:
                # Quick mode (tiny data) must be clean; in full mode an OOM kill, a stall at the
                # memory limit or too many conflict errors is a measured result, not a failure.
                result = r["status"] in ("oom", "stalled", "too_many_errors") and not self.cfg.quick
                if r["engine"] == e.name and r["status"] != "ok" and not result and rounds.counted(r):
                    bad.append("%s: %s" % (r["id"], r["status"]))
        self.results["harness"]["failures"] = bad
        self.write_json()
        if bad:
            self.log("FAILED (required engines: %s):\n  %s" % (",".join(self.cfg.require), "\n  ".join(bad)))
            return 1
        return 0

    def write_json(self):
        path = os.path.join(self.cfg.out_dir, "results.json")
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.results, f, indent=1, default=str)
        os.replace(tmp, path)

    def write_outputs(self):
        from . import report
        if "harness" not in self.results or not os.path.isdir(self.cfg.out_dir):
            return
        self.results["ratios"] = rounds.all_ratio_summaries(self.results)
        self.write_json()
        plots = []
        if self.cfg.plots:
            try:
                from . import plots as plotmod
                plots = plotmod.make_all(self.results, self.cfg.out_dir)
            except Exception as ex:  # plots must never lose the results
                self.log("WARNING: plots failed: %r" % ex)
        path = report.write(self.results, self.cfg.out_dir, plots)
        self.log("wrote %s" % os.path.dirname(path))
        print(report.summary_table(self.results), flush=True)


def cache_setting(e, mem):
    """The engine's main-cache setting at this limit, as name=value."""
    key = {"innodb": "innodb_buffer_pool_size", "myrocks": "rocksdb_block_cache_size",
           "strata": "block-cache-size"}[e.name]
    return "%s=%s" % (key, e.settings(mem).get(key))


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt("signal %d" % signum)
