"""bench/tpcc's pieces: plan (options, sizing, estimate), stats (pure summaries), run (load
and one measured run in a memory cgroup), report (markdown), plots (matplotlib)."""
