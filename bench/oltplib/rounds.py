"""Robust ratios on a shared machine: the arithmetic of rounds, background load, the 1-second
series and the peer-configuration sweep (pure functions, tested by bench/tests/test_rounds.py).

* Rounds (`--rounds N`): every cell (memory limit x workload x threads) runs each engine once
  per round, the engine order rotating (A B C, B C A, C A B, ...). A ratio is computed per
  round (the two engines' QPS from the same round, minutes apart) and reported as the median
  over rounds with its spread (min-max of the per-round ratios); the rounds *disagree* when
  the largest per-round ratio exceeds the smallest by more than 10%.
* Background load: over each measured window, the machine's busy CPU (/proc/stat: user, nice,
  system, irq, softirq) minus the CPU of the server under test (/proc/PID/stat), of sysbench
  (its rusage, as a reaped child) and of the harness itself, and the steal time; both as a
  share of the machine's capacity (CPUs x wall seconds). A window whose background (other +
  steal) exceeds `--max-background` is *disturbed*; `--repeat-disturbed` runs it once more.
* 1-second series: median, p1 and p5 of the per-second TPS (nearest rank), the number of
  seconds without a commit, and p1/median (issue 15's target for writes: >= 0.8).
* Sweep (`--sweep-peers`): a configuration qualifies when every sweep run completed (status
  ok); the best is the one with the highest geometric mean of TPS over the sweep cells
  (workloads x threads); ties go to the one listed first (the seed's/default).
"""

import math
import os
import statistics

DISAGREE = 0.10

# /proc/stat "cpu" columns. guest and guest_nice are already counted in user and nice.
STAT_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal", "guest", "guest_nice")
BUSY_FIELDS = ("user", "nice", "system", "irq", "softirq")


def percentile(values, p):
    """Nearest-rank percentile: the smallest value with at least p% of the values at or
    below it (p1 of fewer than 100 values is the minimum). None for no values."""
    if not values:
        return None
    s = sorted(values)
    k = max(1, int(math.ceil(p / 100.0 * len(s))))
    return s[min(k, len(s)) - 1]


def series_stats(tps):
    """Summary of a 1-second TPS series: median, p1, p5, min, seconds with no commit and
    p1/median; None for an empty series."""
    if not tps:
        return None
    med = statistics.median(tps)
    p1 = percentile(tps, 1)
    return {"n": len(tps), "median": med, "p1": p1, "p5": percentile(tps, 5), "min": min(tps),
            "zero_s": sum(1 for x in tps if x <= 0),
            "p1_over_median": (p1 / med) if med else None}


def read_cpu_stat(path="/proc/stat"):
    """The machine-wide `cpu` line of /proc/stat as {field: jiffies}, or None."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith("cpu "):
                    vals = [int(x) for x in line.split()[1:]]
                    return dict(zip(STAT_FIELDS, vals + [0] * (len(STAT_FIELDS) - len(vals))))
    except (OSError, ValueError):
        pass
    return None


def background(stat0, stat1, under_test_cpu_s, wall_s, ncpu, clk_tck=None, threshold=None):
    """Background load over a window from two read_cpu_stat() samples.

    under_test_cpu_s: CPU seconds of the processes under test (server, sysbench, harness)
    over the same window. Returns CPU seconds and shares of the machine's capacity
    (ncpu x wall_s): `other` (busy CPU not taken by the processes under test), `steal`, and
    `background` = other + steal; `disturbed` when threshold is given and background
    exceeds it. None if a sample is missing or the window is empty."""
    if not stat0 or not stat1 or not wall_s or wall_s <= 0 or not ncpu:
        return None
    clk = float(clk_tck or os.sysconf("SC_CLK_TCK"))
    busy = sum(stat1[k] - stat0[k] for k in BUSY_FIELDS) / clk
    steal = (stat1["steal"] - stat0["steal"]) / clk
    other = max(0.0, busy - under_test_cpu_s)
    cap = ncpu * wall_s
    out = {"wall_s": round(wall_s, 2), "cpus": ncpu, "busy_cpu_s": round(busy, 2),
           "under_test_cpu_s": round(under_test_cpu_s, 2), "other_cpu_s": round(other, 2),
           "steal_cpu_s": round(steal, 2), "other_share": round(other / cap, 4),
           "steal_share": round(steal / cap, 4), "background_share": round((other + steal) / cap, 4)}
    if threshold is not None:
        out["threshold"] = threshold
        out["disturbed"] = out["background_share"] > threshold
    return out


def rotation(engines, rnd):
    """Engine order of round rnd (1-based): round 1 A B C, round 2 B C A, round 3 C A B."""
    if not engines:
        return []
    k = (rnd - 1) % len(engines)
    return list(engines[k:]) + list(engines[:k])


def counted(r):
    """A run that stands for its round: not replaced by a retry or a repeat."""
    return not r.get("retried") and not r.get("superseded")


def round_runs(runs, engine, mem, workload, threads):
    """{round: run} for one engine in one cell (the last counted run of each round; runs
    without a round, from a harness without rounds, are round 1)."""
    out = {}
    for r in runs:
        if (r["engine"], r["mem"], r["workload"], r["threads"]) == (engine, mem, workload, threads) and counted(r):
            out[r.get("round") or 1] = r
    return out


def _disturbed(r):
    return bool((r.get("background") or {}).get("disturbed"))


def spread_summary(ratios):
    """Median, min, max of per-round ratios and whether they disagree by more than 10%."""
    if not ratios:
        return None
    lo, hi = min(ratios), max(ratios)
    return {"median": statistics.median(ratios), "min": lo, "max": hi,
            "disagree": lo > 0 and hi > (1 + DISAGREE) * lo}


def ratio_summary(runs, num, den, mem, workload, threads):
    """The num/den QPS ratio of one cell over rounds: per-round ratios (rounds where both
    ran ok), their median and spread, disagreement, disturbed rounds, and the rounds where a
    side did not complete (with its status)."""
    return _pair_summary(round_runs(runs, num, mem, workload, threads),
                         round_runs(runs, den, mem, workload, threads), num, den, mem, workload, threads)


def binlog_mode(r):
    """A run's binary log mode; runs of harnesses before --binlog ran with it off."""
    return r.get("binlog") or "off"


