"""bench/oltp: sysbench OLTP harness comparing MariaDB InnoDB, MariaDB MyRocks and Strata.

Modules:
  config   - command line, quick/full/sweep presets, the run plan and its duration estimate
  progress - the one-line progress display and the harness log
  procfs   - /proc/PID/{io,stat} samples, size on disk, machine facts
  cgroup   - memory cgroups (v1, or v2) that confine each server and report peak/OOM
  engines  - how each engine is configured, started, stopped and inspected
  sysbench - sysbench command lines, live execution and output parsing
  setup    - Debian packages, the system MariaDB service, matplotlib, the Strata build
  runner   - the orchestration: load, template, restore, warm-up, measure, clean up
  report   - results.json and report.md
  plots    - PNG figures
"""

HARNESS_VERSION = "1.0"
