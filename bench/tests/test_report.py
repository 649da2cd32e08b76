"""Checks pieces of the markdown report (oltplib.report) on hand-made runs.

  python3 bench/tests/test_report.py
"""
import os
import sys
import unittest

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, BENCH)

from oltplib import report  # noqa: E402


def run(rid, debt_end):
    return {"id": rid, "status": "ok", "qps": 1000.0, "tps": 50.0, "p95_ms": 10.0, "errors": 0,
            "per_trx": {}, "qps_1s": {}, "debt_end": debt_end}


class DebtColumnTest(unittest.TestCase):
    def test_strata_shows_its_pending_compaction_gauge(self):
        # Results written before drain_job_bytes existed kept the drain watch's bytes in
        # debt_bytes: the gauge still wins.
        r = run("strata-600M-wo-t8", {"strata_pending_compaction_bytes": 3 << 30,
                                      "debt_bytes": 5 << 20, "drain_job_bytes": 5 << 20})
        row = report.detail_table({"runs": [r]}).splitlines()[-1]
        self.assertIn("3.00 GB", row)
        self.assertNotIn("5.0 MB", row)

    def test_other_engines_show_debt_bytes(self):
        r = run("myrocks-600M-wo-t8", {"debt_bytes": 7 << 30})
        self.assertIn("7.00 GB", report.detail_table({"runs": [r]}).splitlines()[-1])
        self.assertIsNone(report._debt({}))


class RatioCellTest(unittest.TestCase):
    def test_ratio_of_two_completed_runs(self):
        a, b = run("strata-600M-rw-t8", {}), run("innodb-600M-rw-t8", {})
        a["qps"], b["qps"] = 1500.0, 1000.0
        self.assertEqual(report._ratio(a, b, "Strata", "InnoDB"), "1.50x")

    def test_failed_side_is_named_with_its_outcome(self):
        a, b = run("strata-600M-rw-t32", {}), run("innodb-600M-rw-t32", {})
        b["status"], b["qps"] = "stalled", None
        self.assertEqual(report._ratio(a, b, "Strata", "InnoDB"), "- (InnoDB stalled)")
        b["status"] = "oom"
        self.assertEqual(report._ratio(a, b, "Strata", "InnoDB"), "- (InnoDB OOM)")

    def test_missing_run_is_a_dash(self):
        self.assertEqual(report._ratio(run("x", {}), None, "Strata", "InnoDB"), "-")


if __name__ == "__main__":
    unittest.main(verbosity=2)
