"""Command line, presets (quick, full, memory sweep), the run plan and its duration estimate.

Everything the harness does is decided here, up front, into one `Config`; the other modules
only read it. Sizes accept K/M/G suffixes (powers of 1024); memory limits also accept
`data/X`, a fraction of the nominal data size, so the seed's Small/Medium/Large VMs
(data 5x, 2.5x and 1.25x the RAM) become `data/5,data/2.5,data/1.25`.
"""

import argparse
import math
import os
import re
import time
from dataclasses import dataclass, field

from .rounds import rotation

MiB = 1024 * 1024
GiB = 1024 * MiB

WORKLOADS = ["oltp_read_only", "oltp_read_write", "oltp_write_only"]
WORKLOAD_ALIASES = {"ro": "oltp_read_only", "rw": "oltp_read_write", "wo": "oltp_write_only",
                    "read_only": "oltp_read_only", "read_write": "oltp_read_write",
                    "write_only": "oltp_write_only"}
ENGINES = ["innodb", "myrocks", "strata"]

# Bytes per sysbench row on disk in InnoDB with the secondary index k (seed 000: 161 GB for
# 640 M rows = 252 B/row). Used only to turn a data-size target into a row count.
ROW_BYTES = 250

# sysbench prepare (4 threads) rows per second on the 2-core machine; Strata measured
# 3.1 M rows in 319 s (secondary index builds included).
LOAD_ROWS_PER_S = {"innodb": 25000.0, "myrocks": 25000.0, "strata": 10000.0}

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO_DIR = os.path.dirname(BENCH_DIR)

FULL = dict(threads="8,16,32,64", mem="data/5,data/2.5,data/1.25", data="3000M", tables=32,
            duration_read=300, duration_write=600, warmup=120, warmup_read_max=600,
            warmup_chunk=30, drain=120, size_every=10, stall=120, rounds=1, sweep_duration=60)
# Quick mode runs 2 rounds of short windows, so that CI covers the interleaved path.
QUICK = dict(threads="4,16", mem="256M", data=None, tables=2, table_size=5000,
             duration_read=3, duration_write=3, warmup=1, warmup_read_max=1, warmup_chunk=1,
             drain=1, size_every=1, stall=20, rounds=2, sweep_duration=3)
SWEEP = dict(mem="data/10,data/5,data/3,data/2,data/1.5,data/1", workloads="oltp_read_write",
             threads="16")


