"""Tests of oltplib.freeze against a fake freezer group (a directory with a freezer.state
file): the group is frozen inside hold() and thawed after it, also when the block raises; the
watchdog thaws only a group whose owner is gone."""

import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from oltplib import freeze  # noqa: E402


class FreezeTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.group = os.path.join(self.dir, "g")
        os.mkdir(self.group)
        with open(os.path.join(self.group, "freezer.state"), "w") as f:
            f.write("THAWED\n")
        with open(os.path.join(self.group, "cgroup.procs"), "w") as f:
            f.write("11\n12\n")
        self.saved = freeze.OWNER_FILE
        freeze.OWNER_FILE = os.path.join(self.dir, "owner.pid")

    def tearDown(self):
        freeze.OWNER_FILE = self.saved

    def test_hold_freezes_inside_and_thaws_after_even_on_error(self):
        rec = {}
        with freeze.hold(self.group, rec):
            self.assertEqual(freeze.state(self.group), "FROZEN")
            with open(freeze.OWNER_FILE) as f:
                self.assertEqual(int(f.read()), os.getpid())
        self.assertEqual(freeze.state(self.group), "THAWED")
        self.assertFalse(os.path.exists(freeze.OWNER_FILE))
        self.assertEqual(rec["frozen"]["tasks"], 2)
        with self.assertRaises(RuntimeError):
            with freeze.hold(self.group):
                raise RuntimeError("run failed")
        self.assertEqual(freeze.state(self.group), "THAWED")

    def test_release_thaws_early(self):
        with freeze.hold(self.group) as held:
            self.assertEqual(freeze.state(self.group), "FROZEN")
            held.release()
            self.assertEqual(freeze.state(self.group), "THAWED")
            held.release()
        self.assertEqual(freeze.state(self.group), "THAWED")

    def test_no_group_is_a_no_op(self):
        rec = {}
        with freeze.hold("", rec):
            pass
        self.assertEqual(rec, {})

    def test_watchdog_thaws_only_an_orphaned_group(self):
        freeze.freeze(self.group)
        self.assertFalse(freeze.thaw_if_orphaned(self.group, freeze.OWNER_FILE))  # we are alive
        self.assertEqual(freeze.state(self.group), "FROZEN")
        p = subprocess.Popen(["true"])
        p.wait()
        with open(freeze.OWNER_FILE, "w") as f:
            f.write(str(p.pid))
        self.assertTrue(freeze.thaw_if_orphaned(self.group, freeze.OWNER_FILE))
        self.assertEqual(freeze.state(self.group), "THAWED")
        self.assertFalse(freeze.thaw_if_orphaned(self.group, freeze.OWNER_FILE))


if __name__ == "__main__":
    unittest.main()
