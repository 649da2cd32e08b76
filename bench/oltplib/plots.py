"""PNG figures (matplotlib, Agg backend):
  qps_vs_threads.png       QPS vs threads, one panel per workload, a line per engine x memory
  throughput_over_time.png 1-second QPS over the measured window (jitter), highest thread count
  per_trx.png              bytes written, bytes read and CPU per transaction vs threads
  space.png                size on disk after load, and before/after every run
  memory_sweep.png         QPS and bytes per transaction vs memory limit (2+ limits only)
With --binlog both the figures show the binlog-off runs (the report's tables have both).
Returns the list of file names written.
"""

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .config import MiB, fmt_size  # noqa: E402
from .rounds import binlog_modes, binlog_view  # noqa: E402

COLORS = {"innodb": "tab:blue", "myrocks": "tab:orange", "strata": "tab:green"}
LABEL = {"innodb": "InnoDB", "myrocks": "MyRocks", "strata": "Strata"}
STYLES = ["-", "--", ":", "-.", (0, (5, 1)), (0, (1, 1)), (0, (3, 1, 1, 1)), (0, (5, 5))]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
SHORT = {"oltp_read_only": "read only", "oltp_read_write": "read/write", "oltp_write_only": "write only"}


def _ok(r):
    return r is not None and r["status"] == "ok"


def _get(res, e, m, w, t):
    for r in reversed(res["runs"]):
        if (r["engine"], r["mem"], r["workload"], r["threads"]) == (e, m, w, t):
            return r
    return None


def _engines(res):
    return [e for e in res["config"]["engines"]
            if any(r["engine"] == e for r in res["runs"])]


def _legend(ax, **kw):
    if ax.get_legend_handles_labels()[0]:
        ax.legend(**kw)


def _save(fig, out_dir, name):
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, name), dpi=100)
    plt.close(fig)
    return name


def qps_vs_threads(res, out_dir):
    cfg = res["config"]
    ws = cfg["workloads"]
    fig, axes = plt.subplots(1, len(ws), figsize=(5.2 * len(ws), 4.2), squeeze=False)
    for ax, w in zip(axes[0], ws):
        for e in _engines(res):
            for i, m in enumerate(cfg["mem_limits"]):
                xs, ys, ooms = [], [], []
                for t in cfg["threads"]:
                    r = _get(res, e, m, w, t)
                    if _ok(r):
                        xs.append(t)
                        ys.append(r["qps"])
                    elif r is not None and r["status"] in ("oom", "stalled"):
                        ooms.append((t, "OOM" if r["status"] == "oom" else "stalled"))
                if xs:
                    ax.plot(xs, ys, color=COLORS[e], linestyle=STYLES[i % len(STYLES)],
                            marker=MARKERS[i % len(MARKERS)], label="%s %s" % (LABEL[e], fmt_size(m)))
                for t, what in ooms:
                    ax.plot([t], [0], color=COLORS[e], marker="x", markersize=10)
                    ax.annotate("%s %s" % (what, fmt_size(m)), (t, 0), color=COLORS[e], fontsize=7,
                                textcoords="offset points", xytext=(3, 4 + 9 * i))
        ax.set_xscale("log", base=2)
        ax.set_xticks(cfg["threads"])
        ax.set_xticklabels([str(t) for t in cfg["threads"]])
        ax.set_xlabel("threads")
        ax.set_ylabel("QPS")
        ax.set_ylim(bottom=0)
        ax.set_title(SHORT[w])
        ax.grid(alpha=0.3)
    _legend(axes[0][0], fontsize=7)
    return _save(fig, out_dir, "qps_vs_threads.png")


