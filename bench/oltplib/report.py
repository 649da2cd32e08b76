"""report.md: tables shaped like seed 000 (rows engine x memory, columns threads, QPS), the
Strata/InnoDB, Strata/MyRocks and MyRocks/InnoDB ratios, per-run details (TPS, p95, errors,
I/O and CPU per transaction, memory peak and OOM, size on disk, leftover work), the load,
the setup (machine, versions, settings) and the plots.
"""

import os
import statistics

from . import rounds
from .config import fmt_bytes, fmt_duration, fmt_size

LABEL = {"innodb": "InnoDB", "myrocks": "MyRocks", "strata": "Strata"}
SHORT = {"oltp_read_only": "Read Only", "oltp_read_write": "Mixed Read/Write",
         "oltp_write_only": "Write Only"}


def _runs(res, engine=None, mem=None, workload=None, threads=None):
    out = []
    for r in res["runs"]:
        if ((engine is None or r["engine"] == engine) and (mem is None or r["mem"] == mem)
                and (workload is None or r["workload"] == workload)
                and (threads is None or r["threads"] == threads)):
            out.append(r)
    return out


def _one(res, engine, mem, workload, threads):
    rs = _runs(res, engine, mem, workload, threads)
    return rs[-1] if rs else None


def _cell(r):
    if r is None:
        return "-"
    if r["status"] == "oom":
        return "OOM"
    if r["status"] in ("ok", "too_many_errors", "unclean_shutdown") and r.get("qps") is not None:
        mark = {"too_many_errors": " (errors)", "unclean_shutdown": " (unclean shutdown)"}.get(r["status"], "")
        return "{:,.0f}".format(r["qps"]) + mark
    return r["status"].replace("_", " ")


def _cell_rounds(res, e, m, w, t):
    """A QPS cell: with rounds, the median over the rounds that completed, and how many did
    not; without, the one run."""
    rr = rounds.round_runs(res["runs"], e, m, w, t)
    if len(rr) <= 1:
        return _cell(_one(res, e, m, w, t))
    ok = [r["qps"] for r in rr.values() if r["status"] == "ok" and r.get("qps") is not None]
    bad = [r for _, r in sorted(rr.items()) if r["status"] != "ok"]
    if not ok:
        return _cell(bad[-1])
    txt = "{:,.0f}".format(statistics.median(ok))
    if bad:
        txt += " (%d of %d rounds: %s)" % (len(bad), len(rr), ", ".join(sorted({_cell(r) for r in bad})))
    return txt


def _ratio_rounds(res, num, den, m, w, t):
    """A ratio cell: with rounds, the median of the per-round ratios, their min-max, and
    flags (rounds disagree by more than 10%, disturbed rounds, rounds where a side failed)."""
    s = rounds.ratio_summary(res["runs"], num, den, m, w, t)
    return _summary_cell(s, lambda: _ratio(_one(res, num, m, w, t), _one(res, den, m, w, t), LABEL[num], LABEL[den]))


def _summary_cell(s, single):
    """A ratio summary (rounds.ratio_summary's shape) as a cell; single() when one round."""
    n = 0 if s is None else len(s["per_round"]) + len(s["failed_rounds"])
    if n <= 1:
        return single()
    if not s["per_round"]:
        fails = sorted({"%s %s" % (LABEL[e], st.replace("_", " ")) for f in s["failed_rounds"] for e, st in f["failed"]})
        return "- (%s)" % ", ".join(fails)
    txt = "%.2fx (%.2f-%.2f)" % (s["median"], s["min"], s["max"])
    notes = []
    if s["disagree"]:
        notes.append("**rounds disagree >10%**")
    if s["disturbed_rounds"]:
        notes.append("%d disturbed" % len(s["disturbed_rounds"]))
    if s["failed_rounds"]:
        notes.append("%d of %d rounds failed" % (len(s["failed_rounds"]), n))
    return txt + (" " + ", ".join(notes) if notes else "")


def _ratio(a, b, a_label="", b_label=""):
    """num/den QPS, or why there is none: a side that ran and failed is named with its
    outcome (`InnoDB stalled`), so that a missing ratio is not mistaken for a missing run."""
    if not a or not b:
        return "-"
    failed = ["%s %s" % (lbl, _cell(r)) for r, lbl in ((a, a_label), (b, b_label)) if r["status"] != "ok"]
    if failed:
        return "- (%s)" % ", ".join(f.strip() for f in failed)
    if not b.get("qps"):
        return "-"
    return "%.2fx" % (a["qps"] / b["qps"])


