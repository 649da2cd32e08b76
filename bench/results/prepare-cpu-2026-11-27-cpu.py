#!/usr/bin/env python3
# sysbench prepare against a running server: client CPU (/usr/bin/time) vs the server's (/proc), per thread.
# Usage: prepare-cpu-2026-11-27-cpu.py PORT SERVER_PID TABLES TABLE_SIZE THREADS strata|innodb
"""Run sysbench prepare against a running server at PORT; report CPU of client and server (per thread name)."""
import os, subprocess, sys, time, collections
port, pid, tables, size, threads, engine = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
tck = os.sysconf('SC_CLK_TCK')
def threads_cpu(pid):
    out = collections.Counter()
    for t in os.listdir('/proc/%d/task' % pid):
        try:
            s = open('/proc/%d/task/%s/stat' % (pid, t)).read()
        except OSError:
            continue
        name = s[s.index('(')+1:s.rindex(')')]
        f = s[s.rindex(')')+2:].split()
        out[(t, name)] += (int(f[11]) + int(f[12])) / tck
    return out
before = threads_cpu(pid)
cmd = ["/usr/bin/time", "-f", "client user %U sys %S wall %e", "sysbench", "oltp_read_write", "--db-driver=mysql", "--mysql-host=127.0.0.1",
       "--mysql-port=%s" % port, "--mysql-user=root", "--mysql-db=sbtest", "--tables=%d" % tables,
       "--table-size=%d" % size, "--threads=%d" % threads] + (["--mysql-storage-engine=innodb"] if engine == "innodb" else []) + ["prepare"]
def proc_cpu(pid):
    f = open('/proc/%d/stat' % pid).read()
    f = f[f.rindex(')')+2:].split()
    return (int(f[11]) + int(f[12])) / tck
p0 = proc_cpu(pid)
t = time.time()
p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
after = collections.Counter(before)
while p.poll() is None:
    for k, v in threads_cpu(pid).items():
        after[k] = max(after[k], v)
    time.sleep(0.05)
out, err = p.communicate()
wall = time.time() - t
time.sleep(0.3)
for k, v in threads_cpu(pid).items():
    after[k] = max(after[k], v)
p.stderr = err
print("server process total %.2f" % (proc_cpu(pid) - p0))
print(p.stderr.strip().splitlines()[-1])
print("wall %.2f" % wall)
by = collections.Counter()
for k, v in after.items():
    d = v - before.get(k, 0)
    if d > 0.005:
        by[k[1]] += d
tot = sum(by.values())
print("server total %.2f" % tot)
for n, v in by.most_common():
    print("  %-24s %.2f" % (n, v))
