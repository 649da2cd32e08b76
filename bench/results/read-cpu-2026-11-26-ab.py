#!/usr/bin/env python3
"""Interleaved A/B of server CPU per sysbench transaction.
usage: ab.py --a BIN --b BIN --data DIR [--rounds N] [--secs S] [--workload oltp_read_only]"""
import argparse, os, re, shutil, subprocess, sys, time, statistics
p = argparse.ArgumentParser()
p.add_argument("--a", required=True); p.add_argument("--b", required=True)
p.add_argument("--data", required=True, help="prepared datadir template")
p.add_argument("--rounds", type=int, default=4); p.add_argument("--secs", type=int, default=20)
p.add_argument("--workload", default="oltp_read_only")
p.add_argument("--tables", type=int, default=4); p.add_argument("--size", type=int, default=100000)
p.add_argument("--threads", type=int, default=4)
p.add_argument("--extra", action="append", default=[])
p.add_argument("--warm", type=int, default=8)
a = p.parse_args()
TCK = os.sysconf("SC_CLK_TCK")
def cpu(pid):
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / TCK
def rchar(pid):
    for l in open("/proc/%d/io" % pid):
        if l.startswith("read_bytes"): rb = int(l.split()[1])
        if l.startswith("rchar"): rc = int(l.split()[1])
    return rc, rb
def start(name, binary, port):
    d = "/tmp/read/run-%s" % name
    if os.path.exists(d): shutil.rmtree(d)
    shutil.copytree(a.data, d)
    log = open("/tmp/read/%s.log" % name, "w")
    argv = [binary, "--datadir=" + d, "--port=%d" % port, "--bind-address=127.0.0.1",
            "--socket=/tmp/read/%s.sock" % name, "--block-cache-size=256M",
            "--write-buffer-size=64M", "--max-connections=512",
            "--transaction-isolation=REPEATABLE-READ"] + a.extra
    pr = subprocess.Popen(argv, stdout=log, stderr=log)
    for _ in range(300):
        r = subprocess.run(["mariadb", "--protocol=TCP", "-h127.0.0.1", "-P%d" % port, "-uroot", "-e", "select 1"], capture_output=True)
        if r.returncode == 0: return pr
        time.sleep(0.2)
    raise SystemExit("server %s did not start" % name)
def bench(port, secs):
    cmd = ["sysbench", a.workload, "--mysql-port=%d" % port, "--tables=%d" % a.tables,
           "--table-size=%d" % a.size, "--db-driver=mysql", "--mysql-host=127.0.0.1",
           "--mysql-user=root", "--mysql-db=sbtest", "--rand-type=uniform", "--skip-trx=off",
           "--threads=%d" % a.threads, "--time=%d" % secs, "--events=0", "run"]
    out = subprocess.run(cmd, capture_output=True, text=True).stdout
    m = re.search(r"transactions:\s+(\d+)", out)
    e = re.search(r"ignored errors:\s+(\d+)", out)
    if not m: print(out); raise SystemExit("sysbench failed")
    return int(m.group(1))
srv = {"A": (start("A", a.a, 4406), 4406), "B": (start("B", a.b, 4407), 4407)}
for k, (pr, port) in srv.items(): bench(port, a.warm)
res = {"A": [], "B": []}
for r in range(a.rounds):
    order = ["A", "B"] if r % 2 == 0 else ["B", "A"]
    for k in order:
        pr, port = srv[k]
        c0 = cpu(pr.pid); io0 = rchar(pr.pid); t0 = time.time()
        n = bench(port, a.secs)
        c1 = cpu(pr.pid); io1 = rchar(pr.pid); t1 = time.time()
        us = (c1 - c0) / n * 1e6
        res[k].append((us, n / (t1 - t0), (io1[0] - io0[0]) / n, (io1[1]-io0[1]) / n))
        print("round %d %s: cpu/trx %.0f us  tps %.1f  rchar/trx %.0f  read_bytes/trx %.0f" % ((r, k) + res[k][-1]), flush=True)
for k, (pr, port) in srv.items():
    pr.terminate(); pr.wait()
ma = statistics.median(x[0] for x in res["A"]); mb = statistics.median(x[0] for x in res["B"])
ta = statistics.median(x[1] for x in res["A"]); tb = statistics.median(x[1] for x in res["B"])
ratios = [b[0] / x[0] for x, b in zip(res["A"], res["B"])]
print("median cpu/trx A %.0f us  B %.0f us  B/A %.3f  (per-round B/A: %s)" % (ma, mb, mb / ma, " ".join("%.3f" % x for x in ratios)))
print("median tps A %.1f B %.1f B/A %.3f" % (ta, tb, tb / ta))
