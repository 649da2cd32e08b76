"""Checks the arithmetic of robust ratios (oltplib.rounds) and its place in the plan and the
report: percentiles of the 1-second series, background load, engine rotation, per-round
ratios with median/spread/disagreement, and the choice of a peer's best configuration.

  python3 bench/tests/test_rounds.py
"""
import os
import sys
import unittest

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, BENCH)

from oltplib import config, report, rounds  # noqa: E402
from oltplib.config import MiB  # noqa: E402

M = 600 * MiB
W = "oltp_write_only"


def run(engine, rnd, qps, status="ok", **kw):
    r = {"id": "%s-r%d" % (engine, rnd), "engine": engine, "mem": M, "workload": W, "threads": 8,
         "round": rnd, "status": status, "qps": qps if status == "ok" else None}
    r.update(kw)
    return r


def res_with(runs, engines=("innodb", "strata"), threads=(8,), rounds_n=3):
    return {"runs": runs, "engines": {e: {"available": True, "load": {"status": "ok"}} for e in engines},
            "config": {"engines": list(engines), "mem_limits": [M], "workloads": [W], "threads": list(threads),
                       "rounds": rounds_n}}


class PercentileTest(unittest.TestCase):
    def test_nearest_rank(self):
        vals = list(range(1, 101))  # 1..100
        self.assertEqual(rounds.percentile(vals, 1), 1)
        self.assertEqual(rounds.percentile(vals, 5), 5)
        self.assertEqual(rounds.percentile(vals, 50), 50)
        self.assertEqual(rounds.percentile(list(range(1, 201)), 1), 2)
        self.assertEqual(rounds.percentile(list(range(1, 151)), 1), 2)  # rank ceil(1.5) = 2
        self.assertEqual(rounds.percentile(list(range(1, 31)), 5), 2)
        self.assertEqual(rounds.percentile([7, 3, 9], 1), 3)  # fewer than 100 values: the minimum
        self.assertIsNone(rounds.percentile([], 1))

    def test_series_stats_counts_zero_seconds(self):
        tps = [100.0] * 97 + [0.0, 0.0, 50.0]
        st = rounds.series_stats(tps)
        self.assertEqual(st["median"], 100.0)
        self.assertEqual(st["p1"], 0.0)
        self.assertEqual(st["p5"], 100.0)
        self.assertEqual(st["zero_s"], 2)
        self.assertEqual(st["p1_over_median"], 0.0)
        st = rounds.series_stats([100.0] * 99 + [85.0])
        self.assertAlmostEqual(st["p1_over_median"], 0.85)
        self.assertEqual(st["zero_s"], 0)
        self.assertIsNone(rounds.series_stats([]))


def stat(**kw):
    d = dict.fromkeys(rounds.STAT_FIELDS, 0)
    d.update(kw)
    return d


class BackgroundTest(unittest.TestCase):
    def test_other_processes_and_steal(self):
        s0 = stat(user=1000, system=500, idle=10, steal=3)
        # 10 s on 2 CPUs at 100 ticks/s: 1,500 busy ticks = 15 CPU s, 100 stolen ticks = 1 s.
        s1 = stat(user=2000, system=1000, idle=300, steal=103)
        bg = rounds.background(s0, s1, under_test_cpu_s=12.0, wall_s=10.0, ncpu=2, clk_tck=100, threshold=0.15)
        self.assertAlmostEqual(bg["busy_cpu_s"], 15.0)
        self.assertAlmostEqual(bg["other_cpu_s"], 3.0)
        self.assertAlmostEqual(bg["other_share"], 0.15)
        self.assertAlmostEqual(bg["steal_share"], 0.05)
        self.assertAlmostEqual(bg["background_share"], 0.20)
        self.assertTrue(bg["disturbed"])
        bg = rounds.background(s0, s1, 12.0, 10.0, 2, clk_tck=100, threshold=0.25)
        self.assertFalse(bg["disturbed"])

    def test_idle_and_iowait_are_not_busy_and_under_test_is_capped(self):
        s0, s1 = stat(), stat(user=100, idle=900, iowait=500, guest=50)
        bg = rounds.background(s0, s1, under_test_cpu_s=5.0, wall_s=10.0, ncpu=2, clk_tck=100)
        self.assertAlmostEqual(bg["busy_cpu_s"], 1.0)  # guest is inside user already
        self.assertEqual(bg["other_cpu_s"], 0.0)
        self.assertNotIn("disturbed", bg)
        self.assertIsNone(rounds.background(None, s1, 1.0, 10.0, 2))
        self.assertIsNone(rounds.background(s0, s1, 1.0, 0, 2))

    def test_reads_proc_stat(self):
        st = rounds.read_cpu_stat()
        self.assertIsNotNone(st)
        self.assertGreater(st["user"] + st["system"] + st["idle"], 0)


