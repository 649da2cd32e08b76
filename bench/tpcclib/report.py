"""bench/tpcc's markdown report: per cell (memory limit, threads, isolation) the tps of every
round per engine, medians with spread, Strata/InnoDB and Strata/MyRocks ratios as medians of
the per-round ratios; per run the 1-second percentiles, server I/O, CPU per transaction,
datadir growth, memory peak and the checks; the load table with sizes per warehouse.
"""

from . import stats
from .plan import engine_iso

MiB = stats.MiB
LABEL = {"innodb": "InnoDB", "myrocks": "MyRocks", "strata": "Strata"}


def run_ok(r):
    return bool(r.get("ok")) and not r.get("server_died") and not r.get("error") \
        and not r.get("oom_kills")


def checks_ok(r):
    """The checks passed, or were not asked for (--check)."""
    return bool(r.get("check_skipped")) or (bool(r.get("check_ran")) and not r.get("checks_failed"))


def cells(runs):
    """{(mem, threads, iso): {engine: [tps or None per round, by round number]}} for the
    non-purge runs; MyRocks' RC runs also fill the RR cells of the same memory and threads."""
    rounds = sorted({r["round"] for r in runs if not r["purge"]})
    keys = sorted({(r["mem"], r["threads"], r["iso"]) for r in runs
                   if not r["purge"] and r["engine"] != "myrocks"}) or \
        sorted({(r["mem"], r["threads"], r["iso"]) for r in runs if not r["purge"]})
    out = {}
    for mem, th, iso in keys:
        c = {}
        for e in ("innodb", "myrocks", "strata"):
            by_round = {r["round"]: (r["tps"] if run_ok(r) else None) for r in runs
                        if not r["purge"] and r["engine"] == e and r["mem"] == mem
                        and r["threads"] == th and r["iso"] == engine_iso(e, iso)}
            if by_round:
                c[e] = [by_round.get(n) for n in rounds]
        out[(mem, th, iso)] = c
    return out


def _ratio(c, a, b):
    if a not in c or b not in c:
        return "-"
    s = stats.ratio_summary(c[a], c[b])
    if not s:
        return "- (no round with both)"
    if len(s["ratios"]) == 1:
        return "**%.2fx** (1 round)" % s["median"]
    txt = "**%.2fx** (%.2f-%.2f)" % (s["median"], s["min"], s["max"])
    return txt + (" rounds disagree >10%" if s["disagree"] else "")


def _tps(vals):
    if not vals:
        return "-"
    ms = stats.median_spread(vals)
    txt = ", ".join("%.0f" % v if v is not None else "failed" for v in vals)
    return "%s (med %.0f)" % (txt, ms["median"]) if ms and len(vals) > 1 else txt


def _f(v, fmt="%.0f"):
    return fmt % v if isinstance(v, (int, float)) else "-"


def cell_table(runs):
    lines = ["| memory | threads | iso | InnoDB tps | MyRocks tps (RC) | Strata tps | "
             "Strata/InnoDB | Strata/MyRocks |", "|---|---|---|---|---|---|---|---|"]
    for (mem, th, iso), c in sorted(cells(runs).items()):
        lines.append("| %d MB | %d | %s | %s | %s | %s | %s | %s |" % (
            mem // MiB, th, iso, _tps(c.get("innodb")), _tps(c.get("myrocks")),
            _tps(c.get("strata")), _ratio(c, "strata", "innodb"), _ratio(c, "strata", "myrocks")))
    return lines


def run_table(runs):
    lines = ["| round | memory | engine | thr | iso | tps | 1-s p1 / p5 / median | zero s | "
             "read KB/s | write KB/s | CPU ms/trx | KB read/trx | KB written/trx | datadir MB "
             "before -> after (growth) | peak mem MB | other CPU (cores) | checks |",
             "|" + "---|" * 17]
    for r in runs:
        s = r.get("series") or {}
        sb, sa = r.get("size_before"), r.get("size_after")
        size = "%.0f -> %.0f (%+.0f)" % (sb / MiB, sa / MiB, (sa - sb) / MiB) if sb and sa else "-"
        status = "" if run_ok(r) else " (%s)" % (
            "OOM" if r.get("oom_kills") else "died" if r.get("server_died") else "failed")
        chk = "not checked (--check)" if r.get("check_skipped") else \
            "%d passed" % r.get("checks_passed", 0) if checks_ok(r) else "FAILED %s" % (
            ",".join(r.get("checks_failed", [])) or "(did not run)")
        lines.append("| %s | %d | %s | %d | %s%s | %s%s | %s / %s / %s | %s | %s | %s | %s | %s | %s "
                     "| %s | %s | %s | %s |" % (
                         "purge" if r["purge"] else r["round"], r["mem"] // MiB, LABEL[r["engine"]],
                         r["threads"], r["iso"], "" if not r["purge"] else " purge",
                         _f(r.get("tps")), status, _f(s.get("p1")), _f(s.get("p5")),
                         _f(s.get("median")), s.get("zero_seconds", "-"), _f(r.get("read_kbps")),
                         _f(r.get("write_kbps")), _f(r.get("cpu_ms_per_trx"), "%.2f"),
                         _f(r.get("read_kb_per_trx"), "%.1f"), _f(r.get("write_kb_per_trx"), "%.1f"),
                         size, _f((r.get("peak_mem") or 0) / MiB if r.get("peak_mem") else None),
                         _f((r.get("machine") or {}).get("other_cores"), "%.2f"), chk))
    return lines


