#!/bin/bash
# block size A/B at 600 MB, wall clock: 16K vs 4K alternating, Strata 0c8814e
cd /work/main
A="--engines strata --workloads ro,wo --threads 8 --mem 600M --data 3000M --rounds 1 --configs strata=bc1_4 --duration-read 60 --duration-write 60 --warmup 30 --warmup-read-max 60 --drain 5 --strata-bin /work/bin/strata-0c8814e --no-build --no-plots --freeze-cgroup /sys/fs/cgroup/freezer/lowprio"
for i in 1 2; do for bs in 16K 4K; do
  echo "== $(date -u +%T) round $i block $bs"
  bench/oltp $A --strata-arg=--block-size=$bs --out /work/runs/bs-$bs-$i > /work/runs/bs-$bs-$i.log 2>&1
  grep -E "QPS|qps|tps" /work/runs/bs-$bs-$i.log | tail -4
done; done
echo "== done $(date -u +%T)"
