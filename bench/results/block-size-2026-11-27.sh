#!/bin/bash
# Data block size A/B under callgrind (block-size-2026-11-27.md). Run from the repository root.
#   block-size-2026-11-27.sh prep BS          sysbench prepare, 4 x 100k rows, --block-size=BS -> $W/prep-BS
#   block-size-2026-11-27.sh age BS           40,000 oltp_write_only transactions natively in the
#                                             real-ratio shape (write-cpu-2026-11-27b.md) -> $W/aged-BS
#   block-size-2026-11-27.sh cg NAME BS WORKLOAD EVENTS DATADIR   callgrind, real-ratio shape
#   block-size-2026-11-27.sh cg256 NAME BS WORKLOAD EVENTS DATADIR  callgrind, 256M cache (all cached)
#   block-size-2026-11-27.sh space DIR...     .sst bytes; data, index, filter bytes and data blocks
# BIN: the release server (default /tmp/bs/strata); TOOL: strata-tool; W: work directory.
set -e
BIN=${BIN:-/tmp/bs/strata}; TOOL=${TOOL:-target/release/strata-tool}; W=${W:-/tmp/bs}
SHAPE="--block-cache-size=4600K --write-buffer-size=1M --transaction-isolation=REPEATABLE-READ"
LEVELS="--default-cf-options=max_bytes_for_level_base=8m;target_file_size_base=2m"
up() { for i in $(seq 1 100); do mariadb --protocol=TCP -h127.0.0.1 -P$1 -uroot -e 'select 1' >/dev/null 2>&1 && return; sleep 0.3; done; }
cmd=$1; shift
case $cmd in
prep)
  BS=$1; D=$W/prep-$BS; P=${PORT:-4601}; rm -rf $D
  $BIN --datadir=$D --port=$P --bind-address=127.0.0.1 --socket=$W/prep-$BS.sock --block-size=$BS > $W/prep-$BS.log 2>&1 &
  SP=$!; up $P
  mariadb --protocol=TCP -h127.0.0.1 -P$P -uroot -e 'create database sbtest'
  sysbench oltp_write_only --tables=4 --table-size=100000 --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$P --mysql-user=root --mysql-db=sbtest prepare >/dev/null
  kill $SP; wait $SP || true ;;
age)
  BS=$1; D=$W/aged-$BS; P=${PORT:-4602}; rm -rf $D; cp -a $W/prep-$BS $D
  $BIN --datadir=$D --port=$P --bind-address=127.0.0.1 --socket=$W/aged-$BS.sock --block-size=$BS $SHAPE "$LEVELS" > $W/aged-$BS.log 2>&1 &
  SP=$!; up $P
  sysbench oltp_write_only --mysql-port=$P --tables=4 --table-size=100000 --db-driver=mysql --mysql-host=127.0.0.1 --mysql-user=root --mysql-db=sbtest --rand-type=uniform --rand-seed=11 --threads=4 --time=0 --events=40000 run | grep -E "transactions:"
  sleep 5
  mariadb --protocol=TCP -h127.0.0.1 -P$P -uroot -e "show engine strata status\G" > $W/aged-$BS.status || true
  kill $SP; wait $SP || true ;;
cg|cg256)
  NAME=$1 BS=$2; export OUT=$W/run WORKLOAD=$3
  if [ $cmd = cg ]; then export CACHE=4600K WBUF=1M EXTRA="--block-size=$BS $LEVELS"
  else export CACHE=256M WBUF=64M EXTRA="--block-size=$BS"; fi
  bench/results/read-cpu-2026-11-26b-cg.sh "$NAME" $BIN "$5" "$4" | tail -1 > $W/$NAME.res
  F=$(ls -S $OUT/callgrind.$NAME.out* | head -1)
  callgrind_annotate --inclusive=yes --threshold=100 $F > $W/$NAME.incl 2>/dev/null
  cat $W/$NAME.res
  # Zstd: inclusive Ir of ZSTD_decompressDCtx / ZSTD_compress2 and their call counts (blocks)
  grep -E "^ *[0-9,]+ \([ 0-9.]+%\)  \S*:(ZSTD_decompressDCtx|ZSTD_compress2) " $W/$NAME.incl
  grep -E "=> \S*:(ZSTD_decompressDCtx|ZSTD_compress2) \(" $W/$NAME.incl ;;
space)
  for D in "$@"; do
    tot=0; data=0; idx=0; flt=0; nb=0
    for f in $D/*.sst; do
      tot=$((tot + $(stat -c %s $f)))
      eval $($TOOL sst $f | head -12 | awk -F': ' '/^(data_size|index_size|filter_size|num_data_blocks):/{print $1"="$2}')
      data=$((data + data_size)); idx=$((idx + index_size)); flt=$((flt + filter_size)); nb=$((nb + num_data_blocks))
    done
    echo "$D sst_bytes $tot data $data index $idx filter $flt data_blocks $nb"
  done ;;
esac