def binlog_modes(runs):
    """The binary log modes present in these runs, off first."""
    return [m for m in ("off", "on") if any(binlog_mode(r) == m for r in runs)]


def with_binlog(runs, mode):
    return [r for r in runs if binlog_mode(r) == mode]


def binlog_view(res, mode):
    """The results with only the runs of one binary log mode (for the per-mode tables)."""
    return dict(res, runs=with_binlog(res["runs"], mode))


def binlog_summary(runs, engine, mem, workload, threads):
    """One engine's binlog-on / binlog-off QPS ratio in one cell over rounds (with --binlog
    both, a round runs both modes of every engine), shaped like ratio_summary."""
    out = _pair_summary(round_runs(with_binlog(runs, "on"), engine, mem, workload, threads),
                        round_runs(with_binlog(runs, "off"), engine, mem, workload, threads),
                        engine, engine, mem, workload, threads)
    if out:
        out["binlog"] = "on/off"
    return out


def _pair_summary(a, b, num, den, mem, workload, threads):
    """Per-round ratios of two {round: run} maps (a over b) and their summary."""
    if not a or not b:
        return None
    per, failed = [], []
    for rnd in sorted(set(a) | set(b)):
        ra, rb = a.get(rnd), b.get(rnd)
        bad = [(e, r["status"]) for e, r in ((num, ra), (den, rb)) if r is not None and r["status"] != "ok"]
        if ra is None or rb is None or bad:
            failed.append({"round": rnd, "failed": bad or [(e, "missing") for e, r in ((num, ra), (den, rb))
                                                          if r is None]})
            continue
        if not rb.get("qps"):
            continue
        per.append({"round": rnd, "ratio": ra["qps"] / rb["qps"],
                    "disturbed": _disturbed(ra) or _disturbed(rb)})
    out = {"num": num, "den": den, "mem": mem, "workload": workload, "threads": threads,
           "per_round": per, "failed_rounds": failed}
    s = spread_summary([p["ratio"] for p in per])
    if s:
        out.update(s)
    out["disturbed_rounds"] = [p["round"] for p in per if p["disturbed"]]
    return out


PAIRS = (("strata", "innodb"), ("strata", "myrocks"), ("myrocks", "innodb"))


def all_ratio_summaries(res):
    """Every cell's ratio summary for results.json: across engines within each binary log
    mode (`binlog` off or on), and each engine's binlog on/off."""
    cfg = res["config"]
    out = []
    modes = binlog_modes(res["runs"])
    cells = [(m, w, t) for m in cfg["mem_limits"] for w in cfg["workloads"] for t in cfg["threads"]]
    for mode in modes:
        runs = with_binlog(res["runs"], mode)
        for num, den in PAIRS:
            if num not in cfg["engines"] or den not in cfg["engines"]:
                continue
            for m, w, t in cells:
                s = ratio_summary(runs, num, den, m, w, t)
                if s:
                    s["binlog"] = mode
                    out.append(s)
    if len(modes) == 2:
        for e in cfg["engines"]:
            for m, w, t in cells:
                s = binlog_summary(res["runs"], e, m, w, t)
                if s:
                    out.append(s)
    return out


def geomean(values):
    if not values or any(v is None or v <= 0 for v in values):
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def best_config(candidates):
    """candidates: [{"variant": name, "runs": [{"status", "tps"}, ...]}, ...] in preference
    order (the seed's or default configuration first). Sets each candidate's "ok" (every run
    completed) and "score" (geometric mean of TPS, None unless ok) and returns the name of
    the best qualifying one, or None when none completed."""
    best, best_score = None, None
    for c in candidates:
        runs = c.get("runs") or []
        c["ok"] = bool(runs) and all(r.get("status") == "ok" and r.get("tps") for r in runs)
        c["score"] = geomean([r["tps"] for r in runs]) if c["ok"] else None
        if c["ok"] and (best_score is None or c["score"] > best_score):
            best, best_score = c["variant"], c["score"]
    return best
