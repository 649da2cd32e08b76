"""Pure summaries for bench/tpcc (unit-tested in bench/tests/test_tpcc.py): percentiles of
the 1-second throughput series, warehouse count from a data-size target, ratios over
interleaved rounds (median and spread), and the estimate of a plan's duration.
"""

import math
import statistics

MiB = 1024 * 1024

# Table data on disk per warehouse (sysbench-tpcc, 1 table set, after the load and the
# engine's settling), measured here on 2026-11-26 as the slope between 1, 2 and 5 warehouses
# (InnoDB 154/250/535 MB, MyRocks 28/52/120 MB, Strata 28/31/73 MB; the first warehouse
# also carries the 100,000-row item table). InnoDB is the nominal size: `--data` and the
# memory limits given as data/X are in InnoDB bytes, as bench/oltp's are.
WAREHOUSE_BYTES = {"innodb": 96 * MiB, "myrocks": 23 * MiB, "strata": 14 * MiB}
# sysbench-tpcc prepare seconds per warehouse here (5 warehouses: InnoDB 58 s, MyRocks 70 s,
# Strata 92 s; 10 warehouses: InnoDB 60 s, Strata 89 s), an upper bound for --dry-run.
LOAD_S_PER_WAREHOUSE = {"innodb": 7.0, "myrocks": 10.0, "strata": 12.0}


def percentile(values, p):
    """The p-th percentile (0-100) by linear interpolation between closest ranks (numpy's
    default); None for an empty list."""
    xs = sorted(values)
    if not xs:
        return None
    k = (len(xs) - 1) * p / 100.0
    lo, hi = int(math.floor(k)), int(math.ceil(k))
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def series_summary(series):
    """p1, p5, median, min, max of a 1-second tps series, the number of zero seconds and
    p1/median (issue 15's jitter target: >= 0.8)."""
    if not series:
        return {}
    med = statistics.median(series)
    p1 = percentile(series, 1)
    return {"p1": p1, "p5": percentile(series, 5), "median": med, "min": min(series),
            "max": max(series), "zero_seconds": sum(1 for x in series if x == 0),
            "p1_over_median": (p1 / med) if med else None}


def warehouses_for(data_bytes, per_warehouse=WAREHOUSE_BYTES["innodb"]):
    """Warehouses whose data (InnoDB-sized) is closest to data_bytes, at least 1."""
    return max(1, int(round(data_bytes / float(per_warehouse))))


def mem_limits(specs, data_bytes):
    """'600M' or 'data/X' items -> bytes (data/X: data_bytes / X, rounded down to a MiB)."""
    out = []
    for s in specs:
        s = s.strip()
        if s.startswith("data/"):
            out.append(int(data_bytes / float(s[5:])) // MiB * MiB)
        else:
            out.append(parse_size(s))
    return out


def parse_size(text):
    """'600M' -> bytes (K, M, G, T binary; a plain number is bytes). ValueError otherwise."""
    t = text.strip().upper().rstrip("B").rstrip("I")
    mult = {"K": 1024, "M": MiB, "G": 1024 * MiB, "T": 1024 * 1024 * MiB}
    if t and t[-1] in mult:
        return int(float(t[:-1]) * mult[t[-1]])
    return int(float(t))


def ratio_summary(nums, dens):
    """Per-round ratios nums[i]/dens[i] (pairs with a zero or missing side are skipped) ->
    {"ratios", "median", "min", "max", "disagree"} where disagree means the rounds differ by
    more than 10% (max > 1.1 min); {} when no round has both sides."""
    rs = [n / d for n, d in zip(nums, dens) if n is not None and d]
    if not rs:
        return {}
    return {"ratios": rs, "median": statistics.median(rs), "min": min(rs), "max": max(rs),
            "disagree": max(rs) > 1.1 * min(rs)}


def median_spread(values):
    """{"median", "min", "max"} of a list of numbers (None ignored); {} if empty."""
    xs = [v for v in values if v is not None]
    if not xs:
        return {}
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs)}


def estimate_seconds(plan, warehouses, warmup, duration, engines):
    """Upper-bound wall time of a plan: per engine the load, per run restore + start +
    warm-up + measured window + check + stop. `plan` is a list of run specs (dicts with
    "engine")."""
    total = 0.0
    for e in engines:
        total += 30 + warehouses * LOAD_S_PER_WAREHOUSE.get(e, 10.0)
    for r in plan:
        copy = warehouses * WAREHOUSE_BYTES.get(r["engine"], 100 * MiB) / (150.0 * MiB)
        check = 3 + 1.5 * warehouses
        total += copy + 16 + warmup + duration + check
    return total
