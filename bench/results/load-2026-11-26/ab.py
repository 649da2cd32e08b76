#!/usr/bin/env python3
"""Interleaved A/B of Strata load steps: wall seconds and server CPU seconds per step.
usage: ab.py A_BIN B_BIN ROUNDS STEP[,STEP] ; steps: prep_bulk prep_row load_bulk load_row index"""
import os, subprocess, sys, time, statistics, shutil, json
A, B, R, STEPS = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4].split(",")
TCK = os.sysconf("SC_CLK_TCK")
F = "/tmp/prof/files/load300k.tsv"
def cpu(pid):
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / TCK
def q(port, s):
    subprocess.run(["mariadb", "--protocol=TCP", "-h127.0.0.1", "-P%d" % port, "-uroot", "-e", s], check=True)
def start(name, binary, port):
    d = "/tmp/prof/ab-%s" % name
    shutil.rmtree(d, ignore_errors=True)
    p = subprocess.Popen([binary, "--datadir=" + d, "--port=%d" % port, "--bind-address=127.0.0.1", "--socket=",
                          "--secure-file-priv=/tmp/prof/files"], stdout=open(d + ".log", "w"), stderr=subprocess.STDOUT)
    for _ in range(100):
        if subprocess.run(["mariadb", "--protocol=TCP", "-h127.0.0.1", "-P%d" % port, "-uroot", "-e", "select 1"],
                          capture_output=True).returncode == 0:
            return p
        time.sleep(0.2)
    raise SystemExit("no start")
SB = "sysbench oltp_read_write --db-driver=mysql --mysql-host=127.0.0.1 --mysql-user=root --mysql-db=sbtest --tables=4 --table-size=150000 --threads=4"
T = "CREATE TABLE sbtest.l (id INTEGER NOT NULL, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id))"
def step(port, s):
    q(port, "DROP DATABASE IF EXISTS sbtest; CREATE DATABASE sbtest")
    if s.startswith("prep"):
        if s == "prep_bulk": q(port, "SET GLOBAL strata_bulk_load=1")
        return lambda: (subprocess.run((SB + " --mysql-port=%d prepare" % port).split(), capture_output=True, check=True),
                        q(port, "SET GLOBAL strata_bulk_load=0"))
    q(port, T)
    if s == "load_bulk": return lambda: q(port, "LOAD DATA INFILE '%s' INTO TABLE sbtest.l" % F)
    if s == "load_row": return lambda: q(port, "SET strata_max_txn_memory=8000000000; SET autocommit=0; LOAD DATA INFILE '%s' INTO TABLE sbtest.l; COMMIT" % F)
    if s == "index":
        q(port, "LOAD DATA INFILE '%s' INTO TABLE sbtest.l" % F)
        return lambda: q(port, "CREATE INDEX k ON sbtest.l (k)")
srv = {"A": (start("A", A, 4511), 4511), "B": (start("B", B, 4512), 4512)}
res = {(k, s): [] for k in srv for s in STEPS}
for r in range(R):
    for s in STEPS:
        for k in (["A", "B"] if r % 2 == 0 else ["B", "A"]):
            p, port = srv[k]
            fn = step(port, s)
            c0, t0 = cpu(p.pid), time.time()
            fn()
            res[(k, s)].append((time.time() - t0, cpu(p.pid) - c0))
for p, _ in srv.values():
    p.terminate(); p.wait()
out = {}
for s in STEPS:
    a, b = res[("A", s)], res[("B", s)]
    wa, wb = statistics.median(x[0] for x in a), statistics.median(x[0] for x in b)
    ca, cb = statistics.median(x[1] for x in a), statistics.median(x[1] for x in b)
    wr = [x[0] / y[0] for x, y in zip(a, b)]
    print("%-10s wall A %.2f B %.2f (A/B per round %s)  cpu A %.2f B %.2f (A/B %.2f)" % (
        s, wa, wb, " ".join("%.2f" % x for x in wr), ca, cb, ca / cb))
    out[s] = {"A_wall": [x[0] for x in a], "B_wall": [x[0] for x in b], "A_cpu": [x[1] for x in a], "B_cpu": [x[1] for x in b]}
json.dump(out, open("/tmp/prof/ab-%d.json" % int(time.time()), "w"))
