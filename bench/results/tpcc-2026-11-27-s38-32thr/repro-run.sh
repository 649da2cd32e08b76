#!/bin/bash
# Session 38 OOM reproduction: a copy of a loaded TPC-C template in /work/ht/template, a 600 MB cgroup, 32 threads (see NOTE.md).
# usage: run.sh BIN SECONDS [THREADS]  — server from template in a 600M cgroup, tpcc run
set -u
BIN=$1; SECS=$2; THR=${3:-32}
cg=/sys/fs/cgroup/memory/ht-run
pkill -f "datadir=/work/ht/data" ; sleep 1
rm -rf /work/ht/data; cp -a /work/ht/template /work/ht/data
sync; echo 3 > /proc/sys/vm/drop_caches
[ -d $cg ] || mkdir $cg
echo 629145600 > $cg/memory.limit_in_bytes
sh -c 'echo $$ > '$cg'/cgroup.procs && exec "$@"' x $BIN --datadir=/work/ht/data --port=3407 --bind-address=127.0.0.1 --socket=/work/ht/sock --block-cache-size=150M --write-buffer-size=37M --sync-on-commit=1 --background-jobs=2 --max-connections=512 > /work/ht/server.log 2>&1 &
for i in $(seq 60); do mysql -h127.0.0.1 -P3407 -uroot -e 'select 1' >/dev/null 2>&1 && break; sleep 1; done
( while sleep 5; do p=$(pgrep -f "datadir=/work/ht/data" | head -1); [ -z "$p" ] && break; echo "$(date +%T) rss $(grep VmRSS /proc/$p/status | awk '{print $2}') kB cg_rss $(grep '^rss ' $cg/memory.stat | awk '{print $2/1048576}') MB cache $(grep '^cache ' $cg/memory.stat | awk '{print $2/1048576}') MB bc $(mysql -N -h127.0.0.1 -P3407 -uroot -e "show global status like 'Strata_block_cache_usage'" 2>/dev/null | awk '{print int($2/1048576)}') imm $(mysql -N -h127.0.0.1 -P3407 -uroot -e "show global status where variable_name in ('Strata_l0_files','Strata_compactions','Strata_flushes','Strata_snapshots')" 2>/dev/null | tr '\t\n' ': ')"; done ) > /work/ht/mem.log &
cd /work/shared/vendor/sysbench-tpcc
sysbench tpcc.lua --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=3407 --mysql-user=root --mysql-db=tpcc --tables=1 --scale=31 --threads=$THR --trx_level=RC --report-interval=10 --time=$SECS run 2>&1 | tail -25 > /work/ht/sysbench.log
grep -c oom_kill /dev/null; cat $cg/memory.oom_control | tail -1
mysql -h127.0.0.1 -P3407 -uroot -e 'shutdown' 2>/dev/null; sleep 3; pkill -f "datadir=/work/ht/data"; sleep 2
