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
            warmup_chunk=30, drain=120, size_every=10, stall=120)
QUICK = dict(threads="4,16", mem="256M", data=None, tables=2, table_size=5000,
             duration_read=5, duration_write=5, warmup=2, warmup_read_max=4, warmup_chunk=2,
             drain=3, size_every=1, stall=20)
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

    @property
    def is_read(self):
        return self.workload == "oltp_read_only"

    def run_id(self):
        short = {"oltp_read_only": "ro", "oltp_read_write": "rw", "oltp_write_only": "wo"}
        return "%s-%dM-%s-t%d" % (self.engine, self.mem // MiB, short[self.workload], self.threads)


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

    @property
    def quick(self):
        return self.mode == "quick"

    def duration(self, workload):
        return self.duration_read if workload == "oltp_read_only" else self.duration_write

    def plan(self, engines=None):
        """Run order: engine, then memory limit, then workload (restore), then threads."""
        out = []
        for e in engines if engines is not None else self.engines:
            for m in self.mems:
                for w in self.workloads:
                    for t in self.threads:
                        out.append(RunSpec(e, m, w, t))
        return out

    def estimate_load_seconds(self, engine=None):
        rows = self.tables * self.table_size
        return 20 + rows / LOAD_ROWS_PER_S.get(engine, 25000.0) + rows * ROW_BYTES / (200.0 * MiB)

    def estimate_run_seconds(self, spec):
        """Upper-bound wall time of one run: restart, warm-up, measurement, drain, stop."""
        warm = self.warmup_read_max if spec.is_read else self.warmup
        restart = 8 if self.quick else 40
        return restart + warm + self.duration(spec.workload) + self.drain

    def estimate_seconds(self, engines=None):
        engines = engines if engines is not None else self.engines
        total = 0.0
        copy = self.tables * self.table_size * ROW_BYTES / (200.0 * MiB) + 2
        for e in engines:
            total += self.estimate_load_seconds(e)
            total += len(self.mems) * len(self.workloads) * copy
        for spec in self.plan(engines):
            total += self.estimate_run_seconds(spec)
        return total


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
    dur_r = args.duration or pick("duration_read")
    dur_w = args.duration or pick("duration_write")
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
        load_mem=args.load_mem or max(max(mems), 4 * GiB), stall=args.stall or d["stall"])


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
        "measure %ds reads / %ds writes after warm-up (%ds; reads until memory stops growing, "
        "max %ds); drain watch %ds" % (cfg.duration_read, cfg.duration_write, cfg.warmup,
                                       cfg.warmup_read_max, cfg.drain),
        "%d runs, estimated duration at most %s" % (
            len(cfg.plan(engines)), fmt_duration(cfg.estimate_seconds(engines))),
    ]
    return lines