def _available(res, e):
    info = res["engines"].get(e)
    return bool(info and info.get("available") and (info.get("load") or {}).get("status") == "ok")


def qps_table(res, workload):
    cfg = res["config"]
    head = "| %s | %s |" % ("Configuration for " + SHORT[workload],
                            " | ".join("%d thds" % t for t in cfg["threads"]))
    lines = [head, "|---|" + "---|" * len(cfg["threads"])]
    for e in cfg["engines"]:
        info = res["engines"].get(e, {})
        if not _available(res, e):
            reason = (info.get("reason") or (info.get("load") or {}).get("error") or "not run").splitlines()[0]
            if (info.get("load") or {}).get("status") == "failed" and not info.get("reason"):
                reason = "load failed: " + reason
            lines.append("| %s (%s) | %s |" % (LABEL[e], reason[:90].replace("|", "/"),
                                               " | ".join(["n/a"] * len(cfg["threads"]))))
            continue
        for m in cfg["mem_limits"]:
            cells = [_cell_rounds(res, e, m, workload, t) for t in cfg["threads"]]
            lines.append("| %s %s | %s |" % (LABEL[e], fmt_size(m), " | ".join(cells)))
    return "\n".join(lines)


def ratio_table(res, workload, num, den):
    cfg = res["config"]
    if num not in cfg["engines"] or den not in cfg["engines"]:
        return None
    lines = ["| %s / %s, %s | %s |" % (LABEL[num], LABEL[den], SHORT[workload],
                                       " | ".join("%d thds" % t for t in cfg["threads"])),
             "|---|" + "---|" * len(cfg["threads"])]
    if not (_available(res, num) and _available(res, den)):
        missing = [LABEL[x] for x in (num, den) if not _available(res, x)]
        lines.append("| all | %s |" % " | ".join(["n/a (%s not available)" % ", ".join(missing)] +
                                                 ["n/a"] * (len(cfg["threads"]) - 1)))
        return "\n".join(lines)
    for m in cfg["mem_limits"]:
        cells = [_ratio_rounds(res, num, den, m, workload, t) for t in cfg["threads"]]
        lines.append("| %s | %s |" % (fmt_size(m), " | ".join(cells)))
    return "\n".join(lines)


def binlog_table(res, workload):
    """Each engine's QPS with the binary log on over its QPS with it off (per memory limit
    and thread count; with rounds the median of the per-round ratios): the log's cost."""
    cfg = res["config"]
    on, off = rounds.binlog_view(res, "on"), rounds.binlog_view(res, "off")
    lines = ["| binlog on / off, %s | %s |" % (SHORT[workload], " | ".join("%d thds" % t for t in cfg["threads"])),
             "|---|" + "---|" * len(cfg["threads"])]
    for e in cfg["engines"]:
        if not _available(res, e):
            continue
        for m in cfg["mem_limits"]:
            cells = [_summary_cell(rounds.binlog_summary(res["runs"], e, m, workload, t),
                                   lambda: _ratio(_one(on, e, m, workload, t), _one(off, e, m, workload, t),
                                                  "binlog on", "binlog off"))
                     for t in cfg["threads"]]
            lines.append("| %s %s | %s |" % (LABEL[e], fmt_size(m), " | ".join(cells)))
    return "\n".join(lines)


def workload_section(res, w):
    """One workload's tables: QPS, the cross-engine ratios and (writes) 1-s stability, per
    binary log mode when the log ran on; with both modes, then each engine's on/off ratio."""
    L = []
    modes = rounds.binlog_modes(res["runs"]) or ["off"]
    for mode in modes:
        view = rounds.binlog_view(res, mode)
        if modes != ["off"]:
            L.append("#### Binary log %s\n" % mode)
        L.append(qps_table(view, w) + "\n")
        for num, den in rounds.PAIRS:
            t = ratio_table(view, w, num, den)
            if t:
                L.append(t + "\n")
        if w != "oltp_read_only":
            st = stability_table(view, w)
            if st:
                L.append(st + "\n")
    if len(modes) == 2:
        L.append("#### Binary log on beside off\n")
        L.append("Each engine against itself: QPS with the binary log on (`sync_binlog=1`) over QPS with it "
                 "off, same cell%s.\n" % (" and round" if (res["config"].get("rounds") or 1) > 1 else ""))
        L.append(binlog_table(res, w) + "\n")
    growth = binlog_growth_table(res, w)
    if growth:
        L.append(growth + "\n")
    return L


