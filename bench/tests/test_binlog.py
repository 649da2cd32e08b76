"""Checks the harness's binary log mode (`bench/oltp --binlog off|on|both`, issue 13 item 4):
the plan (both modes of every engine, interleaved in rounds), each engine's server settings
with the log on, the check that a binlog-on server really logs, and the report's binlog-on
tables beside binlog-off (each engine against itself and the engines against each other).

  python3 bench/tests/test_binlog.py
"""
import os
import sys
import unittest
from unittest import mock

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, BENCH)

from oltplib import config, engines, report, rounds  # noqa: E402
from oltplib.config import MiB  # noqa: E402

M = 600 * MiB
W = "oltp_write_only"
ENGINES = ["innodb", "myrocks", "strata"]


def run(engine, rnd, qps, binlog=None, status="ok"):
    r = {"id": "%s%s-r%d" % (engine, "-binlog" if binlog == "on" else "", rnd), "engine": engine, "mem": M,
         "workload": W, "threads": 8, "round": rnd, "status": status, "qps": qps if status == "ok" else None}
    if binlog:
        r["binlog"] = binlog
    return r


def results(runs, rounds_n=2):
    return {"runs": runs, "engines": {e: {"available": True, "load": {"status": "ok"}} for e in ENGINES},
            "config": {"engines": ENGINES, "mem_limits": [M], "workloads": [W], "threads": [8],
                       "rounds": rounds_n}}


class PlanTest(unittest.TestCase):
    def test_default_is_off_and_ids_unchanged(self):
        cfg = config.from_args(["--quick", "--no-build"])
        self.assertEqual(cfg.binlog, ["off"])
        plan = cfg.plan(ENGINES)
        self.assertEqual({s.binlog for s in plan}, {"off"})
        self.assertFalse(any("binlog" in s.run_id() for s in plan))

    def test_both_interleaves_both_modes_of_every_engine_in_each_round(self):
        cfg = config.from_args(["--quick", "--no-build", "--binlog", "both", "--workloads", "wo", "--threads", "8"])
        self.assertEqual(cfg.binlog, ["off", "on"])
        plan = cfg.plan(ENGINES)
        self.assertEqual(len(plan), 2 * 2 * 3)  # rounds x modes x engines
        r1 = [(s.engine, s.binlog) for s in plan if s.round == 1]
        r2 = [(s.engine, s.binlog) for s in plan if s.round == 2]
        # Each engine's two modes side by side (no order bias in their ratio), engines
        # rotated by round and the pair order reversed on even rounds.
        self.assertEqual(r1, [(e, b) for e in ENGINES for b in ("off", "on")])
        rot = ENGINES[1:] + ENGINES[:1]
        self.assertEqual(r2, [(e, b) for e in rot for b in ("on", "off")])
        cfg4 = config.from_args(["--quick", "--no-build", "--binlog", "both", "--workloads", "wo",
                                 "--threads", "8", "--rounds", "4"])
        first = {}
        for s in cfg4.plan(ENGINES):
            first.setdefault((s.engine, s.round), s.binlog)
        for e in ENGINES:
            self.assertEqual(sorted(first[(e, r)] for r in range(1, 5)), ["off", "off", "on", "on"])
        ids = [s.run_id() for s in plan]
        self.assertEqual(len(ids), len(set(ids)))
        self.assertIn("strata-256M-wo-t8-binlog-r1", ids)
        self.assertGreater(cfg.estimate_seconds(), config.from_args(
            ["--quick", "--no-build", "--workloads", "wo", "--threads", "8"]).estimate_seconds())

    def test_both_without_rounds_runs_off_then_on_per_engine(self):
        cfg = config.from_args(["--no-build", "--binlog", "both", "--workloads", "wo", "--threads", "8",
                                "--mem", "600M"])
        self.assertEqual([(s.engine, s.binlog) for s in cfg.plan(["innodb", "strata"])],
                         [("innodb", "off"), ("innodb", "on"), ("strata", "off"), ("strata", "on")])

    def test_on_alone_and_sweeps_follow_the_mode(self):
        cfg = config.from_args(["--quick", "--no-build", "--binlog", "on", "--sweep-peers"])
        self.assertEqual({s.binlog for s in cfg.plan(ENGINES)}, {"on"})
        self.assertEqual({s.binlog for s in cfg.sweep_plan("innodb", cfg.mems[0])}, {"on"})