def parse_size(text):
    """'600M' -> bytes. Suffixes K, M, G, T (binary); a plain number is bytes."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([kmgt]?)i?b?\s*", text, re.I)
    if not m:
        raise argparse.ArgumentTypeError("not a size: %r" % text)
    mult = {"": 1, "k": 1024, "m": MiB, "g": GiB, "t": 1024 * GiB}[m.group(2).lower()]
    return int(float(m.group(1)) * mult)


def fmt_size(n):
    """Bytes -> '600 MB' label for memory limits (binary units, as the limits are given)."""
    if n is None:
        return "-"
    if n >= 10 * GiB:
        return "%.1f GB" % (n / GiB)
    return "%d MB" % round(n / MiB)


def fmt_bytes(n):
    """Bytes -> '3.12 GB' / '512.0 MB' / '12.0 KB' for sizes on disk and per-transaction I/O."""
    if n is None:
        return "-"
    for unit, div in (("GB", GiB), ("MB", MiB), ("KB", 1024)):
        if abs(n) >= div:
            return "%.*f %s" % (2 if unit == "GB" else 1, n / div, unit)
    return "%d B" % n


def split_list(text):
    return [x.strip() for x in text.split(",") if x.strip()]


@dataclass
class RunSpec:
    engine: str
    mem: int
    workload: str
    threads: int
    round: int = 0       # 1-based round of an interleaved plan (0: no rounds)
    variant: str = ""    # a --sweep-peers configuration (e.g. bp60); "" for the chosen one
    seconds: int = 0     # measured window if not the workload's default (sweep runs)
    binlog: str = "off"  # "on": the binary log on with sync_binlog=1 (--binlog)

    @property
    def is_read(self):
        return self.workload == "oltp_read_only"

    def run_id(self):
        short = {"oltp_read_only": "ro", "oltp_read_write": "rw", "oltp_write_only": "wo"}
        rid = "%s-%dM-%s-t%d" % (self.engine, self.mem // MiB, short[self.workload], self.threads)
        if self.variant:
            rid += "-sweep-" + self.variant
        if self.binlog == "on":
            rid += "-binlog"
        if self.round:
            rid += "-r%d" % self.round
        return rid


@dataclass
class Config:
    mode: str
    engines: list
    workloads: list
    threads: list
    mems: list
    mem_specs: list
    data_bytes: int
    tables: int
    table_size: int
    duration_read: int
    duration_write: int
    warmup: int
    warmup_read_max: int
    warmup_chunk: int
    drain: int
    size_every: int
    out_dir: str
    workdir: str
    keep_workdir: bool
    install: bool
    build: bool
    plots: bool
    use_cgroup: bool
    cgroup_parent: str
    strata_bin: str
    strata_args: list
    require: list
    max_error_rate: float
    dry_run: bool
    load_mem: int = 0
    stall: int = 120
    argv: list = field(default_factory=list)
    rounds: int = 1
    repeat_disturbed: bool = False
    max_background: float = 0.15
    sweep_peers: bool = False
    sweep_workloads: list = field(default_factory=list)
    sweep_threads: list = field(default_factory=list)
    sweep_duration: int = 60
    binlog: list = field(default_factory=lambda: ["off"])  # modes run: off, on or both
    freeze_cgroup: str = ""  # a cgroup v1 freezer group kept frozen during every run
    configs: dict = field(default_factory=dict)  # --configs: engine -> pinned cache variant
    sweep_configs: dict = field(default_factory=dict)  # --sweep-configs: engine -> variants swept

    @property
    def quick(self):
        return self.mode == "quick"

    @property
    def interleaved(self):
        """Rounds: all engines loaded first, then every cell runs every engine per round."""
        return self.rounds > 1

    def duration(self, workload):
        return self.duration_read if workload == "oltp_read_only" else self.duration_write

    def plan(self, engines=None):
        """Run order without rounds: engine, then memory limit, then binary log mode, then
        workload (restore), then threads. With rounds: memory limit, workload, threads, round,
        then the (engine, binary log mode) pairs in the round's rotated order (each run on a
        fresh copy of the template); an engine's binlog off and on runs are side by side, their
        order alternating by round, so that their ratio carries no order bias."""
        engines = engines if engines is not None else self.engines
        out = []
        if self.interleaved:
            for m in self.mems:
                for w in self.workloads:
                    for t in self.threads:
                        for rnd in range(1, self.rounds + 1):
                            out += [RunSpec(e, m, w, t, rnd, binlog=b) for e, b in binlog_units(engines, self.binlog, rnd)]
            return out
        for e in engines:
            for m in self.mems:
                for b in self.binlog:
                    for w in self.workloads:
                        for t in self.threads:
                            out.append(RunSpec(e, m, w, t, binlog=b))
        return out

    def sweep_plan(self, engine, mem):
        """--sweep-peers runs of one engine at one limit: every configuration x sweep cell."""
        from .engines import VARIANTS
        if not self.sweep_peers:
            return []
        only = self.sweep_configs.get(engine)
        return [RunSpec(engine, mem, w, t, variant=v, seconds=self.sweep_duration, binlog=self.binlog[0])
                for v, _ in VARIANTS[engine] if only is None or v in only
                for w in self.sweep_workloads for t in self.sweep_threads]

    def estimate_load_seconds(self, engine=None):
        rows = self.tables * self.table_size
        return 20 + rows / LOAD_ROWS_PER_S.get(engine, 25000.0) + rows * ROW_BYTES / (200.0 * MiB)

    def estimate_run_seconds(self, spec):
        """Upper-bound wall time of one run: restart, warm-up, measurement, drain, stop."""
        warm = self.warmup_read_max if spec.is_read else self.warmup
        restart = 8 if self.quick else 40
        return restart + warm + (spec.seconds or self.duration(spec.workload)) + self.drain

    def copy_seconds(self):
        return self.tables * self.table_size * ROW_BYTES / (200.0 * MiB) + 2

    def sweep_runs(self, engines=None):
        engines = engines if engines is not None else self.engines
        return [s for e in engines for m in self.mems for s in self.sweep_plan(e, m)]

    def estimate_seconds(self, engines=None):
        """Upper bound: loads, restores (every run restores in rounds and sweeps), runs, and a
        repeat of every window if --repeat-disturbed."""
        engines = engines if engines is not None else self.engines
        total = 0.0
        copy = self.copy_seconds()
        for e in engines:
            total += self.estimate_load_seconds(e)
            if not self.interleaved:
                total += len(self.mems) * len(self.binlog) * len(self.workloads) * copy
        runs = self.plan(engines) + self.sweep_runs(engines)
        for spec in runs:
            sec = self.estimate_run_seconds(spec) + (copy if spec.round or spec.variant else 0)
            total += sec * (2 if self.repeat_disturbed else 1)
        return total


BINLOG_TEXT = {
    "off": "off (skip-log-bin; Strata without --log-bin); the seed ran with binlog on and sync_binlog=1",
    "on": "on (log-bin, binlog_format=ROW, sync_binlog=1 for every engine, as the seed)",
    "off/on": "off and on (every cell both ways; on = log-bin, binlog_format=ROW, sync_binlog=1 for "
              "every engine, as the seed)",
}


def fmt_duration(sec):
    sec = int(sec)
    if sec < 120:
        return "%ds" % sec
    if sec < 7200:
        return "%dm%02ds" % (sec // 60, sec % 60)
    return "%dh%02dm" % (sec // 3600, sec % 3600 // 60)


def build_parser():
    p = argparse.ArgumentParser(
        prog="bench/oltp",
        description="sysbench OLTP (read_only, read_write, write_only) on MariaDB InnoDB, "
                    "MariaDB MyRocks and Strata, each server in a memory cgroup.",
        epilog="Full mode (the default) with its defaults (3 engines, 3 memory limits, 3 workloads, "
               "4 thread counts, 300 s reads / 600 s writes measured) takes about a day; "
               "use --dry-run to print the plan and its estimated duration.")
    a = p.add_argument
    a("--quick", action="store_true", help="tiny data, a few seconds per run (CI smoke test)")
    a("--sweep", action="store_true",
      help="memory sweep like seed 001: oltp_read_write at 16 threads, memory data/10 .. data/1")
    a("--engines", default=",".join(ENGINES), help="comma list of innodb,myrocks,strata")
    a("--workloads", help="comma list (oltp_read_only,oltp_read_write,oltp_write_only or ro,rw,wo)")
    a("--threads", help="comma list of sysbench thread counts (full: 8,16,32,64)")
    a("--mem", help="comma list of memory limits: sizes (600M) or data/X (full: data/5,data/2.5,data/1.25)")
    a("--data", type=parse_size, help="nominal data size (InnoDB-sized) that sets the row count "
      "(full: 3000M, i.e. 5x the smallest default limit)")
    a("--tables", type=int, help="sysbench --tables (full: 32, as in seed 000)")
    a("--table-size", type=int, help="rows per table (default: from --data)")
    a("--duration", type=int, help="measured seconds for every workload (overrides the two below)")
    a("--duration-read", type=int, help="measured seconds for oltp_read_only (full: 300)")
    a("--duration-write", type=int, help="measured seconds for write workloads (full: 600, minimum for steady state)")
    a("--warmup", type=int, help="discarded warm-up seconds; for reads the minimum (full: 120)")
    a("--warmup-read-max", type=int, help="read warm-up runs until the cgroup's memory stops "
      "growing, at most this long (full: 600)")
    a("--warmup-chunk", type=int, help="read warm-up step in seconds (full: 30)")
    a("--drain", type=int, help="seconds watched after a run for background writes (compaction "
      "debt, dirty pages) (full: 120)")
    a("--stall", type=int, help="a run with no completed transaction for this many seconds (or "
      "overrunning its time by as much) is stopped and reported as stalled (full: 120)")
    a("--out", help="output directory (full: bench/results/<timestamp>, quick: bench/results/quick)")
    a("--workdir", help="where data directories live (default: a new directory under /var/tmp)")
    a("--keep-workdir", action="store_true", help="do not delete data directories at the end")
    a("--no-install", action="store_true", help="do not apt-get install missing packages")
    a("--no-build", action="store_true", help="do not build Strata (use target/release/strata if present)")
    a("--no-plots", action="store_true", help="skip PNG plots (and the matplotlib install)")
    a("--no-cgroup", action="store_true", help="run without memory limits (debugging only)")
    a("--cgroup-parent", default="", help="parent cgroup path (default: the hierarchy root)")
    a("--strata-bin", help="Strata server binary (default: target/release/strata)")
    a("--strata-arg", action="append", default=[],
      help="extra Strata argument; {limit_bytes} and {limit_mb} are replaced (repeatable)")
    a("--require", help="engines whose failure makes the exit status non-zero (default: innodb,myrocks)")
    a("--max-error-rate", type=float, default=0.01,
      help="ignored sysbench errors per transaction above which a run counts as failed (default 0.01)")
    a("--load-mem", type=parse_size, help="memory limit while preparing the tables "
      "(default: the largest limit, at least 4G: MyRocks builds sysbench's secondary "
      "indexes with merge buffers, four at a time, and was OOM-killed at 1G with 12.6 M rows)")
    a("--dry-run", action="store_true", help="print the plan and its estimated duration, then exit")
    a("--binlog", choices=["off", "on", "both"], default="off",
      help="binary log: off (default: skip-log-bin, Strata without --log-bin), on (every engine with "
      "its binary log, binlog_format=ROW and sync_binlog=1, the seed's configuration) or both (every "
      "cell with the log off and on; the report puts them side by side)")
    r = p.add_argument_group("robust ratios (issue 15)")
    r.add_argument("--rounds", type=int, help="run every cell (limit x workload x threads) N times, the "
                   "engines interleaved in a rotating order, each on a fresh copy of its template; ratios "
                   "are medians over rounds with their spread (full: 1 = the old engine-by-engine order; "
                   "quick: 2). Without an explicit --duration*, the full-mode windows are divided by N "
                   "(at least 60 s)")
    r.add_argument("--max-background", type=float, default=0.15,
                   help="a measured window is 'disturbed' when CPU taken by other processes plus steal "
                   "exceeds this share of the machine's CPU capacity (default 0.15)")
    r.add_argument("--repeat-disturbed", action="store_true",
                   help="run a disturbed window once more; the repeat replaces it in the tables")
    r.add_argument("--freeze-cgroup", default="",
                   help="a cgroup v1 freezer group (e.g. /sys/fs/cgroup/freezer/lowprio) holding other work "
                   "on the machine: frozen from each run's server start to its stop, thawed in between "
                   "(oltplib/freeze.py)")
    r.add_argument("--configs", default="",
                   help="pin engines' cache configurations instead of sweeping, e.g. innodb=bp60,myrocks=bc1_4 "
                   "(the choice of an earlier --sweep-peers; names as in oltplib/engines.py VARIANTS)")
    r.add_argument("--sweep-peers", action="store_true",
                   help="per memory limit, first sweep each engine's cache size (InnoDB buffer pool "
                   "75/60/50%%, MyRocks block cache 1/8, 1/4, 1/2, Strata block cache 1/4, 1/8, 1/2 of "
                   "the limit) and run the measured cells with each engine's best configuration")
    r.add_argument("--sweep-workloads", help="workloads of the sweep (default: --workloads)")
    r.add_argument("--sweep-threads", help="thread counts of the sweep (default: the highest of --threads)")
    r.add_argument("--sweep-configs", default="",
                   help="sweep only these configurations of the named engines, e.g. "
                   "'myrocks=bc1_2|dr1_2,innodb=bp60|bp50' (engines not named: all of theirs)")
    r.add_argument("--sweep-duration", type=int, help="measured seconds per sweep run (full: 60, quick: 3)")
    return p


def from_args(argv):
    args = build_parser().parse_args(argv)
    mode = "quick" if args.quick else ("sweep" if args.sweep else "full")
    d = dict(QUICK if args.quick else FULL)
    if args.sweep:
        d.update(SWEEP)

    def pick(name, cast=lambda x: x):
        v = getattr(args, name)
        return cast(v) if v is not None else d.get(name)

    engines = split_list(args.engines)
    for e in engines:
        if e not in ENGINES:
            raise SystemExit("unknown engine %r (use %s)" % (e, ",".join(ENGINES)))
    workloads = [WORKLOAD_ALIASES.get(w, w) for w in split_list(args.workloads or
                                                                d.get("workloads", ",".join(WORKLOADS)))]
    for w in workloads:
        if w not in WORKLOADS:
            raise SystemExit("unknown workload %r" % w)
    threads = [int(t) for t in split_list(args.threads or d["threads"])]
    tables = pick("tables")
    data_bytes = args.data if args.data is not None else (parse_size(d["data"]) if d.get("data") else None)
    table_size = args.table_size or d.get("table_size")
    if table_size is None:
        table_size = max(1000, int(math.ceil(data_bytes / ROW_BYTES / tables)))
    if data_bytes is None or (args.table_size and args.data is None):
        data_bytes = tables * table_size * ROW_BYTES  # an explicit row count sets the data size
    mem_specs = split_list(args.mem or d["mem"])
    mems = []
    for s in mem_specs:
        m = re.fullmatch(r"data/([0-9.]+)", s)
        mems.append(int(data_bytes / float(m.group(1))) // MiB * MiB if m else parse_size(s))
    if min(mems) < 128 * MiB:
        raise SystemExit("memory limit %s is below 128 MB; MariaDB cannot start in that" % fmt_size(min(mems)))
    rounds = max(1, args.rounds or d["rounds"])
    dur_r = args.duration or args.duration_read
    dur_w = args.duration or args.duration_write
    if not args.quick and rounds > 1:  # the same measured time in all, split over the rounds
        dur_r = dur_r or max(60, d["duration_read"] // rounds)
        dur_w = dur_w or max(60, d["duration_write"] // rounds)
    dur_r, dur_w = dur_r or d["duration_read"], dur_w or d["duration_write"]
    sweep_w = [WORKLOAD_ALIASES.get(w, w) for w in split_list(args.sweep_workloads or ",".join(workloads))]
    for w in sweep_w:
        if w not in WORKLOADS:
            raise SystemExit("unknown sweep workload %r" % w)
    sweep_t = [int(t) for t in split_list(args.sweep_threads or str(max(threads)))]
    from . import freeze
    freeze.check_path(args.freeze_cgroup)
    configs = parse_configs(args.configs)
    sweep_configs = parse_configs(args.sweep_configs, many=True)
    if sweep_configs and not args.sweep_peers:
        raise SystemExit("--sweep-configs needs --sweep-peers")
    if configs and args.sweep_peers:
        raise SystemExit("--configs and --sweep-peers exclude each other")
    stamp = time.strftime("%Y%m%d-%H%M%S")
    out = args.out or os.path.join(BENCH_DIR, "results", "quick" if args.quick else stamp)
    require = split_list(args.require) if args.require is not None else ["innodb", "myrocks"]
    return Config(
        mode=mode, engines=engines, workloads=workloads, threads=threads, mems=mems,
        mem_specs=mem_specs, data_bytes=data_bytes, tables=tables, table_size=table_size,
        duration_read=dur_r, duration_write=dur_w, warmup=pick("warmup"),
        warmup_read_max=max(pick("warmup_read_max"), pick("warmup")),
        warmup_chunk=pick("warmup_chunk"), drain=pick("drain"), size_every=d["size_every"],
        out_dir=os.path.abspath(out), workdir=args.workdir, keep_workdir=args.keep_workdir,
        install=not args.no_install, build=not args.no_build, plots=not args.no_plots,
        use_cgroup=not args.no_cgroup, cgroup_parent=args.cgroup_parent.strip("/"),
        strata_bin=args.strata_bin or os.path.join(REPO_DIR, "target", "release", "strata"),
        strata_args=args.strata_arg, require=[e for e in require if e in engines],
        max_error_rate=args.max_error_rate, dry_run=args.dry_run, argv=list(argv),
        load_mem=args.load_mem or max(max(mems), 4 * GiB), stall=args.stall or d["stall"],
        rounds=rounds, repeat_disturbed=args.repeat_disturbed, max_background=args.max_background,
        sweep_peers=args.sweep_peers, sweep_workloads=sweep_w, sweep_threads=sweep_t,
        sweep_duration=args.sweep_duration or d["sweep_duration"],
        binlog=["off", "on"] if args.binlog == "both" else [args.binlog],
        freeze_cgroup=args.freeze_cgroup, configs=configs, sweep_configs=sweep_configs)


def parse_configs(text, many=False):
    """--configs 'innodb=bp60,myrocks=bc1_4' -> {engine: variant}; with `many`
    (--sweep-configs 'myrocks=bc1_2|dr1_2') -> {engine: [variants]}; exits on an unknown name."""
    from .engines import VARIANTS
    out = {}
    for item in split_list(text or ""):
        e, _, v = item.partition("=")
        names = v.split("|") if many else [v]
        if e not in VARIANTS or not all(n in [x for x, _ in VARIANTS[e]] for n in names):
            raise SystemExit("%s: %r is not ENGINE=CONFIG with one of %s" % (
                "--sweep-configs" if many else "--configs", item, "; ".join(
                    "%s=%s" % (k, "|".join(n for n, _ in vs)) for k, vs in VARIANTS.items())))
        out[e] = names if many else v
    return out


def describe(cfg, engines=None):
    """Human-readable plan summary (printed at start and by --dry-run)."""
    engines = engines if engines is not None else cfg.engines
    lines = [
        "mode %s: engines %s; workloads %s; threads %s" % (
            cfg.mode, ",".join(engines) or "(none)", ",".join(cfg.workloads),
            ",".join(map(str, cfg.threads))),
        "data: %d tables x %d rows (nominal %s); memory limits: %s" % (
            cfg.tables, cfg.table_size, fmt_bytes(cfg.data_bytes),
            ", ".join("%s (%s)" % (fmt_size(m), s) for m, s in zip(cfg.mems, cfg.mem_specs))),
        "binary log: %s" % BINLOG_TEXT["/".join(cfg.binlog)],
        "measure %ds reads / %ds writes after warm-up (%ds; reads until memory stops growing, "
        "max %ds); drain watch %ds" % (cfg.duration_read, cfg.duration_write, cfg.warmup,
                                       cfg.warmup_read_max, cfg.drain),
    ]
    if cfg.interleaved:
        def order(rnd):
            return " ".join("%s%s" % (e, "+binlog" if b == "on" and cfg.binlog != ["on"] else "")
                            for e, b in binlog_units(engines, cfg.binlog, rnd))
        lines.append("%d rounds per cell, engines interleaved (round 1 %s, round 2 %s); every run on a "
                     "fresh copy of the template" % (cfg.rounds, order(1), order(2)))
    lines.append("background load: a window with more than %.0f%% of the CPU taken by other processes "
                 "or stolen is flagged as disturbed%s" % (
                     100 * cfg.max_background, " and repeated once" if cfg.repeat_disturbed else ""))
    if cfg.configs:
        from .engines import VARIANT_LABEL
        lines.append("cache configurations pinned by --configs: %s" % ", ".join(
            "%s %s" % (e, VARIANT_LABEL[v]) for e, v in sorted(cfg.configs.items())))
    if cfg.freeze_cgroup:
        lines.append("other work: the freezer group %s is frozen from each run's server start to its stop "
                     "(after a sync), thawed between runs" % cfg.freeze_cgroup)
    if cfg.sweep_peers:
        from .engines import VARIANTS
        lines.append("peer sweep per memory limit (%d runs): %s; %s at %s threads, %ds each; best = highest "
                     "geometric mean of TPS among configurations whose runs all completed" % (
                         len(cfg.sweep_runs(engines)),
                         "; ".join("%s %s" % (e, ",".join(v for v, _ in VARIANTS[e])) for e in engines),
                         ",".join(cfg.sweep_workloads), ",".join(map(str, cfg.sweep_threads)),
                         cfg.sweep_duration))
    lines.append("%d measured runs%s, estimated duration at most %s" % (
        len(cfg.plan(engines)),
        " + %d sweep runs" % len(cfg.sweep_runs(engines)) if cfg.sweep_peers else "",
        fmt_duration(cfg.estimate_seconds(engines))))
    return lines


def binlog_units(engines, modes, rnd):
    """The (engine, binary log mode) runs of round rnd: engines rotated as rotation() does,
    each engine's modes adjacent, in the given order on odd rounds and reversed on even ones
    (with two modes and an even number of rounds each order runs equally often)."""
    ms = list(modes) if rnd % 2 else list(reversed(modes))
    return [(e, b) for e in rotation(list(engines), rnd) for b in ms]