def binlog_growth_table(res, workload):
    """Bytes the binary log grew per transaction in the measured windows with the log on
    (median over the cell's runs): shows the log was written, and how much each engine writes."""
    cfg = res["config"]
    rows = []
    for e in cfg["engines"]:
        for m in cfg["mem_limits"]:
            cells = []
            for t in cfg["threads"]:
                v = sorted(r["binlog_bytes_per_trx"] for r in res["runs"]
                           if r.get("binlog") == "on" and r.get("binlog_bytes_per_trx") is not None
                           and (r["engine"], r["mem"], r["workload"], r["threads"]) == (e, m, workload, t)
                           and not r.get("variant"))
                cells.append("-" if not v else "%.0f" % statistics.median(v))
            if any(c != "-" for c in cells):
                rows.append("| %s %s | %s |" % (LABEL[e], fmt_size(m), " | ".join(cells)))
    if not rows:
        return ""
    return "\n".join(["| binary log bytes / transaction, %s | %s |" % (
        SHORT[workload], " | ".join("%d thds" % t for t in cfg["threads"])),
        "|---|" + "---|" * len(cfg["threads"])] + rows)


def _kb(x):
    return "-" if x is None else "%.1f" % (x / 1024.0)


def _debt(d):
    """The engine's own estimate of background work left. Strata results written before
    drain_job_bytes existed stored the drain watch's job bytes in debt_bytes; the gauge wins."""
    if "strata_pending_compaction_bytes" in d:
        return d["strata_pending_compaction_bytes"]
    return d.get("debt_bytes")


def detail_table(res):
    lines = ["| run | status | QPS | TPS | p95 ms | errors | read KB/trx | write KB/trx | CPU ms/trx "
             "| 1-s QPS min / CV | 1-s TPS median / p5 / p1 | background | size before -> after | peak mem "
             "| OOM kills | debt at end | drain writes |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in res["runs"]:
        pt = r.get("per_trx") or {}
        q1 = r.get("qps_1s") or {}
        debt = _debt(r.get("debt_end") or {})
        drain = r.get("drain") or {}
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["id"] + (" (retry)" if r.get("retry") else ""),
            r["status"] + (" (retried)" if r.get("retried") else "") +
            (" (disturbed, repeated)" if r.get("superseded") else ""), _cell(r) if r["status"] == "ok" else "-",
            "-" if r.get("tps") is None else "{:,.0f}".format(r["tps"]),
            "-" if r.get("p95_ms") is None else r["p95_ms"], "-" if r.get("errors") is None else r["errors"],
            _kb(pt.get("read_bytes")), _kb(pt.get("write_bytes")),
            "-" if pt.get("cpu_ms") is None else "%.2f" % pt["cpu_ms"],
            "-" if not q1 else "%.0f / %.2f" % (q1["min"], q1["cv"] or 0), _series_cell(r.get("tps_1s")),
            _background_cell(r.get("background")),
            "%s -> %s" % (fmt_bytes(r.get("size_before")), fmt_bytes(r.get("size_after"))),
            fmt_bytes(r.get("peak_mem")), r.get("oom_kills", "-"), fmt_bytes(debt),
            "-" if not drain else "%s in %ss%s" % (fmt_bytes(drain.get("write_bytes")), drain.get("seconds"),
                                                   "" if drain.get("quiet") else "+")))
    return "\n".join(lines)


def _series_cell(st):
    if not st:
        return "-"
    return "%.0f / %.0f / %.0f%s" % (st["median"], st["p5"], st["p1"],
                                     " (%d s at 0)" % st["zero_s"] if st["zero_s"] else "")


def _background_cell(bg):
    """Other processes' CPU + steal, as % of the machine's CPU over the measured window."""
    if not bg:
        return "-"
    return "%.0f%% + %.0f%% steal%s" % (100 * bg["other_share"], 100 * bg["steal_share"],
                                        " **disturbed**" if bg.get("disturbed") else "")


STABILITY_TARGET = 0.8


