#!/bin/bash
# The TPC-C CPU measurement of bench/results/tpcc-cpu-2026-11-27.md.
# usage: tpcc-cpu-2026-11-27-run.sh BIN MODE(cg|strace|plain) EVENTS OUT
# Needs the template /tmp/tcpu/tpl: a datadir with sysbench-tpcc's 2 warehouses, made once
# by a release server (same flags as below, port 34561) and
#   sysbench tpcc.lua --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=34561 \
#     --mysql-user=root --mysql-db=tpcc --tables=1 --scale=2 --threads=2 prepare
# Each run copies it, starts BIN (cg: under callgrind, instrumentation off), runs 200
# warm-up transactions, then EVENTS measured ones with 2 threads (cg: instrumented, then
# dumped to OUT.cg.1; strace: `strace -c -f` attached for them, OUT.strace).
BIN=$1; MODE=$2; EV=$3; OUT=$4
PORT=34562
D=/tmp/tcpu/run-$MODE
rm -rf $D; cp -a /tmp/tcpu/tpl $D; rm -f $D/strata.sock
ARGS="--datadir=$D --port=$PORT --bind-address=127.0.0.1 --socket=$D/s.sock --block-cache-size=64M --write-buffer-size=16M --sync-on-commit=1 --background-jobs=2 --transaction-isolation=REPEATABLE-READ"
case $MODE in
 cg) setsid valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=$OUT.cg $BIN $ARGS > $OUT.srv.log 2>&1 & ;;
 strace) setsid $BIN $ARGS > $OUT.srv.log 2>&1 & ;;
 plain) setsid $BIN $ARGS > $OUT.srv.log 2>&1 & ;;
esac
PID=$!
for i in $(seq 1 120); do mysql -h127.0.0.1 -P$PORT -uroot -e "select 1" >/dev/null 2>&1 && break; sleep 1; done
SB="sysbench tpcc.lua --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=root --mysql-db=tpcc --tables=1 --scale=2 --threads=2 --rand-seed=1"
cd /work/shared/vendor/sysbench-tpcc
$SB --events=200 --time=0 run > $OUT.warm.log 2>&1
q0=$(mysql -h127.0.0.1 -P$PORT -uroot -N -e "show global status like 'Questions'" | awk '{print $2}')
case $MODE in
 cg) callgrind_control -i on $PID >/dev/null ;;
 strace) strace -c -f -p $PID -o $OUT.strace & SPID=$!; sleep 2 ;;
esac
$SB --events=$EV --time=0 run > $OUT.run.log 2>&1
case $MODE in
 cg) callgrind_control -i off $PID >/dev/null; callgrind_control -d $PID > /dev/null ;;
 strace) kill -INT $SPID; wait $SPID ;;
esac
q1=$(mysql -h127.0.0.1 -P$PORT -uroot -N -e "show global status like 'Questions'" | awk '{print $2}')
echo "questions $((q1-q0)) events $EV" | tee $OUT.q
grep -E "transactions:|queries:" $OUT.run.log
kill $PID; sleep 5; kill -0 $PID 2>/dev/null && kill -9 $PID
