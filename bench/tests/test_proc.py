"""Checks oltplib.proc, the server start/wait/stop shared by bench/oltp and bench/sbkit, on
small Python processes standing in for servers (no database needed).

  python3 bench/tests/test_proc.py
"""
import os
import signal
import sys
import tempfile
import time
import unittest

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, BENCH)

from oltplib import proc  # noqa: E402
from oltplib.procfs import free_port, port_open  # noqa: E402

# Listens on argv[1] after a short delay; with "stubborn", ignores SIGTERM.
SERVER = """
import signal, socket, sys, time
if "stubborn" in sys.argv:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("booting", flush=True)
time.sleep(0.5)
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(8)
print("ready", flush=True)
while True:
    c, _ = s.accept(); c.close()
"""


class Boom(Exception):
    pass


class ProcTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="test-proc-")
        self.log = os.path.join(self.dir, "server.log")
        self.p = None

    def tearDown(self):
        proc.kill(self.p)
        for f in os.listdir(self.dir):
            os.unlink(os.path.join(self.dir, f))
        os.rmdir(self.dir)

    def start(self, *extra, ping=lambda: True, timeout=20):
        port = free_port()
        self.p = proc.spawn([sys.executable, "-c", SERVER, str(port)] + list(extra),
                            self.log, self.dir, b"=== header\n")
        secs = proc.wait_ready(self.p, port, ping, timeout, "fake", lambda: proc.tail(self.log), Boom)
        return port, secs

    def test_start_waits_until_the_port_answers_then_stop_is_clean(self):
        port, secs = self.start()
        self.assertGreaterEqual(secs, 0.4)
        self.assertTrue(port_open(port))
        code, clean = proc.stop(self.p, 10)
        self.assertEqual((code, clean), (-signal.SIGTERM, True))
        self.assertFalse(port_open(port))
        log = proc.tail(self.log)
        self.assertTrue(log.startswith("=== header\n"), log)
        self.assertIn("ready", log)

    def test_a_server_that_ignores_sigterm_is_killed_and_reported_unclean(self):
        self.start("stubborn")
        t0 = time.time()
        code, clean = proc.stop(self.p, 1)
        self.assertEqual((code, clean), (-signal.SIGKILL, False))
        self.assertLess(time.time() - t0, 15)

    def test_exit_at_start_raises_with_the_log_tail(self):
        port = free_port()
        self.p = proc.spawn([sys.executable, "-c", "print('bad config line 7'); raise SystemExit(3)"],
                            self.log, self.dir)
        with self.assertRaises(Boom) as cm:
            proc.wait_ready(self.p, port, lambda: True, 20, "fake", lambda: proc.tail(self.log), Boom)
        self.assertIn("exited at start (code 3)", str(cm.exception))
        self.assertIn("bad config line 7", str(cm.exception))

    def test_not_ready_in_time_kills_the_server(self):
        with self.assertRaises(Boom) as cm:
            self.start(ping=lambda: False, timeout=2)
        self.assertIn("did not accept connections within 2s", str(cm.exception))
        self.assertIsNotNone(self.p.poll())

    def test_stop_and_tail_tolerate_nothing(self):
        self.assertEqual(proc.stop(None, 1), (None, True))
        proc.kill(None)
        self.assertEqual(proc.tail(os.path.join(self.dir, "missing.log")), "")


if __name__ == "__main__":
    unittest.main(verbosity=2)