def stability_table(res, workload):
    """Per engine and limit, the 1-second TPS p1/median of each thread count (the median over
    rounds, the worst round beside it), and seconds without a commit; Strata's cells below
    issue 15's target (p1/median >= 0.8, no zero second) are marked."""
    cfg = res["config"]
    engines = [e for e in cfg["engines"] if _available(res, e)]
    if not engines:
        return ""
    lines = ["| 1-s TPS p1 / median, %s | %s |" % (SHORT[workload], " | ".join("%d thds" % t for t in cfg["threads"])),
             "|---|" + "---|" * len(cfg["threads"])]
    for e in engines:
        for m in cfg["mem_limits"]:
            cells = []
            for t in cfg["threads"]:
                sts = [r.get("tps_1s") for _, r in sorted(rounds.round_runs(res["runs"], e, m, workload, t).items())
                       if r["status"] == "ok" and (r.get("tps_1s") or {}).get("p1_over_median") is not None]
                if not sts:
                    cells.append("-")
                    continue
                vals = [x["p1_over_median"] for x in sts]
                zero = sum(x["zero_s"] for x in sts)
                txt = "%.2f" % statistics.median(vals)
                if len(vals) > 1:
                    txt += " (worst %.2f)" % min(vals)
                if zero:
                    txt += ", %d s at 0" % zero
                if e == "strata" and (min(vals) < STABILITY_TARGET or zero):
                    txt = "**%s** (target >= %.1f, no zero second)" % (txt, STABILITY_TARGET)
                cells.append(txt)
            lines.append("| %s %s | %s |" % (LABEL[e], fmt_size(m), " | ".join(cells)))
    return "\n".join(lines)


def background_section(res):
    """Measured windows' background load: how many, how many disturbed, and which."""
    runs = [r for r in res["runs"] + (res.get("sweep_runs") or []) if r.get("background")]
    if not runs:
        return ""
    cfg = res["config"]
    shares = [r["background"]["background_share"] for r in runs]
    bad = [r for r in runs if r["background"].get("disturbed")]
    out = ["Over each measured window, the CPU the machine spent outside the processes under test "
           "(/proc/stat busy time minus the server's and sysbench's CPU and the harness's own) and the "
           "steal time, as a share of its capacity (%s CPUs x the window). A window above %.0f%% is "
           "*disturbed*%s.\n" % (runs[0]["background"].get("cpus"), 100 * cfg.get("max_background", 0.15),
                                   "; `--repeat-disturbed` ran each once more and the repeat counts"
                                   if cfg.get("repeat_disturbed") else "; `--repeat-disturbed` would run it again"),
           "%d windows: background median %.0f%%, max %.0f%%; %d disturbed." % (
               len(runs), 100 * statistics.median(shares), 100 * max(shares), len(bad))]
    if cfg.get("freeze_cgroup"):
        frozen = [r["frozen"]["tasks"] for r in runs if "tasks" in (r.get("frozen") or {})]
        failed = [r["id"] for r in runs if "failed" in (r.get("frozen") or {})]
        out.append("Other work on the machine (the freezer group `%s`) was frozen from each run's server "
                   "start to its stop, after a sync: %d of %d windows, %s processes held%s." % (
                       cfg["freeze_cgroup"], len(frozen), len(runs),
                       "%d-%d" % (min(frozen), max(frozen)) if frozen else "no",
                       "; the freeze failed for %s" % ", ".join(failed) if failed else ""))
    if bad:
        out.append("")
        for r in bad:
            bg = r["background"]
            out.append("- `%s`: other processes %.0f%%, steal %.0f%%%s" % (
                r["id"], 100 * bg["other_share"], 100 * bg["steal_share"],
                " (repeated)" if r.get("superseded") else ""))
    return "\n".join(out)


def sweep_section(res):
    """--sweep-peers: every configuration's sweep TPS, whether it completed, its score and
    which was chosen; the seed's configuration is marked, and Strata's chosen score over each."""
    sweeps = res.get("sweeps") or []
    if not sweeps:
        return ""
    out = []
    for m in sorted({s["mem"] for s in sweeps}):
        sw = [s for s in sweeps if s["mem"] == m]
        strata = next((s for s in sw if s["engine"] == "strata"), None)
        strata_best = next((c["score"] for c in (strata or {}).get("candidates", [])
                            if c["variant"] == strata["chosen"] and c["ok"]), None) if strata else None
        # Every (workload, threads) any candidate ran, in the order met: with
        # --sweep-configs a first candidate may have no runs at all.
        cells = []
        for s in sw:
            for c in s["candidates"]:
                for r in c.get("runs") or []:
                    if (r["workload"], r["threads"]) not in cells:
                        cells.append((r["workload"], r["threads"]))
        out.append("\n**%s** (%s s per run)\n" % (fmt_size(m), sw[0]["duration_s"]))
        out.append("| engine | configuration | %s | completed | score (geomean TPS) | Strata's chosen / this |" %
                   " | ".join("%s %d thds TPS" % (SHORT[w], t) for w, t in cells))
        out.append("|---|---|" + "---|" * len(cells) + "---|---|---|")
        for s in sw:
            for c in s["candidates"]:
                marks = []
                if c["variant"] == s["chosen"]:
                    marks.append("**chosen**")
                if c["variant"] == s["default"]:
                    marks.append("seed's" if s["engine"] != "strata" else "default")
                runs = {(r["workload"], r["threads"]): r for r in c["runs"]}
                vals = []
                for k in cells:
                    r = runs.get(k)
                    vals.append("-" if r is None else ("{:,.0f}".format(r["tps"]) if r["status"] == "ok" and r.get("tps")
                                                       else _cell(dict(r, qps=None))))
                rel = "%.2fx" % (strata_best / c["score"]) if strata_best and c["score"] and s["engine"] != "strata" else ""
                out.append("| %s | %s (`%s`)%s | %s | %s | %s | %s |" % (
                    LABEL[s["engine"]], c["label"], c["setting"], " " + ", ".join(marks) if marks else "",
                    " | ".join(vals), "yes" if c["ok"] else "no", "%.0f" % c["score"] if c["score"] else "-", rel))
    return "\n".join(out)


