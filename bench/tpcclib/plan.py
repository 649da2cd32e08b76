"""bench/tpcc's command line, presets (full, --quick, --sweep), sizing and the run plan.

Data and memory: `--data` is a nominal size in InnoDB bytes (stats.WAREHOUSE_BYTES; another
engine's with `--size-by`) that sets the warehouse count; by default it is 5x the smallest
memory limit, so the InnoDB data is ~5x the limit (seed 000's ratio). `--mem` takes sizes or data/X; `--sweep` keeps the data
fixed and varies the limit (seed 001: 5 GB .. 100 GB on ~90 GB of data). `--warehouses`
overrides the sizing.

The plan: rounds x memory limits x cells (threads x isolation) x engines, the engine order
alternating between rounds (A B C, C B A, ...). MyRocks runs READ-COMMITTED only (as in
bench/oltp and seed 001: its REPEATABLE-READ turns write conflicts into errors), so in a
cell list with both levels it runs once per thread count, and Strata's and InnoDB's RR
cells are compared with its RC run.
"""

import argparse
import os
import time

from oltplib import config, freeze

from . import stats

MiB = stats.MiB
GiB = 1024 * MiB
ENGINES = ["innodb", "myrocks", "strata"]
ISO = {"RR": "REPEATABLE-READ", "RC": "READ-COMMITTED"}

FULL = dict(mem="600M", threads="8,32", iso="RC", rounds=3, duration=300, warmup=60)
SWEEP = dict(mem="data/8,data/5,data/3,data/2,data/1.25", threads="32", iso="RC", rounds=2,
             duration=300, warmup=60, data="3000M")
QUICK = dict(mem="256M", threads="4", iso="RC,RR", rounds=1, duration=8, warmup=2,
             warehouses=1)