class RotationTest(unittest.TestCase):
    def test_every_engine_leads_once_per_cycle(self):
        e = ["innodb", "myrocks", "strata"]
        self.assertEqual(rounds.rotation(e, 1), e)
        self.assertEqual(rounds.rotation(e, 2), ["myrocks", "strata", "innodb"])
        self.assertEqual(rounds.rotation(e, 3), ["strata", "innodb", "myrocks"])
        self.assertEqual(rounds.rotation(e, 4), e)

    def test_plan_interleaves_rounds_with_unique_ids(self):
        cfg = config.from_args(["--quick", "--no-build"])
        self.assertEqual(cfg.rounds, 2)
        plan = cfg.plan(["innodb", "myrocks", "strata"])
        self.assertEqual(len(plan), 2 * 3 * 2 * 3)  # threads x workloads x rounds x engines
        self.assertEqual([s.engine for s in plan[:6]], ["innodb", "myrocks", "strata", "myrocks", "strata", "innodb"])
        self.assertEqual([s.round for s in plan[:6]], [1, 1, 1, 2, 2, 2])
        ids = [s.run_id() for s in plan]
        self.assertEqual(len(ids), len(set(ids)))
        self.assertTrue(ids[3].endswith("-r2"))

    def test_rounds_split_the_full_windows_and_one_round_keeps_the_old_order(self):
        cfg = config.from_args(["--rounds", "3", "--no-build"])
        self.assertEqual((cfg.duration_read, cfg.duration_write), (100, 200))
        cfg = config.from_args(["--rounds", "3", "--duration-write", "600", "--no-build"])
        self.assertEqual(cfg.duration_write, 600)
        cfg = config.from_args(["--no-build"])
        self.assertEqual(cfg.rounds, 1)
        plan = cfg.plan(["innodb", "strata"])
        self.assertEqual({s.engine for s in plan[:len(plan) // 2]}, {"innodb"})
        self.assertEqual(plan[0].run_id(), "innodb-600M-ro-t8")

    def test_sweep_configs_restrict_the_swept_variants(self):
        cfg = config.from_args(["--quick", "--sweep-peers", "--sweep-workloads", "rw", "--no-build",
                                "--sweep-configs", "myrocks=bc1_2|dr1_2"])
        self.assertEqual([s.variant for s in cfg.sweep_plan("myrocks", cfg.mems[0])], ["bc1_2", "dr1_2"])
        self.assertEqual(len(cfg.sweep_plan("innodb", cfg.mems[0])), 3)  # not named: all of InnoDB's
        for bad in (["--sweep-configs", "myrocks=bp60"], ["--sweep-configs", "myrocks=bc1_2"]):
            with self.assertRaises(SystemExit):  # unknown name; without --sweep-peers
                config.from_args(["--quick", "--no-build"] + (["--sweep-peers"] if "bp60" in bad[1] else []) + bad)

    def test_sweep_plan_and_estimate(self):
        cfg = config.from_args(["--quick", "--sweep-peers", "--sweep-workloads", "rw", "--no-build"])
        sp = cfg.sweep_plan("innodb", cfg.mems[0])
        self.assertEqual([s.variant for s in sp], ["bp75", "bp60", "bp50"])
        self.assertEqual({(s.workload, s.threads) for s in sp}, {("oltp_read_write", 16)})
        self.assertEqual(sp[0].run_id(), "innodb-256M-rw-t16-sweep-bp75")
        plain = config.from_args(["--quick", "--no-build"])
        self.assertGreater(cfg.estimate_seconds(), plain.estimate_seconds())


class RatioSummaryTest(unittest.TestCase):
    def test_median_spread_and_agreement(self):
        runs = [run("strata", 1, 1200), run("innodb", 1, 1000),
                run("strata", 2, 1300), run("innodb", 2, 1000),
                run("strata", 3, 1320), run("innodb", 3, 1200)]
        s = rounds.ratio_summary(runs, "strata", "innodb", M, W, 8)
        self.assertAlmostEqual(s["median"], 1.2)
        self.assertAlmostEqual(s["min"], 1.1)
        self.assertAlmostEqual(s["max"], 1.3)
        self.assertTrue(s["disagree"])  # 1.3 > 1.1 x 1.1
        self.assertEqual(s["failed_rounds"], [])
        cell = report._ratio_rounds(res_with(runs), "strata", "innodb", M, W, 8)
        self.assertEqual(cell, "1.20x (1.10-1.30) **rounds disagree >10%**")

    def test_ten_percent_apart_is_not_disagreement(self):
        runs = [run("strata", 1, 1000), run("innodb", 1, 1000), run("strata", 2, 1100), run("innodb", 2, 1000)]
        s = rounds.ratio_summary(runs, "strata", "innodb", M, W, 8)
        self.assertFalse(s["disagree"])
        runs[2]["qps"] = 1111
        self.assertTrue(rounds.ratio_summary(runs, "strata", "innodb", M, W, 8)["disagree"])

    def test_superseded_and_failed_rounds(self):
        disturbed = {"disturbed": True, "background_share": 0.4, "other_share": 0.4, "steal_share": 0.0}
        runs = [run("strata", 1, 5000, superseded=True, background=disturbed), run("strata", 1, 1500),
                run("innodb", 1, 1000),
                run("strata", 2, 1400, background=disturbed), run("innodb", 2, 1000),
                run("strata", 3, 1500), run("innodb", 3, None, status="oom")]
        s = rounds.ratio_summary(runs, "strata", "innodb", M, W, 8)
        self.assertEqual([p["ratio"] for p in s["per_round"]], [1.5, 1.4])
        self.assertEqual(s["disturbed_rounds"], [2])
        self.assertEqual(s["failed_rounds"], [{"round": 3, "failed": [("innodb", "oom")]}])
        self.assertAlmostEqual(s["median"], 1.45)
        cell = report._ratio_rounds(res_with(runs), "strata", "innodb", M, W, 8)
        self.assertEqual(cell, "1.45x (1.40-1.50) 1 disturbed, 1 of 3 rounds failed")
        # The QPS cell: median of the completed rounds, and the failed one named.
        self.assertEqual(report._cell_rounds(res_with(runs), "innodb", M, W, 8), "1,000 (1 of 3 rounds: OOM)")
        self.assertEqual(report._cell_rounds(res_with(runs), "strata", M, W, 8), "1,500")

    def test_one_round_keeps_the_old_cell(self):
        runs = [run("strata", 1, 1500), run("innodb", 1, 1000)]
        self.assertEqual(report._ratio_rounds(res_with(runs, rounds_n=1), "strata", "innodb", M, W, 8), "1.50x")
        runs = [run("strata", 1, 1500), run("innodb", 1, None, status="stalled")]
        self.assertEqual(report._ratio_rounds(res_with(runs, rounds_n=1), "strata", "innodb", M, W, 8),
                         "- (InnoDB stalled)")

    def test_results_json_summaries(self):
        runs = [run("strata", 1, 1200), run("innodb", 1, 1000), run("strata", 2, 1100), run("innodb", 2, 1000)]
        out = rounds.all_ratio_summaries(res_with(runs))
        self.assertEqual(len(out), 1)
        self.assertEqual((out[0]["num"], out[0]["den"]), ("strata", "innodb"))
        self.assertAlmostEqual(out[0]["median"], 1.15)


class StabilityTableTest(unittest.TestCase):
    def test_strata_below_target_is_marked(self):
        good = rounds.series_stats([100.0] * 99 + [90.0])
        bad = rounds.series_stats([100.0] * 98 + [0.0, 50.0])
        runs = [run("strata", 1, 1000, tps_1s=good), run("strata", 2, 1000, tps_1s=bad),
                run("innodb", 1, 900, tps_1s=bad), run("innodb", 2, 900, tps_1s=bad)]
        rows = report.stability_table(res_with(runs), W).splitlines()
        strata = next(r for r in rows if r.startswith("| Strata"))
        innodb = next(r for r in rows if r.startswith("| InnoDB"))
        self.assertIn("**0.45 (worst 0.00), 1 s at 0**", strata)
        self.assertIn("0.00 (worst 0.00), 2 s at 0", innodb)
        self.assertNotIn("**", innodb)
        runs = [run("strata", 1, 1000, tps_1s=good), run("strata", 2, 1000, tps_1s=good)]
        self.assertIn("| 0.90 (worst 0.90) |", report.stability_table(res_with(runs, ("strata",)), W))


class BestConfigTest(unittest.TestCase):
    def cand(self, name, *runs):
        return {"variant": name, "runs": [{"status": st, "tps": tps} for st, tps in runs]}

    def test_best_that_completes(self):
        cands = [self.cand("bp75", ("ok", 900), ("oom", None)),
                 self.cand("bp60", ("ok", 800), ("ok", 500)),
                 self.cand("bp50", ("ok", 700), ("ok", 600))]
        self.assertEqual(rounds.best_config(cands), "bp50")  # geomean 648 > 632; bp75 did not complete
        self.assertFalse(cands[0]["ok"])
        self.assertIsNone(cands[0]["score"])
        self.assertAlmostEqual(cands[1]["score"], 632.455, places=2)

    def test_tie_goes_to_the_first_and_none_completing_is_none(self):
        cands = [self.cand("bc1_8", ("ok", 500)), self.cand("bc1_4", ("ok", 500))]
        self.assertEqual(rounds.best_config(cands), "bc1_8")
        cands = [self.cand("bc1_8", ("stalled", 0)), self.cand("bc1_4", ("ok", 0))]
        self.assertIsNone(rounds.best_config(cands))
        self.assertIsNone(rounds.best_config([self.cand("x")]))

    def test_engine_settings_follow_the_chosen_configuration(self):
        from oltplib import engines
        cfg = config.from_args(["--quick", "--no-build"])
        inno, rocks, strata = engines.make(cfg, "/tmp/oltp-test-unused", lambda: 1)
        lim = 600 * MiB
        self.assertEqual(inno.settings(lim)["innodb_buffer_pool_size"], "450M")  # the seed's 75%
        inno.variant[lim] = "bp60"
        self.assertEqual(inno.settings(lim)["innodb_buffer_pool_size"], "360M")
        self.assertEqual(rocks.settings(lim)["rocksdb_block_cache_size"], "75M")
        rocks.variant[lim] = "bc1_2"
        self.assertEqual(rocks.settings(lim)["rocksdb_block_cache_size"], "300M")
        self.assertEqual(strata.settings(lim)["block-cache-size"], "150M")
        strata.variant[lim] = "bc1_8"
        self.assertEqual(strata.settings(lim)["block-cache-size"], "75M")
        self.assertNotIn("use-direct-reads", strata.settings(lim))
        self.assertEqual(rocks.settings(lim)["rocksdb_use_direct_reads"], "OFF")
        # Direct-read configurations: O_DIRECT table reads and the larger block cache.
        strata.variant[lim] = "dr3_5"
        self.assertEqual(strata.settings(lim)["block-cache-size"], "360M")
        self.assertEqual(strata.settings(lim)["use-direct-reads"], 1)
        self.assertIn("--use-direct-reads=1", strata.argv(lim))
        rocks.variant[lim] = "dr1_2"
        self.assertEqual(rocks.settings(lim)["rocksdb_block_cache_size"], "300M")
        self.assertEqual(rocks.settings(lim)["rocksdb_use_direct_reads"], "ON")


class SweepSectionTest(unittest.TestCase):
    def test_marks_chosen_and_seed(self):
        def c(v, label, score, ok=True):
            return {"variant": v, "label": label, "setting": "x=%s" % v, "ok": ok, "score": score,
                    "runs": [{"workload": W, "threads": 32, "status": "ok" if ok else "oom",
                              "tps": score if ok else None}]}
        res = {"sweeps": [
            {"engine": "innodb", "mem": M, "duration_s": 60, "default": "bp75", "chosen": "bp60",
             "candidates": [c("bp75", "buffer pool 75%", None, ok=False), c("bp60", "buffer pool 60%", 1000.0)]},
            {"engine": "strata", "mem": M, "duration_s": 60, "default": "bc1_4", "chosen": "bc1_4",
             "candidates": [c("bc1_4", "block cache 1/4", 1500.0)]}]}
        text = report.sweep_section(res)
        self.assertIn("| InnoDB | buffer pool 75% (`x=bp75`) seed's | OOM | no | - |  |", text)
        self.assertIn("| InnoDB | buffer pool 60% (`x=bp60`) **chosen** | 1,000 | yes | 1000 | 1.50x |", text)
        self.assertIn("block cache 1/4 (`x=bc1_4`) **chosen**, default", text)

    def test_a_first_candidate_left_out_by_sweep_configs_keeps_the_columns(self):
        # review s36 LOW-B1: the columns came from the first engine's first
        # candidate; one --sweep-configs left out has no runs, and every TPS
        # column vanished.
        def c(v, score, runs=True):
            return {"variant": v, "label": v, "setting": "x=%s" % v, "ok": runs, "score": score,
                    "runs": [{"workload": W, "threads": t, "status": "ok", "tps": score}
                             for t in (8, 32)] if runs else []}
        res = {"sweeps": [
            {"engine": "innodb", "mem": M, "duration_s": 60, "default": "bp75", "chosen": "bp60",
             "candidates": [c("bp75", None, runs=False), c("bp60", 1000.0)]},
            {"engine": "strata", "mem": M, "duration_s": 60, "default": "bc1_4", "chosen": "bc1_4",
             "candidates": [c("bc1_4", 1500.0)]}]}
        text = report.sweep_section(res)
        self.assertIn("8 thds TPS | ", text)
        self.assertIn("32 thds TPS | ", text)
        self.assertIn("| InnoDB | bp75 (`x=bp75`) seed's | - | - | no | - |  |", text)
        self.assertIn("| InnoDB | bp60 (`x=bp60`) **chosen** | 1,000 | 1,000 | yes | 1000 | 1.50x |", text)


class PinnedConfigsTest(unittest.TestCase):
    def test_parse_configs_accepts_known_variants_and_rejects_others(self):
        self.assertEqual(config.parse_configs("innodb=bp60, myrocks=bc1_4"),
                         {"innodb": "bp60", "myrocks": "bc1_4"})
        self.assertEqual(config.parse_configs(""), {})
        for bad in ("innodb=bc1_4", "innodb", "maria=bp60", "strata=bp50"):
            with self.assertRaises(SystemExit):
                config.parse_configs(bad)

    def test_settings_section_says_which_engine_was_pinned(self):
        res = {"config": {"engines": ["innodb", "strata"], "mem_limits": [M], "configs": {"innodb": "bp60"}},
               "engines": {"innodb": {"available": True, "settings": {"600 MB": {"innodb_buffer_pool_size": "360M"}}},
                           "strata": {"available": True, "settings": {"600 MB": {"block-cache-size": "150M"}}}}}
        text = report.settings_section(res)
        self.assertIn("`bp60` pinned by `--configs`", text)
        self.assertEqual(text.count("pinned"), 1)


if __name__ == "__main__":
    unittest.main(verbosity=2)
