#!/bin/bash
# When the server's RSS passes $1 kB, dump all thread stacks (gdb stops the process meanwhile).
TH=${1:-480000}
while true; do
  p=$(pgrep -f "datadir=/work/ht/data" | head -1)
  if [ -n "$p" ]; then
    r=$(awk '/VmRSS/{print $2}' /proc/$p/status 2>/dev/null)
    if [ -n "$r" ] && [ "$r" -gt "$TH" ]; then
      echo "rss $r at $(date +%T.%N)" > /work/ht/stacks.txt
      gdb -p $p --batch -ex "thread apply all bt 40" >> /work/ht/stacks.txt 2>&1
      echo "after: $(awk '/VmRSS/{print $2}' /proc/$p/status)" >> /work/ht/stacks.txt
      exit 0
    fi
  fi
  sleep 0.1
done