def throughput_over_time(res, out_dir):
    cfg = res["config"]
    ws, ms = cfg["workloads"], cfg["mem_limits"]
    t = max(cfg["threads"])
    fig, axes = plt.subplots(len(ws), len(ms), figsize=(max(6, 4.5 * len(ms)), 2.8 * len(ws)), squeeze=False)
    for i, w in enumerate(ws):
        for j, m in enumerate(ms):
            ax = axes[i][j]
            for e in _engines(res):
                r = _get(res, e, m, w, t)
                if r and r.get("series"):
                    ax.plot([p[0] for p in r["series"]], [p[2] for p in r["series"]], color=COLORS[e],
                            linewidth=0.8, label="%s%s" % (LABEL[e], "" if _ok(r) else " (%s)" % r["status"]))
            ax.set_title("%s, %s, %d threads" % (SHORT[w], fmt_size(m), t), fontsize=9)
            ax.set_xlabel("seconds after warm-up", fontsize=8)
            ax.set_ylabel("QPS (1 s)", fontsize=8)
            ax.set_ylim(bottom=0)
            ax.grid(alpha=0.3)
            _legend(ax, fontsize=7)
    return _save(fig, out_dir, "throughput_over_time.png")


def per_trx(res, out_dir):
    cfg = res["config"]
    ws = cfg["workloads"]
    rows = [("write_bytes", "KB written / trx", 1 / 1024.0), ("read_bytes", "KB read / trx", 1 / 1024.0),
            ("cpu_ms", "CPU ms / trx", 1.0)]
    fig, axes = plt.subplots(len(rows), len(ws), figsize=(5.2 * len(ws), 3.2 * len(rows)), squeeze=False)
    for j, w in enumerate(ws):
        for i, (key, ylabel, scale) in enumerate(rows):
            ax = axes[i][j]
            for e in _engines(res):
                for k, m in enumerate(cfg["mem_limits"]):
                    pts = [(t, _get(res, e, m, w, t)) for t in cfg["threads"]]
                    pts = [(t, r["per_trx"][key] * scale) for t, r in pts if _ok(r) and r.get("per_trx")]
                    if pts:
                        ax.plot([p[0] for p in pts], [p[1] for p in pts], color=COLORS[e],
                                linestyle=STYLES[k % len(STYLES)], marker=MARKERS[k % len(MARKERS)],
                                label="%s %s" % (LABEL[e], fmt_size(m)))
            ax.set_xscale("log", base=2)
            ax.set_xticks(cfg["threads"])
            ax.set_xticklabels([str(t) for t in cfg["threads"]])
            ax.set_ylim(bottom=0)
            ax.set_ylabel(ylabel)
            ax.set_xlabel("threads")
            if i == 0:
                ax.set_title(SHORT[w])
            ax.grid(alpha=0.3)
    _legend(axes[0][0], fontsize=7)
    return _save(fig, out_dir, "per_trx.png")


