#!/bin/bash
# TPC-C under callgrind with flushes in the window (bench/results/prepopulate-2026-11-27.md):
# tpcc-cpu-2026-11-27-run.sh's shape (2 warehouses, template /tmp/tcpu/tpl, 64 MB block cache,
# 2 threads, 200 warm-up transactions) with a 1 MB memtable (WBUF) so that the measured EV
# transactions hold flushes and L0 compactions, as a long run does with its 16 MB one.
# usage: prepopulate-2026-11-27-tpcc.sh BIN NAME CF_OPTIONS   (e.g. CF_OPTIONS =
#   'max_bytes_for_level_base=8m;target_file_size_base=2m;block_based_table_factory={prepopulate_block_cache=kDisable}':
#   level base and file size scaled down with the memtable, as write-cpu-2026-11-27b.md does)
# -> OUT/NAME.cg (callgrind), OUT/NAME.status (Strata_* counters before/after the window)
BIN=$1; NAME=$2; CFO=$3; EV=${EV:-300}; WBUF=${WBUF:-1M}; PORT=${PORT:-34572}
OUT=${OUT:-/tmp/tcpu2}; mkdir -p $OUT
D=$OUT/run-$NAME
rm -rf $D; cp -a /tmp/tcpu/tpl $D; rm -f $D/strata.sock $D/s.sock
setsid valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=$OUT/$NAME.cg $BIN \
  --datadir=$D --port=$PORT --bind-address=127.0.0.1 --socket=$D/s.sock --block-cache-size=64M \
  --write-buffer-size=$WBUF --sync-on-commit=1 --background-jobs=2 \
  --transaction-isolation=REPEATABLE-READ "--default-cf-options=$CFO" > $OUT/$NAME.srv.log 2>&1 &
PID=$!
for i in $(seq 1 300); do mysql -h127.0.0.1 -P$PORT -uroot -e "select 1" >/dev/null 2>&1 && break; sleep 1; done
st() { mysql -h127.0.0.1 -P$PORT -uroot -N -e "show global status" | grep -wE "Questions|Strata_block_cache_hits|Strata_block_cache_misses|Strata_flushes|Strata_compactions|Strata_bytes_read"; }
SB="sysbench tpcc.lua --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=root --mysql-db=tpcc --tables=1 --scale=2 --threads=2 --rand-seed=1"
cd /work/shared/vendor/sysbench-tpcc
$SB --events=200 --time=0 run > $OUT/$NAME.warm.log 2>&1
st > $OUT/$NAME.status; echo --- >> $OUT/$NAME.status
callgrind_control -i on $PID >/dev/null
$SB --events=$EV --time=0 run > $OUT/$NAME.run.log 2>&1
callgrind_control -i off $PID >/dev/null; callgrind_control -d $PID > /dev/null
st >> $OUT/$NAME.status
kill $PID; sleep 5; kill -0 $PID 2>/dev/null && kill -9 $PID
F=$(ls -S $OUT/$NAME.cg* | head -1)
IR=$(callgrind_annotate $F 2>/dev/null | grep -m1 "PROGRAM TOTALS" | awk '{gsub(",","",$1); print $1}')
FG=$(callgrind_annotate --inclusive=yes $F 2>/dev/null | grep -m1 "conn::serve " | awk '{gsub(",","",$1); print $1}')
echo "$NAME Ir $IR per trx $((IR / EV)) foreground (conn::serve) $((FG / EV)) file $F"
awk -v n=$NAME '/---/{s=1;next} !s{a[$1]=$2} s{print n, $1, $2-a[$1]}' $OUT/$NAME.status
