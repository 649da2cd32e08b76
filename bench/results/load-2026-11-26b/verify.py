"""Loads one 1M-row file five ways into Strata (bulk ordered, shuffled, row path, CREATE INDEX
after, ordered then repeated) and checks the results are identical and CHECK TABLE is OK.
usage: verify.py STRATA_BINARY"""
import os, sys, random, shutil
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from sbkit import StrataServer, free_port, sql
binp = sys.argv[1]
src = "/tmp/bulk-prof/data-1000000.tsv"
if not os.path.exists(src):
    # bench/load's generator: sysbench-shaped rows in id order.
    import importlib.machinery, importlib.util
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "load")
    loader = importlib.machinery.SourceFileLoader("loadbench", path)
    lb = importlib.util.module_from_spec(importlib.util.spec_from_loader("loadbench", loader))
    loader.exec_module(lb)
    os.makedirs(os.path.dirname(src), exist_ok=True)
    lb.make_file(src, 1000000)
shuf = "/tmp/bulk-prof/data-shuf.tsv"
if not os.path.exists(shuf):
    lines = open(src).readlines()
    random.Random(7).shuffle(lines)
    # a few repeated ids (IGNORE keeps the first)
    lines += lines[:1000]
    open(shuf, "w").writelines(lines)
late = "/tmp/bulk-prof/data-late.tsv"
if not os.path.exists(late):
    lines = open(src).readlines()
    open(late, "w").writelines(lines + lines[:1000])
dd = "/tmp/bulk-prof/verify-data"; shutil.rmtree(dd, ignore_errors=True)
port = free_port()
srv = StrataServer(binp, dd, port, "/tmp/bulk-prof/verify.log", ["--secure-file-priv="])
srv.start()
S = ("CREATE TABLE d.%s (id INTEGER NOT NULL, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, "
     "pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)%s)")
try:
    sql(port, "CREATE DATABASE d")
    out = {}
    for name, f, idx, mode in [("bulk_ord", src, ", KEY k (k)", "bulk"), ("bulk_shuf", shuf, ", KEY k (k)", "bulk"),
                               ("row_ord", src, ", KEY k (k)", "row"), ("bulk_ci", shuf, "", "bulk"), ("bulk_late", late, ", KEY k (k)", "bulk")]:
        sql(port, S % (name, idx))
        ign = "IGNORE" if f != src else ""
        load = "LOAD DATA INFILE '%s' %s INTO TABLE d.%s" % (f, ign, name)
        if mode == "row":
            load = "SET strata_max_txn_memory=%d; SET autocommit=0; %s; COMMIT" % (16 << 30, load)
        sql(port, load, timeout=3600)
        if not idx:
            sql(port, "CREATE INDEX k ON d.%s (k)" % name, timeout=3600)
        chk = sql(port, "CHECK TABLE d.%s" % name)
        s1 = sql(port, "SELECT COUNT(*), SUM(CRC32(CONCAT_WS(',', id, k, c, pad))) FROM d.%s" % name)
        s2 = sql(port, "SELECT COUNT(*), SUM(CRC32(CONCAT(id, ',', k))) FROM d.%s FORCE INDEX (k) WHERE k > 0" % name)
        out[name] = (s1, s2)
        print(name, chk, s1, s2, flush=True)
    print(sql(port, "SHOW GLOBAL STATUS LIKE 'Strata_bulk_load_rows'"))
    vals = set(str(v) for v in out.values())
    print("IDENTICAL" if len(vals) == 1 else "DIFFERENT")
finally:
    srv.stop()
