"""Checks `bench/oltp --merge` on a real results.json (CI: the quick run's).

Splits one invocation's runs by workload into two result directories, merges them back and
checks that every run, table and invocation survives, and that mismatched inputs (another data
size, the same run twice) are refused.

  python3 bench/tests/test_merge.py [RESULTS_DIR]     (default bench/results/quick)
"""
import copy
import json
import os
import subprocess
import sys
import tempfile
import unittest

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(BENCH, "results", "quick")


def split(res, workloads):
    part = copy.deepcopy(res)
    part["runs"] = [r for r in res["runs"] if r["workload"] in workloads]
    part["config"]["workloads"] = [w for w in res["config"]["workloads"] if w in workloads]
    return part


class MergeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(os.path.join(SRC, "results.json")) as f:
            cls.res = json.load(f)
        cls.tmp = tempfile.mkdtemp(prefix="oltp-merge-")
        ws = cls.res["config"]["workloads"]
        assert len(ws) >= 2, "need a run with at least two workloads"
        cls.parts = [split(cls.res, ws[:1]), split(cls.res, ws[1:])]
        cls.dirs = []
        for i, p in enumerate(cls.parts):
            d = os.path.join(cls.tmp, "part%d" % i)
            os.makedirs(d)
            with open(os.path.join(d, "results.json"), "w") as f:
                json.dump(p, f)
            cls.dirs.append(d)

    def merge(self, dirs, out):
        return subprocess.run([sys.executable, os.path.join(BENCH, "oltp"), "--merge", ",".join(dirs),
                               "--out", out, "--no-plots"], capture_output=True, text=True)

    def test_merged_report_has_every_run_and_invocation(self):
        out = os.path.join(self.tmp, "merged")
        p = self.merge(self.dirs, out)
        self.assertEqual(p.returncode, 0, p.stderr + p.stdout)
        with open(os.path.join(out, "results.json")) as f:
            m = json.load(f)
        self.assertEqual(sorted(r["id"] for r in m["runs"]), sorted(r["id"] for r in self.res["runs"]))
        self.assertEqual(m["config"]["workloads"], self.res["config"]["workloads"])
        self.assertEqual(len(m["harness"]["invocations"]), 2)
        with open(os.path.join(out, "report.md")) as f:
            text = f.read()
        self.assertIn("Merged from 2 invocations", text)
        for w in self.res["config"]["workloads"]:
            self.assertIn("(%s)" % w, text)

    def test_refuses_other_data_and_duplicate_runs(self):
        bad = copy.deepcopy(self.parts[1])
        bad["config"]["table_size"] += 1
        d = os.path.join(self.tmp, "bad")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "results.json"), "w") as f:
            json.dump(bad, f)
        p = self.merge([self.dirs[0], d], os.path.join(self.tmp, "x"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("table_size", p.stderr)
        p = self.merge([self.dirs[0], self.dirs[0]], os.path.join(self.tmp, "y"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("in both", p.stderr)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        SRC = sys.argv.pop(1)
    unittest.main()
