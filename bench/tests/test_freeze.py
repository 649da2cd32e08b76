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

    def test_a_freeze_that_does_not_complete_is_recorded_as_failed_and_thawed(self):
        real = freeze.state
        freeze.state = lambda path: "FREEZING"  # the kernel never finishes (or a watchdog thawed it)
        try:
            with self.assertRaises(freeze.FreezeError):
                freeze.freeze(self.group, timeout=0.2)
            rec = {}
            saved = freeze.freeze
            freeze.freeze = lambda path: (_ for _ in ()).throw(freeze.FreezeError("never froze"))
            try:
                with freeze.hold(self.group, rec):
                    pass
            finally:
                freeze.freeze = saved
        finally:
            freeze.state = real
        self.assertEqual(rec["frozen"]["failed"], "never froze")
        self.assertNotIn("tasks", rec["frozen"])
        self.assertEqual(freeze.state(self.group), "THAWED")

    def test_the_owner_file_exists_before_the_group_is_frozen(self):
        seen = []
        real = freeze._write
        freeze._write = lambda path, v: (seen.append((v, os.path.exists(freeze.OWNER_FILE))), real(path, v))
        try:
            freeze.freeze(self.group)
        finally:
            freeze._write = real
            freeze.thaw(self.group)
        self.assertEqual(seen[0], ("FROZEN", True))

    def test_refuses_to_freeze_its_own_children(self):
        p = subprocess.Popen(["sleep", "5"])
        try:
            with open(os.path.join(self.group, "cgroup.procs"), "w") as f:
                f.write("%d\n" % p.pid)
            self.assertEqual(freeze.ours(self.group), [p.pid])
            with self.assertRaises(freeze.FreezeError):
                freeze.freeze(self.group)
            self.assertEqual(freeze.state(self.group), "THAWED")
        finally:
            p.kill()
            p.wait()

    def test_check_path_refuses_a_group_holding_the_harness(self):
        with self.assertRaises(SystemExit):
            freeze.check_path(os.path.join(self.dir, "nope"))
        freeze.check_path(self.group)  # holds 11 and 12, not us
        with open(os.path.join(self.group, "cgroup.procs"), "w") as f:
            f.write("%d\n" % os.getpid())
        with self.assertRaises(SystemExit):
            freeze.check_path(self.group)

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
