"""Checks bench/tpcc's pure pieces: percentiles of the 1-second series, sizing from a data
target and memory limits, per-round ratios, the run plan (MyRocks at RC, interleaving), the
report's cells and sysbench-tpcc's interval lines.

  python3 bench/tests/test_tpcc.py
"""
import os
import sys
import unittest

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, BENCH)

from oltplib import sysbench  # noqa: E402
from tpcclib import plan, report, stats  # noqa: E402
from tpcclib.run import stall_tick  # noqa: E402

MiB = stats.MiB


class SeriesTest(unittest.TestCase):
    def test_percentiles_interpolate_between_ranks(self):
        xs = list(range(1, 102))  # 1..101: p1 is 2, p5 is 6, median 51
        self.assertEqual(stats.percentile(xs, 1), 2)
        self.assertEqual(stats.percentile(xs, 5), 6)
        self.assertEqual(stats.percentile(xs, 50), 51)
        self.assertAlmostEqual(stats.percentile([10, 20], 25), 12.5)
        self.assertIsNone(stats.percentile([], 5))

    def test_summary_counts_zero_seconds_and_p1_over_median(self):
        s = stats.series_summary([100.0] * 98 + [0.0, 0.0])
        self.assertEqual(s["zero_seconds"], 2)
        self.assertEqual(s["median"], 100.0)
        self.assertEqual(s["p1"], 0.0)
        self.assertEqual(s["p1_over_median"], 0.0)
        self.assertEqual(stats.series_summary([]), {})

    def test_tpcc_interval_line_without_colon_after_err(self):
        iv = sysbench.parse_interval("[ 3s ] thds: 4 tps: 90.84 qps: 3084.71 (r/w/o: "
                                     "1412.58/1472.48/199.66) lat (ms,95%): 110.66 err/s 2.00 "
                                     "reconn/s: 0.00")
        self.assertEqual((iv["t"], iv["tps"], iv["err"], iv["p95_ms"]), (3, 90.84, 2.0, 110.66))


class FakeServer:
    def __init__(self):
        self.up = True

    def alive(self):
        return self.up


class StallTest(unittest.TestCase):
    def test_stops_after_consecutive_zero_seconds_only(self):
        srv = FakeServer()
        tick = stall_tick(srv, 3)
        iv = lambda t, tps: {"t": t, "tps": tps}  # noqa: E731
        self.assertTrue(tick(iv(1, 0.0), 1))
        self.assertTrue(tick(iv(2, 0.0), 2))
        self.assertTrue(tick(iv(2, 0.0), 2.5))  # the same interval again does not count
        self.assertTrue(tick(iv(3, 5.0), 3))  # a commit resets the count
        for t in (4, 5):
            self.assertTrue(tick(iv(t, 0.0), t))
        self.assertFalse(tick(iv(6, 0.0), 6))
        self.assertTrue(tick.stalled)

    def test_stops_when_the_server_died(self):
        srv = FakeServer()
        tick = stall_tick(srv, 3)
        srv.up = False
        self.assertFalse(tick(None, 1))
        self.assertFalse(tick.stalled)


class SizingTest(unittest.TestCase):
    def test_warehouses_round_to_the_data_target(self):
        per = stats.WAREHOUSE_BYTES["innodb"]
        self.assertEqual(stats.warehouses_for(30 * per), 30)
        self.assertEqual(stats.warehouses_for(30.4 * per), 30)
        self.assertEqual(stats.warehouses_for(1), 1)

    def test_memory_limits_as_sizes_or_fractions_of_data(self):
        self.assertEqual(stats.mem_limits(["600M", "1G", "data/5"], 3000 * MiB),
                         [600 * MiB, 1024 * MiB, 600 * MiB])
        self.assertEqual(stats.mem_limits(["data/8"], 3000 * MiB), [375 * MiB])
        with self.assertRaises(ValueError):
            stats.parse_size("lots")

    def test_default_data_is_five_times_the_smallest_limit(self):
        a = plan.parse_args(["--mem", "600M,1200M"], "", "/r", "/t")
        self.assertEqual(a.data_bytes, 3000 * MiB)
        self.assertEqual(a.warehouses, round(3000 * MiB / stats.WAREHOUSE_BYTES["innodb"]))
        a = plan.parse_args(["--sweep"], "", "/r", "/t")
        self.assertEqual(a.mems[1], 600 * MiB)
        self.assertEqual(len(a.mems), 5)


