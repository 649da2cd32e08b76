#!/bin/bash
# Instructions per sysbench transaction (WORKLOAD, default oltp_read_only) under callgrind (read-cpu-2026-11-26b.md, -26c.md).
# usage: [WORKLOAD=oltp_read_write] read-cpu-2026-11-26b-cg.sh NAME BINARY DATADIR EVENTS  -> Ir per transaction under callgrind
# CACHE, WBUF: the server's block cache and memtable size (default 256M, 64M; write-cpu-2026-11-27.md
# uses CACHE=8M WBUF=1M for reads that miss the cache and flushes and compactions in the window).
# EXTRA: more server arguments (write-cpu-2026-11-27b.md scales the level sizes to the data with
# --default-cf-options=...).
# Also prints the foreground share: the inclusive cost of conn::serve (the measured run's connection
# starts after instrumentation is on), and the rest as background (flush, compaction).
set -e
OUT=${OUT:-/tmp/read}; mkdir -p $OUT
NAME=$1; BIN=$2; DATA=$3; EV=${4:-200}; PORT=${PORT:-4410}
D=$OUT/cg-$NAME; W=${WORKLOAD:-oltp_read_only}
rm -rf $D; cp -a $DATA $D
rm -f $OUT/callgrind.$NAME.out*
valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=$OUT/callgrind.$NAME.out \
  $BIN --datadir=$D --port=$PORT --bind-address=127.0.0.1 --socket=$OUT/cg-$NAME.sock \
  --block-cache-size=${CACHE:-256M} --write-buffer-size=${WBUF:-64M} --transaction-isolation=REPEATABLE-READ $EXTRA > $OUT/cg-$NAME.log 2>&1 &
VP=$!
for i in $(seq 1 600); do mariadb --protocol=TCP -h127.0.0.1 -P$PORT -uroot -e 'select 1' >/dev/null 2>&1 && break; sleep 0.5; done
SB="sysbench $W --mysql-port=$PORT --tables=4 --table-size=100000 --db-driver=mysql --mysql-host=127.0.0.1 --mysql-user=root --mysql-db=sbtest --rand-type=uniform --rand-seed=7 --skip-trx=off --threads=1 --time=0"
for t in 1 2 3 4; do mariadb --protocol=TCP -h127.0.0.1 -P$PORT -uroot sbtest -e "select count(*), sum(length(c)), sum(k) from sbtest$t" >/dev/null; done
$SB --events=20 run >/dev/null   # warm-up (plans, caches)
callgrind_control -i on $VP >/dev/null
$SB --events=$EV run > $OUT/cg-$NAME.sb
callgrind_control -i off $VP >/dev/null
callgrind_control -d $VP >/dev/null
kill $VP; wait $VP || true
F=$(ls -S $OUT/callgrind.$NAME.out* | head -1)
IR=$(callgrind_annotate $F 2>/dev/null | grep -m1 "PROGRAM TOTALS" | awk '{gsub(",","",$1); print $1}')
FGI=$(callgrind_annotate --inclusive=yes $F 2>/dev/null | grep -m1 "conn::serve " | awk '{gsub(",","",$1); print $1}')
echo "$NAME $W Ir total $IR  per trx $((IR / EV))  foreground $((${FGI:-0} / EV))  background $(((IR - ${FGI:-0}) / EV))  file $F"
