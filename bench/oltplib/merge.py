"""Merging the results of several invocations into one report.

A full run at one memory limit (3 engines x 3 workloads x 2+ thread counts, writes measured
10 minutes each) takes longer than one working session on this machine, so it is run as
several invocations, typically one per workload, each with all three engines on the same
machine, under the same memory limit, with the same data and client. Every comparison in the
merged report (one workload at one thread count) still comes from a single invocation; the
merge only puts the tables side by side, keeps each invocation's command, start time, duration
and Strata git revision, and refuses inputs that do not describe the same experiment.

  bench/oltp --merge bench/results/A,bench/results/B --out bench/results/full
"""

import copy
import json
import os

from . import rounds
from .config import BINLOG_TEXT, WORKLOADS

# Settings that must agree for runs to belong in one table.
SAME = ("tables", "table_size", "mem_limits", "data_bytes_nominal", "sysbench_options")


class MergeError(Exception):
    pass


def load(d):
    path = os.path.join(d, "results.json")
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as ex:
        raise MergeError("cannot read %s: %s" % (path, ex))


def merge(parts, dirs):
    """One results dict from several; raises MergeError if they do not fit together."""
    if not parts:
        raise MergeError("nothing to merge")
    base = copy.deepcopy(parts[0])
    cfg0 = base["config"]
    for p, d in zip(parts[1:], dirs[1:]):
        for k in SAME:
            if p["config"].get(k) != cfg0.get(k):
                raise MergeError("%s: %s is %r, but %r in %s" % (
                    d, k, p["config"].get(k), cfg0.get(k), dirs[0]))
        if p["machine"].get("cpu_model") != base["machine"].get("cpu_model") or \
                p["machine"].get("cpus") != base["machine"].get("cpus"):
            raise MergeError("%s ran on another machine" % d)
    seen = {}
    runs = []
    for p, d in zip(parts, dirs):
        for r in p["runs"]:
            if r["id"] in seen:
                raise MergeError("run %s is in both %s and %s" % (r["id"], seen[r["id"]], d))
            seen[r["id"]] = d
            r = dict(r)
            r["invocation"] = d
            runs.append(r)
    base["runs"] = runs
    # Peer sweeps and their runs are per invocation (each chose its own configurations).
    base["sweeps"] = [dict(s, invocation=d) for p, d in zip(parts, dirs) for s in (p.get("sweeps") or [])]
    base["sweep_runs"] = [r for p in parts for r in (p.get("sweep_runs") or [])]
    cfg = base["config"]
    cfg["engines"] = [e for e in ("innodb", "myrocks", "strata")
                      if any(e in p["config"]["engines"] for p in parts)]
    cfg["workloads"] = [w for w in WORKLOADS if any(w in p["config"]["workloads"] for p in parts)]
    cfg["threads"] = sorted({t for p in parts for t in p["config"]["threads"]})
    cfg["rounds"] = max(p["config"].get("rounds") or 1 for p in parts)
    modes = rounds.binlog_modes(runs)
    if modes:
        cfg["binlog_modes"], cfg["binlog"] = modes, BINLOG_TEXT["/".join(modes)]
    for k in ("duration_read_s", "duration_write_s", "warmup_s", "warmup_read_max_s", "drain_s"):
        vals = sorted({p["config"].get(k) for p in parts if p["config"].get(k) is not None})
        cfg[k] = vals[0] if len(vals) == 1 else vals[-1]
        if len(vals) > 1:
            cfg[k + "_varies"] = vals
    for e in cfg["engines"]:
        infos = [p["engines"].get(e) for p in parts if p["engines"].get(e)]
        ok = [i for i in infos if i.get("available")]
        if ok:
            base["engines"][e] = copy.deepcopy(ok[0])
            base["engines"][e]["loads"] = [i.get("load") for i in ok]
    invocations = []
    for p, d in zip(parts, dirs):
        h = p["harness"]
        invocations.append({
            "dir": d, "argv": h.get("argv"), "started": h.get("started"),
            "duration_s": h.get("duration_s"), "interrupted": h.get("interrupted"),
            "failures": h.get("failures") or [], "strata_git": p["versions"].get("strata_git"),
            "workloads": p["config"]["workloads"], "threads": p["config"]["threads"],
            "engines": p["config"]["engines"]})
    h = base["harness"]
    h["mode"] = "merged"
    h["invocations"] = invocations
    h["duration_s"] = sum(i["duration_s"] or 0 for i in invocations)
    h["failures"] = [f for i in invocations for f in i["failures"]]
    h["interrupted"] = any(i["interrupted"] for i in invocations)
    revs = sorted({i["strata_git"] or "-" for i in invocations})
    base["versions"]["strata_git"] = ", ".join(revs)
    notes = list(base.get("notes") or [])
    for p in parts[1:]:
        notes += [n for n in (p.get("notes") or []) if n not in notes]
    base["notes"] = notes
    return base


def main(dirs, out_dir, plots=True):
    from . import report
    parts = [load(d) for d in dirs]
    res = merge(parts, dirs)
    res["ratios"] = rounds.all_ratio_summaries(res)
    os.makedirs(out_dir, exist_ok=True)
    res["harness"]["out_dir"] = out_dir
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump(res, f, indent=1, default=str)
    made = []
    if plots:
        try:
            from . import plots as plotmod
            made = plotmod.make_all(res, out_dir)
        except Exception as ex:  # plots must never lose the results
            print("WARNING: plots failed: %r" % ex, flush=True)
    path = report.write(res, out_dir, made)
    print("merged %d invocations (%d runs) into %s" % (len(parts), len(res["runs"]), path), flush=True)
    print(report.summary_table(res), flush=True)
    return 0
