#!/bin/bash
# ages the prepared datadir in the real-ratio shape: 40000 write-only transactions natively
set -e
rm -rf /tmp/zh/aged; cp -a /tmp/zh/prep /tmp/zh/aged; P=4573
/tmp/zh/A-strata --datadir=/tmp/zh/aged --port=$P --bind-address=127.0.0.1 --socket=/tmp/zh/aged.sock \
  --block-cache-size=4600K --write-buffer-size=1M --transaction-isolation=REPEATABLE-READ \
  '--default-cf-options=max_bytes_for_level_base=8m;target_file_size_base=2m' > /tmp/zh/aged.log 2>&1 &
SP=$!
for i in $(seq 1 100); do mariadb --protocol=TCP -h127.0.0.1 -P$P -uroot -e 'select 1' >/dev/null 2>&1 && break; sleep 0.3; done
sysbench oltp_write_only --mysql-port=$P --tables=4 --table-size=100000 --db-driver=mysql --mysql-host=127.0.0.1 --mysql-user=root --mysql-db=sbtest --rand-type=uniform --rand-seed=11 --threads=4 --time=0 --events=40000 run | grep -E "transactions:|total time"
sleep 5
mariadb --protocol=TCP -h127.0.0.1 -P$P -uroot -e "show global status like 'Strata%'" > /tmp/zh/aged.status 2>&1 || true
kill $SP; wait $SP || true
du -sh /tmp/zh/aged; ls -la /tmp/zh/aged | grep sst | wc -l
