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


if __name__ == "__main__":
    unittest.main(verbosity=2)