WRITE_COLS = [("log", "log (WAL/redo)"), ("flush", "memtable flush"), ("pages", "page writes"),
              ("compaction", "compaction")]


def engine_write_table(res):
    """Per-transaction writes as each engine counts them (SHOW GLOBAL STATUS deltas over the
    measured window), next to what the kernel saw (/proc/PID/io write_bytes)."""
    runs = [r for r in res["runs"] if r.get("engine_writes") and r.get("transactions")]
    if not runs:
        return ""
    lines = ["| run | " + " | ".join("%s KB/trx" % label for _, label in WRITE_COLS) +
             " | engine total KB/trx | user KB/trx | engine total / user | kernel write KB/trx | stall ms |",
             "|---|" + "---|" * (len(WRITE_COLS) + 5)]
    for r in runs:
        w, tx = r["engine_writes"], float(r["transactions"])
        cells = [_kb(w[k] / tx) if k in w else "-" for k, _ in WRITE_COLS]
        total = sum(w.get(k, 0) for k, _ in WRITE_COLS)
        user = w.get("user")
        kern = (r.get("per_trx") or {}).get("write_bytes")
        lines.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            r["id"], " | ".join(cells), _kb(total / tx), _kb(user / tx) if user is not None else "-",
            "%.1f" % (total / float(user)) if user else "-", _kb(kern),
            "%.0f" % (w["stall_us"] / 1000.0) if "stall_us" in w else "-"))
    return "\n".join(lines)


def sweep_tables(res):
    """Seed-001 style: per workload, at the highest thread count, metrics vs memory."""
    cfg = res["config"]
    if len(cfg["mem_limits"]) < 2:
        return ""
    t = max(cfg["threads"])
    out = []
    for w in cfg["workloads"]:
        out.append("\n**%s, %d threads**\n" % (SHORT[w], t))
        engines = [e for e in cfg["engines"] if _available(res, e)]
        out.append("| memory | " + " | ".join("%s QPS | %s write KB/trx | %s read KB/trx" % ((LABEL[e],) * 3)
                                            for e in engines) + " |")
        out.append("|---|" + "---|---|---|" * len(engines))
        for m in cfg["mem_limits"]:
            cells = []
            for e in engines:
                r = _one(res, e, m, w, t)
                pt = (r or {}).get("per_trx") or {}
                cells += [_cell(r), _kb(pt.get("write_bytes")), _kb(pt.get("read_bytes"))]
            out.append("| %s | %s |" % (fmt_size(m), " | ".join(cells)))
    return "\n".join(out)


def load_table(res):
    lines = ["| engine | status | rows | load time | datadir after load | table data | data / smallest limit "
             "| load writes | peak mem during load |", "|---|---|---|---|---|---|---|---|---|"]
    for e in res["config"]["engines"]:
        info = res["engines"].get(e, {})
        ld = info.get("load")
        if not info.get("available") or not ld:
            lines.append("| %s | n/a | | | | | | | |" % LABEL[e])
            continue
        if ld["status"] != "ok":
            lines.append("| %s | load failed: %s | | | | | | | |" % (
                LABEL[e], ld.get("error", "").splitlines()[0][:150].replace("|", "/")))
            continue
        sz = ld["size_bytes"]
        lines.append("| %s | ok | {:,} | %s | %s | %s | %.1fx | %s | %s |".format(ld["rows"]) % (
            LABEL[e], fmt_duration(ld["seconds"]), fmt_bytes(sz.get("datadir")), fmt_bytes(sz.get("tables")),
            ld["data_to_min_limit"], fmt_bytes((ld.get("io") or {}).get("write_bytes")),
            fmt_bytes(ld.get("peak_mem"))))
    return "\n".join(lines)