def load_table(meta):
    lines = ["| engine | load s | datadir MB | table data MB | MB / warehouse | foreign keys | "
             "table data / smallest limit |", "|---|---|---|---|---|---|---|"]
    lo = min(meta["mems"])
    for e, m in meta["load"].items():
        lines.append("| %s | %.0f | %.0f | %.0f | %.1f | %d | %.1fx |" % (
            LABEL[e], m["load_s"], m["template_bytes"] / MiB, m["table_bytes"] / MiB,
            m["table_bytes_per_warehouse"] / MiB, m["foreign_keys"], m["table_bytes"] / float(lo)))
    return lines


def cache_label(engine, args):
    """The engine's cache configuration in words: --configs' choice or the default (the seed's)."""
    from oltplib.engines import VARIANT_LABEL, VARIANTS
    return VARIANT_LABEL[(args.get("configs") or {}).get(engine) or VARIANTS[engine][0][0]]


def render(meta, runs, plots):
    a = meta["args"]
    lines = ["# TPC-C (sysbench-tpcc, unmodified): Strata vs InnoDB vs MyRocks", "",
             "%d warehouses (1 table set), memory limits %s (%s), %d s measured after %d s "
             "warm-up, %d round(s), engines interleaved (order reversed every other round); "
             "revision %s, %s." % (
                 a["warehouses"], ", ".join("%d MB" % (m // MiB) for m in meta["mems"]),
                 "one memory cgroup per server start, caches dropped before each run"
                 if meta.get("cgroup") else "no cgroup", a["duration"], a["warmup"], a["rounds"],
                 meta["revision"], meta["date"]), "",
             "What differs between the engines: MyRocks runs READ-COMMITTED in every cell (its "
             "REPEATABLE-READ turns write conflicts into errors; seed 001 did the same) and "
             "without foreign keys (`--use_fk=0 --mysql_storage_engine=rocksdb`: MyRocks has "
             "none); InnoDB and Strata %s. Engine settings are bench/oltp's at each limit "
             "(oltplib/engines.py): InnoDB %s, O_DIRECT; MyRocks %s, buffered I/O; Strata %s, "
             "page cache the rest; all sync every commit; binary log off%s." % (
                 "without foreign keys too (`--no-fk`)" if a["no_fk"] else "have them (sysbench-tpcc's default)",
                 cache_label("innodb", a), cache_label("myrocks", a), cache_label("strata", a),
                 " (cache configurations chosen with `--configs`)" if a.get("configs") else ""), "",
             "Ratios are medians of the per-round ratios (min-max in parentheses); a Strata RR "
             "cell is compared with MyRocks' RC run of the same round.", ""]
    if a.get("freeze_cgroup"):
        held = [r["frozen"]["tasks"] for r in runs if "tasks" in (r.get("frozen") or {})]
        lines += ["Other work on the machine (the freezer group `%s`) was frozen from each run's "
                  "server start to the end of its measured window (the check ran thawed), after a sync: "
                  "%d of %d runs%s." % (
                      a["freeze_cgroup"], len(held), len(runs),
                      ", %d-%d processes held" % (min(held), max(held)) if held else ""), ""]
    lines += cell_table(runs)
    lines += ["", "## Load", ""] + load_table(meta)
    for e, why in (meta.get("load_failed") or {}).items():
        lines.append("- %s: load failed, no runs: %s" % (LABEL[e], why.splitlines()[0][:300]))
    lines += ["", "## Runs", "",
              "Server I/O and CPU from /proc/PID/io and /proc/PID/stat over the measured window; "
              "*other CPU* is the rest of the machine (sysbench included) in cores; *zero s* "
              "counts seconds without a commit.", ""]
    lines += run_table(runs)
    bad = [r for r in runs if not run_ok(r) or not checks_ok(r)]
    lines += ["", "Failed runs or checks: %s" % (", ".join(
        "%s/%dMB/%d/%s%s" % (r["engine"], r["mem"] // MiB, r["threads"], r["iso"],
                             ": " + r["error"][:200] if r.get("error") else "") for r in bad) or "none")]
    if plots:
        lines += [""] + ["![%s](%s)" % (p, p) for p in plots]
    return "\n".join(lines) + "\n"