def build_parser(doc):
    p = argparse.ArgumentParser(prog="bench/tpcc", description=doc,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    a = p.add_argument
    a("--quick", action="store_true", help="CI smoke: 1 warehouse, 256 MB, 1 round, 8 s runs")
    a("--sweep", action="store_true", help="memory sweep like seed 001: data fixed (3000M, 31 "
      "warehouses), limits data/8 .. data/1.25, 32 threads, RC, 2 rounds")
    a("--engines", default=",".join(ENGINES), help="comma list of innodb,myrocks,strata")
    a("--warehouses", type=int, help="override the sizing from --data")
    a("--data", help="nominal data size in InnoDB bytes (default: 5x the smallest --mem)")
    a("--size-by", default="innodb", choices=ENGINES, help="whose bytes per warehouse --data "
      "and data/X are in (default innodb: the LSM engines' data is 3-7x smaller, see README)")
    a("--mem", help="comma list of memory limits, sizes or data/X (full: 600M)")
    a("--threads", help="comma list (full: 8,32)")
    a("--iso", help="isolation levels, RC and/or RR (full: RC, seed 001's; MyRocks: RC always)")
    a("--duration", type=int, help="measured seconds per run (full: 300)")
    a("--warmup", type=int, help="discarded seconds before each measured run (full: 60)")
    a("--rounds", type=int, help="interleaved rounds (full: 3)")
    a("--no-fk", action="store_true", help="no foreign keys for any engine (seed 001); by default "
      "InnoDB and Strata have them and MyRocks, which has none, runs with --use_fk=0")
    a("--stall", type=int, default=120, help="stop a run after this many seconds without a "
      "transaction (reported as stalled)")
    a("--purge", action="store_true", help="also one run per engine with --enable_purge=yes")
    a("--no-cgroup", action="store_true", help="no memory cgroup (the engines are still sized "
      "for --mem; data then in the page cache)")
    a("--load-mem", help="memory limit while loading (default: the largest limit, at least 4G)")
    a("--workdir", default="/var/tmp/strata-tpcc")
    a("--out", help="result directory (default bench/results/tpcc-DATE, quick: tpcc-quick)")
    a("--tpcc-dir", default=None, help="sysbench-tpcc checkout (default ../shared/vendor/sysbench-tpcc)")
    a("--strata-bin", default=None)
    a("--strata-arg", action="append", default=[])
    a("--no-build", action="store_true")
    a("--no-plots", action="store_true")
    a("--dry-run", action="store_true", help="print the plan and its estimated time, then exit")
    a("--configs", default="", help="cache configurations, e.g. innodb=bp60,myrocks=bc1_2,strata=bc1_4 "
      "(bench/oltp's names: oltplib/engines.py VARIANTS; default: each engine's first, the seed's)")
    a("--freeze-cgroup", default="", help="a cgroup v1 freezer group holding other work on the "
      "machine, frozen from each run's server start to the end of its measured window; the check "
      "runs thawed (bench/oltplib/freeze.py)")
    a("--check", default="all", help="engines whose data the ten sysbench-tpcc consistency checks "
      "verify after each run: all (default), none or a comma list; MyRocks' take many minutes "
      "per run at 31 warehouses, so a long comparison may check Strata only")
    return p


def parse_args(argv, doc, repo_dir, tpcc_dir):
    p = build_parser(doc)
    a = p.parse_args(argv)
    d = dict(QUICK if a.quick else FULL)
    if a.sweep:
        d.update(SWEEP)
    a.mode = "quick" if a.quick else ("sweep" if a.sweep else "full")
    a.engines = [e.strip() for e in a.engines.split(",") if e.strip()]
    for e in a.engines:
        if e not in ENGINES:
            p.error("--engines: %s (innodb, myrocks, strata)" % e)
    freeze.check_path(a.freeze_cgroup)
    try:
        a.configs = config.parse_configs(a.configs)
    except SystemExit as ex:
        p.error(str(ex))
    a.check = ENGINES if a.check == "all" else [] if a.check == "none" else [
        e.strip() for e in a.check.split(",") if e.strip()]
    for e in a.check:
        if e not in ENGINES:
            p.error("--check: %s (all, none or a list of innodb, myrocks, strata)" % e)
    a.threads = [int(t) for t in (a.threads or d["threads"]).split(",")]
    a.iso = [i.strip().upper() for i in (a.iso or d["iso"]).split(",")]
    for i in a.iso:
        if i not in ISO:
            p.error("--iso: %s (RR or RC)" % i)
    for k in ("duration", "warmup", "rounds"):
        if getattr(a, k) is None:
            setattr(a, k, d[k])
    a.mem_specs = [s.strip() for s in (a.mem or d["mem"]).split(",") if s.strip()]
    try:
        fixed = [stats.parse_size(s) for s in a.mem_specs if not s.startswith("data/")]
        data = a.data or d.get("data")
        if data:
            a.data_bytes = stats.parse_size(data)
        elif a.warehouses or d.get("warehouses"):
            a.data_bytes = (a.warehouses or d["warehouses"]) * stats.WAREHOUSE_BYTES[a.size_by]
        elif fixed:
            a.data_bytes = 5 * min(fixed)
        else:
            p.error("--mem data/X needs --data or --warehouses")
        a.mems = stats.mem_limits(a.mem_specs, a.data_bytes)
        a.load_mem = stats.parse_size(a.load_mem) if a.load_mem else max(max(a.mems), 4 * GiB)
    except ValueError as ex:
        p.error("size: %s" % ex)
    if min(a.mems) < 128 * MiB:
        p.error("memory limit below 128 MB: MariaDB cannot start in that")
    a.warehouses = a.warehouses or d.get("warehouses") or stats.warehouses_for(
        a.data_bytes, stats.WAREHOUSE_BYTES[a.size_by])
    if a.quick:
        a.purge = True
    if a.out is None:
        a.out = os.path.join(repo_dir, "bench", "results",
                             "tpcc-quick" if a.quick else "tpcc-" + time.strftime("%Y-%m-%d-%H%M"))
    a.tpcc_dir = a.tpcc_dir or tpcc_dir
    a.strata_bin = a.strata_bin or os.path.join(repo_dir, "target", "release", "strata")
    # sysbench runs in the tpcc directory: every path must survive the chdir.
    a.out, a.workdir, a.tpcc_dir, a.strata_bin = (os.path.abspath(x) for x in (
        a.out, a.workdir, a.tpcc_dir, a.strata_bin))
    return a


def engine_iso(engine, iso):
    """The isolation level an engine runs a cell at (MyRocks: READ-COMMITTED always)."""
    return "RC" if engine == "myrocks" else iso


def plan(a):
    """[{"round", "mem", "threads", "iso", "engine", "purge"}] in execution order."""
    out = []
    for rnd in range(1, a.rounds + 1):
        order = a.engines if rnd % 2 == 1 else list(reversed(a.engines))
        for mem in a.mems:
            for th in a.threads:
                done = set()
                for iso in a.iso:
                    for e in order:
                        key = (e, engine_iso(e, iso))
                        if key in done:
                            continue
                        done.add(key)
                        out.append({"round": rnd, "mem": mem, "threads": th, "iso": key[1],
                                    "engine": e, "purge": False})
    if a.purge:
        # --quick: MyRocks' purge run is left out (it checks no Strata path; ~30 s of CI).
        for e in [x for x in a.engines if not (a.quick and x == "myrocks")]:
            out.append({"round": 0, "mem": a.mems[0], "threads": a.threads[0],
                        "iso": engine_iso(e, a.iso[0]), "engine": e, "purge": True})
    return out


def describe(a):
    runs = plan(a)
    est = stats.estimate_seconds(runs, a.warehouses, a.warmup, a.duration, a.engines)
    fmt = lambda m: "%d MB" % (m // MiB)  # noqa: E731
    lines = [
        "mode %s: engines %s; %d warehouses (expected table data: %s; smallest limit %s)" % (
            a.mode, ",".join(a.engines), a.warehouses, ", ".join(
                "%s %s = %.1fx" % (e, fmt(a.warehouses * stats.WAREHOUSE_BYTES[e]),
                                   a.warehouses * stats.WAREHOUSE_BYTES[e] / float(min(a.mems)))
                for e in a.engines), fmt(min(a.mems))),
        "memory limits %s%s; load under %s" % (
            ", ".join("%s (%s)" % (fmt(m), s) for m, s in zip(a.mems, a.mem_specs)),
            " (no cgroup)" if a.no_cgroup else " (memory cgroup per server start)", fmt(a.load_mem)),
        "threads %s; isolation %s (MyRocks RC); foreign keys %s" % (
            ",".join(map(str, a.threads)), ",".join(a.iso),
            "off" if a.no_fk else "on for InnoDB and Strata, off for MyRocks"),
        "%d round(s), %d s warm-up + %d s measured per run, then check; %d runs%s" % (
            a.rounds, a.warmup, a.duration, len(runs), " (incl. purge runs)" if a.purge else ""),
        "estimated time: about %d min" % round(est / 60.0),
    ]
    if a.configs:
        lines.insert(3, "cache configurations (--configs): %s" % ", ".join(
            "%s %s" % (e, v) for e, v in sorted(a.configs.items())))
    return lines, runs