BINLOG_KEYS = ("log-bin", "binlog_format", "binlog-format", "sync_binlog", "sync-binlog", "server-id")


def settings_section(res):
    out = []
    for e in res["config"]["engines"]:
        info = res["engines"].get(e, {})
        if not info.get("available"):
            out.append("  - **%s**: %s" % (LABEL[e], (info.get("reason") or "not available").splitlines()[0]))
            continue
        sets = info.get("settings") or {}
        if not sets:
            continue
        mem = fmt_size(min(res["config"]["mem_limits"]))
        mem = mem if mem in sets else sorted(sets)[0]
        s = sets[mem]
        keys = [k for k in s if e == "strata" or k.startswith(BINLOG_KEYS + (
            "innodb_", "rocksdb_", "transaction", "default_storage", "skip-log-bin"))]
        pinned = (res["config"].get("configs") or {}).get(e)
        if pinned:
            out.append("  - **%s**: cache configuration `%s` pinned by `--configs`" % (LABEL[e], pinned))
        out.append("  - **%s** (at %s): %s" % (LABEL[e], mem, "; ".join(
            "`%s`" % k if s[k] is None else "`%s=%s`" % (k, s[k]) for k in keys)))
        on = sets.get(mem + " binlog on")
        if on and on is not s:
            out.append("    - binary log on: %s" % "; ".join(
                "`%s`" % k if on[k] is None else "`%s=%s`" % (k, on[k]) for k in on if k.startswith(BINLOG_KEYS)))
        extra = info.get("extra") or {}
        if extra:
            out.append("    - detected: %s" % "; ".join("%s: %s" % kv for kv in extra.items()))
    return "\n".join(out)


def summary_table(res):
    """Compact text printed at the end of a run (the QPS tables and run statuses)."""
    out = []
    modes = rounds.binlog_modes(res["runs"]) or ["off"]
    for mode in modes:
        if modes != ["off"]:
            out.append("binary log %s:" % mode)
        for w in res["config"]["workloads"]:
            out.append(qps_table(rounds.binlog_view(res, mode), w))
            out.append("")
    bad = [r for r in res["runs"] if r["status"] != "ok"]
    out.append("%d runs, %d not ok%s" % (len(res["runs"]), len(bad),
                                         "".join("\n  %s: %s %s" % (r["id"], r["status"], r.get("reason", "")[:200])
                                                 for r in bad)))
    return "\n".join(out)


