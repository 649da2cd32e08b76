#!/bin/bash
# run.sh NAME BIN DATADIR [EXTRA CF OPTS] : callgrind, real-ratio shape (block cache 11% of data,
# memtable 2.8%, level base and file size scaled 41/1330), 3000 oltp_write_only transactions
export OUT=/tmp/zh/run PORT=${PORT:-4571} WORKLOAD=oltp_write_only CACHE=4600K WBUF=1M
export EXTRA="--default-cf-options=max_bytes_for_level_base=8m;target_file_size_base=2m$4"
bench/results/read-cpu-2026-11-26b-cg.sh "$1" "$2" "$3" ${EV:-3000}
