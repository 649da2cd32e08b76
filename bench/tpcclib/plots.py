"""bench/tpcc's figures (matplotlib, Agg, colours as oltplib.plots):
  tpcc_throughput.png   the 1-second tps series of every engine, one panel per memory limit x
                        cell (threads, isolation), every round (later rounds darker)
  tpcc_datadir.png      datadir size over the measured window (seed 001's growth chart), the
                        same panels, the last round
  tpcc_memory_sweep.png tps (median over rounds), KB read, KB written and CPU ms per
                        transaction against the memory limit (2+ limits only)
Returns the names written.
"""

import os
import statistics

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from oltplib.plots import COLORS, LABEL  # noqa: E402

from .plan import engine_iso  # noqa: E402
from .report import run_ok  # noqa: E402

MiB = 1024 * 1024


def _cells(runs):
    return sorted({(r["threads"], r["iso"]) for r in runs if not r["purge"] and r["engine"] != "myrocks"}) \
        or sorted({(r["threads"], r["iso"]) for r in runs if not r["purge"]})


def _grid(runs, engines, out_dir, name, ylabel, draw):
    """One panel per memory limit x cell; draw(ax, engine, [runs of that engine in the
    panel]) plots an engine's lines."""
    mems = sorted({r["mem"] for r in runs if not r["purge"]})
    cells = _cells(runs)
    if not mems or not cells:
        return None
    fig, axes = plt.subplots(len(mems), len(cells), figsize=(max(6, 5.5 * len(cells)), 3.0 * len(mems)),
                             squeeze=False)
    for i, m in enumerate(mems):
        for j, (th, iso) in enumerate(cells):
            ax = axes[i][j]
            for e in engines:
                draw(ax, e, [r for r in runs if not r["purge"] and r["engine"] == e and r["mem"] == m
                             and r["threads"] == th and r["iso"] == engine_iso(e, iso)])
            ax.set_title("%d MB, %d threads, %s (MyRocks RC)" % (m // MiB, th, iso), fontsize=9)
            ax.set_xlabel("seconds after warm-up", fontsize=8)
            ax.set_ylabel(ylabel, fontsize=8)
            ax.set_ylim(bottom=0)
            ax.grid(alpha=0.3)
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=6, ncol=len(engines))
    return _save(fig, out_dir, name)


def throughput(runs, engines, out_dir):
    rounds = max([r["round"] for r in runs] + [1])

    def draw(ax, e, rs):
        for r in rs:
            if r.get("per_second"):
                label = "%s r%d%s" % (LABEL[e], r["round"], "" if run_ok(r) else " (failed)")
                ax.plot(range(1, len(r["per_second"]) + 1), r["per_second"], color=COLORS[e],
                        alpha=0.35 + 0.65 * r["round"] / float(rounds), linewidth=0.8, label=label)
    return _grid(runs, engines, out_dir, "tpcc_throughput.png", "tps (1 s)", draw)


def datadir(runs, engines, out_dir):
    if not any(r.get("size_series") for r in runs):
        return None

    def draw(ax, e, rs):
        rs = [r for r in rs if r.get("size_series")]
        if rs:
            ser = rs[-1]["size_series"]
            ax.plot([p[0] for p in ser], [p[1] / MiB for p in ser], color=COLORS[e], marker=".",
                    label="%s r%d" % (LABEL[e], rs[-1]["round"]))
    return _grid(runs, engines, out_dir, "tpcc_datadir.png", "datadir MB", draw)


def memory_sweep(runs, engines, out_dir):
    mems = sorted({r["mem"] for r in runs if not r["purge"]})
    cells = _cells(runs)
    if len(mems) < 2 or not cells:
        return None
    th, iso = cells[-1]
    rows = [("tps", "tps", 1.0), ("read_kb_per_trx", "KB read / trx", 1.0),
            ("write_kb_per_trx", "KB written / trx", 1.0), ("cpu_ms_per_trx", "CPU ms / trx", 1.0)]
    fig, axes = plt.subplots(1, len(rows), figsize=(4.5 * len(rows), 3.6), squeeze=False)
    for ax, (key, ylabel, scale) in zip(axes[0], rows):
        for e in engines:
            pts = []
            for m in mems:
                vs = [r.get(key) for r in runs if not r["purge"] and r["engine"] == e and r["mem"] == m
                      and r["threads"] == th and r["iso"] == engine_iso(e, iso) and run_ok(r)
                      and r.get(key) is not None]
                if vs:
                    pts.append((m / MiB, statistics.median(vs) * scale))
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], color=COLORS[e], marker="o",
                        label=LABEL[e])
        ax.set_xlabel("memory limit (MB)")
        ax.set_ylabel(ylabel)
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.set_title("%d threads, %s" % (th, iso), fontsize=9)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    return _save(fig, out_dir, "tpcc_memory_sweep.png")


def _save(fig, out_dir, name):
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, name), dpi=100)
    plt.close(fig)
    return name


def make_all(runs, engines, out_dir):
    return [n for n in (throughput(runs, engines, out_dir), datadir(runs, engines, out_dir),
                        memory_sweep(runs, engines, out_dir)) if n]
