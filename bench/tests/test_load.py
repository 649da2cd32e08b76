"""Checks bench/load's arithmetic: per-variant medians and the speedups (median of per-round
ratios of times, InnoDB time / Strata time), and the statements of each variant's LOAD DATA.

  python3 bench/tests/test_load.py
"""
import importlib.machinery
import importlib.util
import os
import unittest

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_loader = importlib.machinery.SourceFileLoader("bench_load", os.path.join(BENCH, "load"))
_spec = importlib.util.spec_from_loader("bench_load", _loader)
load = importlib.util.module_from_spec(_spec)
_loader.exec_module(load)


def row(variant, rnd, prepare, load_data=10.0, create_index=2.0, indexed=12.0):
    return {"variant": variant, "round": rnd, "prepare_s": prepare, "load_data_s": load_data,
            "create_index_s": create_index, "load_total_s": load_data + create_index,
            "load_indexed_s": indexed}


class SpeedupTest(unittest.TestCase):
    def test_ratio_is_innodb_time_over_strata_time_per_round(self):
        res = [row("innodb", 1, 90.0), row("strata", 1, 180.0), row("strata_bulk", 1, 30.0),
               row("innodb", 2, 100.0), row("strata", 2, 200.0), row("strata_bulk", 2, 40.0)]
        s = load.speedups(res)
        self.assertAlmostEqual(s["strata/innodb"]["prepare_s"]["median"], 0.5)
        # per round 3.0 and 2.5: median 2.75, not 95 / 35 of the medians
        b = s["strata_bulk/innodb"]["prepare_s"]
        self.assertEqual(b["per_round"], [3.0, 2.5])
        self.assertAlmostEqual(b["median"], 2.75)
        self.assertEqual((b["min"], b["max"]), (2.5, 3.0))
        self.assertTrue(b["disagree"])
        self.assertAlmostEqual(s["strata_bulk/strata"]["prepare_s"]["median"], 5.5)
        self.assertAlmostEqual(s["strata/innodb"]["load_total_s"]["median"], 1.0)

    def test_pairs_need_both_variants_and_a_nonzero_time(self):
        res = [row("innodb", 1, 90.0), row("strata_bulk", 1, 0.0)]
        s = load.speedups(res, variants=["innodb", "strata_bulk"])
        self.assertEqual(list(s), ["strata_bulk/innodb"])
        self.assertIsNone(s["strata_bulk/innodb"]["prepare_s"])
        self.assertEqual(s["strata_bulk/innodb"]["load_data_s"]["median"], 1.0)

    def test_rounds_pair_with_their_own_round(self):
        res = [row("innodb", 1, 10.0), row("strata", 2, 5.0), row("innodb", 2, 20.0)]
        s = load.speedups(res, variants=["innodb", "strata"])
        self.assertEqual(s["strata/innodb"]["prepare_s"]["per_round"], [4.0])

    def test_medians_per_variant(self):
        res = [row("innodb", r, p) for r, p in ((1, 3.0), (2, 1.0), (3, 2.0))]
        self.assertEqual(load.medians(res)["innodb"]["prepare_s"], 2.0)
        self.assertNotIn("strata", load.medians(res))

    def test_fmt_ratio(self):
        self.assertEqual(load.fmt_ratio(None), "-")
        self.assertEqual(load.fmt_ratio({"median": 2.0, "min": 2.0, "max": 2.0}), "2.00x")
        self.assertEqual(load.fmt_ratio({"median": 2.0, "min": 1.5, "max": 2.5}), "2.00x (1.50-2.50)")


class PathTest(unittest.TestCase):
    def test_each_strata_variant_must_take_its_path(self):
        res = {}
        load.check_path(res, "strata_bulk", "prepare", 10, 110, 100)
        load.check_path(res, "strata", "load_data", 110, 110, 100)
        self.assertEqual(res["bulk_rows"], {"prepare": 100, "load_data": 0})
        with self.assertRaises(load.Failure):
            load.check_path(res, "strata_bulk", "load_data", 110, 150, 100)
        with self.assertRaises(load.Failure):
            load.check_path(res, "strata", "load_data", 110, 210, 100)
        load.check_path(res, "innodb", "prepare", None, None, 100)


class StatementTest(unittest.TestCase):
    def test_row_by_row_strata_runs_in_a_transaction(self):
        self.assertTrue(load.load_sql("strata", "/f", "t").endswith(
            "SET autocommit=0; LOAD DATA INFILE '/f' INTO TABLE t; COMMIT"))
        self.assertTrue(load.load_sql("strata_bulk", "/f", "t").startswith("SET strata_bulk_load=1; LOAD DATA"))
        self.assertEqual(load.load_sql("innodb", "/f", "t"), "LOAD DATA INFILE '/f' INTO TABLE t")


if __name__ == "__main__":
    unittest.main()