class SettingsTest(unittest.TestCase):
    def setUp(self):
        cfg = config.from_args(["--quick", "--no-build", "--strata-bin", "/x/strata"])
        self.inno, self.rocks, self.strata = engines.make(cfg, "/tmp/oltp-test-unused", lambda: 1)

    def test_off_by_default(self):
        for e in (self.inno, self.rocks):
            s = e.settings(M)
            self.assertIn("skip-log-bin", s)
            self.assertNotIn("log-bin", s)
        self.assertFalse(any("log-bin" in a or "binlog" in a for a in self.strata.argv(M)))

    def test_on_is_the_seeds_configuration(self):
        for e in (self.inno, self.rocks):
            e.binlog = True
            s = e.settings(M)
            self.assertNotIn("skip-log-bin", s)
            self.assertEqual((s["log-bin"], s["binlog_format"], s["sync_binlog"]), ("mysql-bin", "ROW", 1))
            self.assertEqual(s["rocksdb_flush_log_at_trx_commit" if e is self.rocks
                               else "innodb_flush_log_at_trx_commit"], 1)
        self.strata.binlog = True
        argv = self.strata.argv(M)
        for a in ("--log-bin=mysql-bin", "--binlog-format=ROW", "--sync-binlog=1", "--sync-on-commit=1"):
            self.assertIn(a, argv)

    def test_a_server_without_its_log_fails_the_run(self):
        with mock.patch.object(engines, "sql", return_value=[["0", "ROW", "0"]]):
            with self.assertRaises(engines.EngineError):
                self.inno.check_binlog()
            with self.assertRaises(engines.EngineError):
                self.strata.check_binlog()
        for e in (self.inno, self.rocks, self.strata):
            with mock.patch.object(engines, "sql", return_value=[["1", "ROW", "0"]]):
                with self.assertRaises(engines.EngineError):
                    e.check_binlog()  # sync_binlog must be 1
            with mock.patch.object(engines, "sql", return_value=[["1", "ROW", "1", "1"]]):
                self.assertEqual(e.check_binlog()["sync_binlog"], "1")
        # MyRocks without 2PC (log and engine may disagree after a crash) and Strata without
        # its synced commit (the log is not synced either) are not the seed's configuration.
        for e in (self.rocks, self.strata):
            with mock.patch.object(engines, "sql", return_value=[["1", "ROW", "1", "0"]]):
                with self.assertRaises(engines.EngineError):
                    e.check_binlog()
            with mock.patch.object(engines, "sql", return_value=[["1", "ROW", "1"]]):
                with self.assertRaises(engines.EngineError):
                    e.check_binlog()

    def test_binlog_bytes_sums_the_files(self):
        rows = [["mysql-bin.000001", "1000"], ["mysql-bin.000002", "234"]]
        with mock.patch.object(engines, "sql", return_value=rows) as q:
            self.assertEqual(self.strata.binlog_bytes(), 1234)
            self.assertEqual(q.call_args[0][1], "SHOW BINARY LOGS")


class ReportTest(unittest.TestCase):
    def both(self):
        runs = []
        for rnd, f in ((1, 1.0), (2, 1.1)):
            runs += [run("innodb", rnd, 1000 * f, "off"), run("myrocks", rnd, 800 * f, "off"),
                     run("strata", rnd, 1200 * f, "off"), run("innodb", rnd, 500 * f, "on"),
                     run("myrocks", rnd, 600 * f, "on"), run("strata", rnd, 1080 * f, "on")]
        return results(runs)

    def test_on_over_off_per_engine(self):
        res = self.both()
        s = rounds.binlog_summary(res["runs"], "strata", M, W, 8)
        self.assertAlmostEqual(s["median"], 0.9)
        self.assertEqual(s["binlog"], "on/off")
        table = report.binlog_table(res, W)
        self.assertIn("| InnoDB 600 MB | 0.50x (0.50-0.50) |", table)
        self.assertIn("| MyRocks 600 MB | 0.75x (0.75-0.75) |", table)
        self.assertIn("| Strata 600 MB | 0.90x (0.90-0.90) |", table)

    def test_sections_per_mode_and_cross_engine_ratios_within_a_mode(self):
        text = "\n".join(report.workload_section(self.both(), W))
        off, on = text.index("#### Binary log off"), text.index("#### Binary log on\n")
        beside = text.index("#### Binary log on beside off")
        self.assertLess(off, on)
        self.assertLess(on, beside)
        self.assertIn("1.20x", text[off:on])  # Strata / InnoDB, log off
        self.assertIn("2.16x", text[on:beside])  # Strata / InnoDB, log on: 1080 / 500
        self.assertIn("| InnoDB 600 MB | 1,050 |", text[off:on])  # medians over the rounds
        self.assertIn("| InnoDB 600 MB | 525 |", text[on:beside])
        ratios = rounds.all_ratio_summaries(self.both())
        self.assertEqual({r["binlog"] for r in ratios}, {"off", "on", "on/off"})
        on_si = [r for r in ratios if r["binlog"] == "on" and (r["num"], r["den"]) == ("strata", "innodb")]
        self.assertAlmostEqual(on_si[0]["median"], 2.16)

    def test_log_growth_per_transaction_median(self):
        res = self.both()
        for r in res["runs"]:
            if r["binlog"] == "on":
                r["binlog_bytes_per_trx"] = {"innodb": 900.0, "myrocks": 950.0, "strata": 1000.0}[r["engine"]] * r["round"]
        table = report.binlog_growth_table(res, W)
        self.assertIn("| Strata 600 MB | 1500 |", table)  # rounds 1000 and 2000
        self.assertIn("| InnoDB 600 MB | 1350 |", table)
        for r in res["runs"]:
            r.pop("binlog_bytes_per_trx", None)
        self.assertEqual(report.binlog_growth_table(res, W), "")

    def test_old_results_without_the_mode_read_as_off(self):
        runs = [run("innodb", 1, 1000.0), run("strata", 1, 1500.0)]
        text = "\n".join(report.workload_section(results(runs, 1), W))
        self.assertNotIn("Binary log", text)
        self.assertIn("1.50x", text)

    def test_on_alone(self):
        runs = [run("innodb", 1, 500.0, "on"), run("strata", 1, 1000.0, "on")]
        text = "\n".join(report.workload_section(results(runs, 1), W))
        self.assertIn("#### Binary log on", text)
        self.assertNotIn("beside off", text)
        self.assertIn("2.00x", text)


if __name__ == "__main__":
    unittest.main(verbosity=2)