class RatioTest(unittest.TestCase):
    def test_median_and_spread_of_per_round_ratios(self):
        s = stats.ratio_summary([150.0, 160.0, 140.0], [100.0, 100.0, 100.0])
        self.assertAlmostEqual(s["median"], 1.5)
        self.assertAlmostEqual(s["min"], 1.4)
        self.assertAlmostEqual(s["max"], 1.6)
        self.assertTrue(s["disagree"])  # 1.6 > 1.1 * 1.4
        self.assertFalse(stats.ratio_summary([100.0, 104.0], [100.0, 100.0])["disagree"])

    def test_rounds_with_a_failed_side_are_skipped(self):
        s = stats.ratio_summary([None, 120.0], [100.0, 0.0])
        self.assertEqual(s, {})
        s = stats.ratio_summary([200.0, 120.0], [100.0, None])
        self.assertEqual(s["ratios"], [2.0])


def run(engine, rnd, iso, tps, mem=600 * MiB, th=8):
    return {"engine": engine, "round": rnd, "iso": iso, "tps": tps, "mem": mem, "threads": th,
            "purge": False, "ok": True, "check_ran": True, "checks_failed": []}


class PlanTest(unittest.TestCase):
    def test_myrocks_runs_rc_once_and_order_alternates(self):
        a = plan.parse_args(["--iso", "RR,RC", "--threads", "8", "--rounds", "2"], "", "/r", "/t")
        p = plan.plan(a)
        r1 = [(x["engine"], x["iso"]) for x in p if x["round"] == 1]
        self.assertEqual(r1, [("innodb", "RR"), ("myrocks", "RC"), ("strata", "RR"),
                              ("innodb", "RC"), ("strata", "RC")])
        r2 = [x["engine"] for x in p if x["round"] == 2]
        self.assertEqual(r2[0], "strata")

    def test_cells_compare_strata_rr_with_myrocks_rc(self):
        runs = [run("innodb", 1, "RR", 100.0), run("myrocks", 1, "RC", 80.0),
                run("strata", 1, "RR", 150.0), run("innodb", 2, "RR", 110.0),
                run("myrocks", 2, "RC", 70.0), run("strata", 2, "RR", 165.0)]
        runs[4]["oom_kills"] = 1  # a failed MyRocks round drops out of its ratio
        runs[5]["tps"] = 198.0  # 1.8x InnoDB in round 2
        c = report.cells(runs)[(600 * MiB, 8, "RR")]
        self.assertEqual(c["myrocks"], [80.0, None])
        self.assertEqual(stats.ratio_summary(c["strata"], c["myrocks"])["ratios"], [150.0 / 80.0])
        self.assertAlmostEqual(stats.ratio_summary(c["strata"], c["innodb"])["median"], 1.65)
        text = "\n".join(report.cell_table(runs))
        self.assertIn("**1.65x** (1.50-1.80) rounds disagree >10%", text)
        self.assertIn("**1.88x** (1 round)", text)  # Strata/MyRocks: round 2's MyRocks failed
        self.assertIn("80, failed", text)


class ConfigsTest(unittest.TestCase):
    def test_cache_label_follows_configs_and_defaults_to_the_seeds(self):
        from tpcclib.report import cache_label
        self.assertEqual(cache_label("myrocks", {}), "block cache 1/8")
        self.assertEqual(cache_label("innodb", {"configs": {}}), "buffer pool 75%")
        self.assertEqual(cache_label("myrocks", {"configs": {"myrocks": "bc1_2"}}), "block cache 1/2")

    def test_parse_args_rejects_an_unknown_config(self):
        from tpcclib import plan as tplan
        a = tplan.parse_args(["--configs", "myrocks=bc1_2"], "", "/tmp/r", "/tmp/t")
        self.assertEqual(a.configs, {"myrocks": "bc1_2"})
        with self.assertRaises(SystemExit):
            tplan.parse_args(["--configs", "myrocks=bp60"], "", "/tmp/r", "/tmp/t")


class CheckTest(unittest.TestCase):
    def test_check_selects_engines_and_a_skipped_check_is_not_a_failure(self):
        from tpcclib import plan as tplan
        from tpcclib.report import checks_ok
        self.assertEqual(tplan.parse_args([], "", "/tmp/r", "/tmp/t").check, tplan.ENGINES)
        self.assertEqual(tplan.parse_args(["--check", "strata"], "", "/tmp/r", "/tmp/t").check, ["strata"])
        self.assertEqual(tplan.parse_args(["--check", "none"], "", "/tmp/r", "/tmp/t").check, [])
        with self.assertRaises(SystemExit):
            tplan.parse_args(["--check", "postgres"], "", "/tmp/r", "/tmp/t")
        self.assertTrue(checks_ok({"check_skipped": True}))
        self.assertFalse(checks_ok({"check_ran": True, "checks_failed": ["1/w1"]}))
        self.assertFalse(checks_ok({}))  # asked for and did not run


if __name__ == "__main__":
    unittest.main(verbosity=2)