def space(res, out_dir):
    """Size after load (table data + the rest of the datadir), before/after every run at the
    smallest limit, and the datadir over time in the heaviest write run (seed 001's growth)."""
    cfg = res["config"]
    engines = _engines(res)
    fig, (a1, a2, a3) = plt.subplots(1, 3, figsize=(16, 4.4), gridspec_kw={"width_ratios": [1, 2.4, 1.6]})
    xs = 0
    for e in engines:
        ld = (res["engines"].get(e) or {}).get("load") or {}
        if ld.get("status") != "ok":
            continue
        total = ld["size_bytes"]["datadir"] / MiB
        tables = ld["size_bytes"].get("tables", ld["size_bytes"]["datadir"]) / MiB
        a1.bar([xs], [tables], color=COLORS[e], label="%s table data" % LABEL[e])
        a1.bar([xs], [total - tables], bottom=[tables], color=COLORS[e], alpha=0.35,
               label="%s logs, system" % LABEL[e])
        a1.annotate("%.0f MB" % tables, (xs, tables / 2), ha="center", va="center", fontsize=8)
        a1.annotate("%.0f MB" % total, (xs, total), ha="center", va="bottom", fontsize=8)
        xs += 1
    a1.set_xticks(range(xs))
    a1.set_xticklabels([LABEL[e] for e in engines
                        if ((res["engines"].get(e) or {}).get("load") or {}).get("status") == "ok"])
    a1.set_ylabel("MB on disk")
    a1.set_title("after load", fontsize=10)
    _legend(a1, fontsize=6)
    m = min(cfg["mem_limits"])
    labels = []
    for e in engines:
        runs = [r for r in res["runs"] if r["engine"] == e and r["mem"] == m]
        pts = [(i, r["size_before"] / MiB, r["size_after"] / MiB) for i, r in enumerate(runs)
               if r.get("size_before") is not None and r.get("size_after") is not None]
        if len(runs) > len(labels):
            labels = ["%s t%d" % (SHORT[r["workload"]], r["threads"]) for r in runs]
        a2.plot([p[0] for p in pts], [p[1] for p in pts], color=COLORS[e], linestyle=":", marker=".",
                label="%s before" % LABEL[e])
        a2.plot([p[0] for p in pts], [p[2] for p in pts], color=COLORS[e], marker="o",
                label="%s after" % LABEL[e])
    a2.set_xticks(range(len(labels)))
    a2.set_xticklabels(labels, rotation=45, ha="right", fontsize=7)
    a2.set_ylabel("MB on disk (datadir)")
    a2.set_ylim(bottom=0)
    a2.set_title("before/after each run, %s limit (restored per workload)" % fmt_size(m), fontsize=10)
    a2.grid(alpha=0.3)
    _legend(a2, fontsize=7)
    w = "oltp_write_only" if "oltp_write_only" in cfg["workloads"] else cfg["workloads"][-1]
    t = max(cfg["threads"])
    for e in engines:
        r = _get(res, e, m, w, t)
        if r and r.get("size_series"):
            a3.plot([p[0] for p in r["size_series"]], [p[1] / MiB for p in r["size_series"]],
                    color=COLORS[e], label=LABEL[e])
    a3.set_xlabel("seconds after warm-up")
    a3.set_ylabel("MB on disk (datadir)")
    a3.set_ylim(bottom=0)
    a3.set_title("during %s, %d threads, %s" % (SHORT[w], t, fmt_size(m)), fontsize=10)
    a3.grid(alpha=0.3)
    _legend(a3, fontsize=7)
    return _save(fig, out_dir, "space.png")


def memory_sweep(res, out_dir):
    cfg = res["config"]
    if len(cfg["mem_limits"]) < 2:
        return None
    ws = cfg["workloads"]
    t = max(cfg["threads"])
    rows = [("qps", "QPS"), ("write_bytes", "KB written / trx"), ("read_bytes", "KB read / trx")]
    fig, axes = plt.subplots(len(rows), len(ws), figsize=(5.2 * len(ws), 3.2 * len(rows)), squeeze=False)
    for j, w in enumerate(ws):
        for i, (key, ylabel) in enumerate(rows):
            ax = axes[i][j]
            for e in _engines(res):
                pts = []
                for m in cfg["mem_limits"]:
                    r = _get(res, e, m, w, t)
                    if _ok(r):
                        v = r["qps"] if key == "qps" else (r.get("per_trx") or {}).get(key)
                        if v is not None:
                            pts.append((m / MiB, v if key == "qps" else v / 1024.0))
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], color=COLORS[e], marker="o", label=LABEL[e])
            ax.set_xlabel("memory limit (MB)")
            ax.set_ylabel(ylabel)
            ax.set_ylim(bottom=0)
            if i == 0:
                ax.set_title("%s, %d threads" % (SHORT[w], t))
            ax.grid(alpha=0.3)
            _legend(ax, fontsize=7)
    return _save(fig, out_dir, "memory_sweep.png")


def make_all(res, out_dir):
    out = []
    if not res.get("runs"):
        return out
    res = binlog_view(res, binlog_modes(res["runs"])[0])
    for fn in (qps_vs_threads, throughput_over_time, per_trx, space, memory_sweep):
        name = fn(res, out_dir)
        if name:
            out.append(name)
    return out