def write(res, out_dir, plots):
    h, m, v, cfg = res["harness"], res["machine"], res["versions"], res["config"]
    L = []
    L.append("# sysbench OLTP: MariaDB InnoDB vs MariaDB MyRocks vs Strata\n")
    if h.get("invocations"):
        L.append("Merged from %d invocations of harness %s (%s in all); every table cell comes from one "
                 "invocation, which ran all its engines on this machine under the same memory limit:\n" % (
                     len(h["invocations"]), h["version"], fmt_duration(h["duration_s"])))
        for i in h["invocations"]:
            L.append("- `bench/oltp %s`: %s, started %s, took %s, Strata git %s%s" % (
                " ".join(i["argv"] or []), ", ".join(SHORT.get(w, w) for w in i["workloads"]),
                i["started"], fmt_duration(i["duration_s"] or 0), i["strata_git"] or "-",
                " **(interrupted)**" if i.get("interrupted") else ""))
        L.append("")
    else:
        L.append("Mode **%s**, started %s%s, harness %s, command `bench/oltp %s`.%s\n" % (
            h["mode"], h["started"], (", took %s" % fmt_duration(h["duration_s"])) if h.get("duration_s") else "",
            h["version"], " ".join(h["argv"]), " **Interrupted: partial results.**" if h.get("interrupted") else ""))
    if h.get("failures"):
        L.append("**Failures:** " + "; ".join(h["failures"]) + "\n")
    L.append("## Setup\n")
    L.append("- Machine: %s, %d CPUs, %s RAM, swap %s, kernel %s, %s; data on %s (%s)." % (
        m["cpu_model"], m["cpus"], fmt_bytes(m["mem_total_bytes"]), fmt_bytes(m.get("swap_total_bytes")),
        m["kernel"], m["os"], m["workdir_device"], m["workdir_fs"]))
    sv = ((res["engines"].get("strata") or {}).get("version") or "").strip()
    L.append("- Versions: %s; %s; Strata %sgit %s." % (v["mariadbd"], v["sysbench"], sv + ", " if sv else "",
                                                      v.get("strata_git") or "-"))
    ratio = cfg["data_bytes_nominal"] / float(min(cfg["mem_limits"]))
    L.append("- Data: sysbench %d tables x {:,} rows (nominal %s, %.1fx the smallest limit); "
             "memory limits %s (%s), enforced per server with a memory cgroup (%s) that also counts the "
             "page cache.".format(cfg["table_size"]) % (
                 cfg["tables"], fmt_bytes(cfg["data_bytes_nominal"]), ratio,
                 ", ".join(fmt_size(x) for x in cfg["mem_limits"]), ", ".join(cfg["mem_specs"]),
                 h.get("cgroup") or "none"))
    L.append("- Workloads: %s; threads %s; sysbench `%s`, other options at their defaults." % (
        ", ".join(cfg["workloads"]), ", ".join(map(str, cfg["threads"])), cfg["sysbench_options"]))
    L.append("- Load: tables prepared once per engine (sysbench prepare, 4 threads) under a %s limit, "
             "clean shutdown, the data directory kept as the template." % fmt_size(cfg.get("load_mem_limit")))
    L.append("- Each run: data directory restored from the load template before each workload; server "
             "restarted and OS caches dropped before each run; discarded warm-up (%ds; reads until the "
             "cgroup's memory stops growing, at most %ds); measured %ds (reads) / %ds (writes); then a "
             "drain watch of up to %ds for background writes." % (
                 cfg["warmup_s"], cfg["warmup_read_max_s"], cfg["duration_read_s"], cfg["duration_write_s"],
                 cfg["drain_s"]))
    L.append("- ACID: sync on every commit for all engines. **Binary log: %s.**" % cfg["binlog"])
    chosen = ["%s at %s: %s" % (LABEL[sw["engine"]], fmt_size(sw["mem"]), next(
        "%s (`%s`)" % (c["label"], c["setting"]) for c in sw["candidates"] if c["variant"] == sw["chosen"]))
        for sw in res.get("sweeps") or []]
    if chosen:
        L.append("- Cache sizes chosen by `--sweep-peers` (see Peer configurations): %s." % "; ".join(chosen))
    L.append("- Engine settings:\n" + settings_section(res) + "\n")
    L.append("## Load\n")
    L.append(load_table(res) + "\n")
    L.append("## Throughput (QPS), shaped like seed 000\n")
    L.append("Cells: queries per second over the measured window; `OOM` = the server was killed by the "
             "cgroup OOM killer; `stalled` = no transaction completed for %ds (the server thrashing at its "
             "memory limit, or the disk stalled); `-` = not run.\n" % cfg.get("stall_s", 0))
    if (cfg.get("rounds") or 1) > 1:
        L.append("**%d rounds per cell**, the engines interleaved in a rotating order (round 1 A B C, round 2 "
                 "B C A, ...), each run on a fresh copy of its template: a QPS cell is the median over the "
                 "rounds that completed; a ratio is the median of the per-round ratios (both engines from the "
                 "same round), with their min-max in parentheses; *rounds disagree* when the largest per-round "
                 "ratio exceeds the smallest by more than 10%%; *disturbed* counts rounds where a side's window "
                 "had more background load than allowed (see Background load). Every per-round figure is in "
                 "results.json (`ratios`).\n" % cfg["rounds"])
    L.append("Write workloads also get the 1-second TPS series' p1 / median (nearest rank; issue 15's target "
             "for Strata: >= 0.8 with no second at 0).\n")
    modes = rounds.binlog_modes(res["runs"]) or ["off"]
    for w in cfg["workloads"]:
        L.append("### %s (%s)\n" % (SHORT[w], w))
        L.extend(workload_section(res, w))
    pk = sweep_section(res)
    if pk:
        L.append("## Peer configurations (`--sweep-peers`)\n")
        L.append("Before the measured runs of each memory limit, every engine ran each cache configuration on "
                 "the sweep cells (a fresh copy of the template per run, the same warm-up as the measured runs). "
                 "**Best** = the highest geometric mean of TPS over the sweep runs among the configurations "
                 "whose sweep runs all completed (no OOM kill, stall or failure); a tie goes to the seed's "
                 "(InnoDB buffer pool 75%, MyRocks block cache 1/8) or Strata's default (1/4); if none completed, "
                 "the seed's/default. The measured runs above use the chosen configuration; the seed's "
                 "configurations' numbers are these sweep rows.\n")
        L.append(pk + "\n")
    bgs = background_section(res)
    if bgs:
        L.append("## Background load\n")
        L.append(bgs + "\n")
    sws = [(mode, sweep_tables(rounds.binlog_view(res, mode))) for mode in modes]
    sw = "\n".join(("\n**Binary log %s**\n" % mode if len(modes) > 1 else "") + t for mode, t in sws if t)
    if sw:
        L.append("## Memory sweep (seed 001 style)\n")
        L.append(sw + "\n")
    L.append("## Per-run details\n")
    L.append("read/write KB per transaction and CPU ms per transaction are the server process's "
             "`/proc/PID/io` read_bytes/write_bytes and `/proc/PID/stat` utime+stime over the measured "
             "window divided by sysbench's transactions. *1-s QPS CV* is the coefficient of variation of "
             "the 1-second series (jitter). *debt at end*: InnoDB dirty buffer-pool bytes, MyRocks bytes "
             "above each level's target (plus L0 at its trigger), Strata its `Strata_pending_compaction_bytes` "
             "gauge (RocksDB's estimate-pending-compaction-bytes, which also counts rewriting the next level's overlap, so it reads higher than MyRocks' column for the same tree; the bytes of the flushes and compactions "
             "that finished during the drain watch are in results.json as `drain_job_bytes`). *drain writes*: "
             "bytes the server wrote after the load stopped, until 3 quiet seconds (`+` = still writing at "
             "the cap).\n")
    L.append(detail_table(res) + "\n")
    ew = engine_write_table(res)
    if ew:
        L.append("### Writes per transaction as the engines count them\n")
        L.append("Deltas of the engines' own counters over the measured window (Strata: `Strata_wal_bytes`, "
                 "`Strata_flush_bytes`, `Strata_compaction_bytes_written`, `Strata_user_bytes_written`, "
                 "`Strata_stall_micros`; MyRocks: `rocksdb_wal_bytes`, `rocksdb_flush_write_bytes`, "
                 "`rocksdb_compact_write_bytes`, `rocksdb_bytes_written`, `rocksdb_stall_micros`; InnoDB: "
                 "`Innodb_os_log_written`, `Innodb_pages_written` x page size, doublewrite not included) per "
                 "transaction. *user*: bytes of keys and values the transactions handed to the LSM; *engine "
                 "total / user*: the write amplification over the window (LSM counters advance when a flush or "
                 "compaction finishes, so a job is counted in the window it ends in; a short run's compactions "
                 "may land in the drain). *kernel*: `/proc/PID/io` write_bytes per transaction.\n")
        L.append(ew + "\n")
    bad = [r for r in res["runs"] if r["status"] != "ok"]
    if bad:
        L.append("### Runs that did not complete cleanly\n")
        L.append("Results, not harness bugs: an OOM kill or a stall at a memory limit is what that engine "
                 "does with that much memory.\n")
        if any(r.get("retried") for r in bad):
            L.append("Quick mode retries a stalled run once (its tiny data fit in memory, so a stall there "
                     "is the machine, not the engine); the tables show the retry.\n")
        for r in bad:
            L.append("- `%s`: **%s**, peak memory %s, OOM kills %s: %s" % (
                r["id"], r["status"] + (", retried" if r.get("retried") else ""), fmt_bytes(r.get("peak_mem")), r.get("oom_kills", "-"),
                (r.get("reason") or "").splitlines()[0][:300] if r.get("reason") else ""))
            if r.get("server_log_tail"):
                L.append("\n  server exit code %s; last lines of its log:\n\n  ```\n%s\n  ```" % (
                    r.get("server_exit_code"), "\n".join("  " + ln for ln in
                                                         r["server_log_tail"].splitlines()[-15:])))
        L.append("")
    if plots:
        L.append("## Plots\n")
        for p in plots:
            L.append("![%s](%s)\n" % (os.path.splitext(p)[0], p))
    notes = res.get("notes") or []
    if notes:
        L.append("## Notes\n")
        L.extend("- " + n for n in notes)
    L.append("\nRaw sysbench output: `raw/`; server logs and configs: `logs/`; everything above: `results.json`.\n")
    path = os.path.join(out_dir, "report.md")
    with open(path, "w") as f:
        f.write("\n".join(L))
    return path
