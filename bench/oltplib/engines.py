"""The three engines: how each is configured for a memory limit, initialised, started in its
cgroup, queried, inspected for leftover background work ("debt") and stopped.

Settings follow seed 000 (ACID: sync on every commit) scaled to the memory limit L:
  InnoDB  innodb_flush_log_at_trx_commit=1, O_DIRECT, buffer pool 0.75 L, REPEATABLE-READ
  MyRocks rocksdb_flush_log_at_trx_commit=1, buffered I/O, block cache L/8, LZ4 if the
          plugin has it, READ-COMMITTED (MyRocks RR turns write conflicts into errors)
  Strata  --sync-on-commit=1, block cache L/4, memtable L/16 (8-64 MB), 2 background jobs,
          REPEATABLE-READ, buffered I/O through the page cache; the server's table defaults
          (16 KB blocks, LZ4 above the bottommost level, Zstd at it, index and filter
          blocks in the block cache at high priority); then any --strata-arg
The binary log is off by default (`skip-log-bin`; Strata without --log-bin), unlike the seed;
with `--binlog on` (engine.binlog set for the run) every engine writes it as the seed did:
MariaDB log-bin, binlog_format=ROW, sync_binlog=1 (MyRocks with rocksdb_enable_2pc=ON, checked:
MariaDB's MyRocks has no group-commit hook for the log, so each prepare syncs its WAL itself,
unlike the seed's Percona Server 8.4); Strata --log-bin --binlog-format=ROW --sync-binlog=1 (its log rides
in the engine's own commit, synced by --sync-on-commit=1). The buffer-pool dump/load at restart is off so that every
run starts cold. MariaDB's own caches
that MySQL sizes smaller (key cache, Aria page cache, sort buffer) get MySQL 8.4's defaults.
"""

import os
import re
import shutil
import subprocess
import time

from . import proc as srvproc
from .config import MiB
from .proc import tail
from .procfs import dir_size, port_open

MARIADBD = "/usr/sbin/mariadbd"

# Cache configurations swept by --sweep-peers, as (name, (numerator, denominator) of the memory
# limit); the first of each list is the default (the seed's for InnoDB and MyRocks), which
# also wins a tie. InnoDB: buffer pool; MyRocks and Strata: block cache (the rest of the
# limit is the OS page cache, the memtables and the server's own memory).
VARIANTS = {
    "innodb": [("bp75", (3, 4)), ("bp60", (3, 5)), ("bp50", (1, 2))],
    "myrocks": [("bc1_8", (1, 8)), ("bc1_4", (1, 4)), ("bc1_2", (1, 2)), ("dr1_2", (1, 2)),
                ("dr3_5", (3, 5))],
    "strata": [("bc1_4", (1, 4)), ("bc1_8", (1, 8)), ("bc1_2", (1, 2)), ("dr1_2", (1, 2)),
               ("dr3_5", (3, 5))],
}
# The LSM engines' dr* variants read table files with O_DIRECT (no OS page cache for reads; the
# block cache is then the only read cache, so it gets most of the limit, as InnoDB's pool).
VARIANT_LABEL = {"bp75": "buffer pool 75%", "bp60": "buffer pool 60%", "bp50": "buffer pool 50%",
                 "bc1_8": "block cache 1/8", "bc1_4": "block cache 1/4", "bc1_2": "block cache 1/2",
                 "dr1_2": "direct reads, block cache 1/2", "dr3_5": "direct reads, block cache 3/5"}


def direct_reads(variant):
    """True for the cache configurations that read table files with O_DIRECT."""
    return variant.startswith("dr")
CLIENT = "mariadb"


class EngineError(Exception):
    pass


def sql(port, query, timeout=60):
    """Run one statement over TCP as root; returns rows as lists of strings."""
    cmd = [CLIENT, "--protocol=TCP", "-h", "127.0.0.1", "-P", str(port), "-uroot",
           "-N", "-B", "--connect-timeout=5", "-e", query]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise EngineError("query timed out: %s" % query)
    if p.returncode != 0:
        raise EngineError("query failed (%s): %s" % (query, p.stderr.strip()))
    return [line.split("\t") for line in p.stdout.splitlines()]


class Engine:
    name = label = ""
    prepare_args = []

    def __init__(self, cfg, workdir, port):
        self.cfg = cfg
        self.base = os.path.join(workdir, self.name)
        self.datadir = os.path.join(self.base, "data")
        self.template = os.path.join(self.base, "template")
        self.rundir = os.path.join(self.base, "run")
        self.log_path = os.path.join(self.rundir, "server.log")
        self.port = port
        self.available = True
        self.reason = ""
        self.extra = {}  # facts learned at run time (e.g. compression), recorded in results
        # Cache configuration (a VARIANTS name) per memory limit, chosen by --sweep-peers or set
        # for one sweep run; the default (first) where absent.
        self.variant = {}
        # The binary log on for the server about to start (a run of --binlog on); never for
        # the load and its template.
        self.binlog = False

    def variant_name(self, limit):
        return self.variant.get(limit) or VARIANTS[self.name][0][0]

    def cache_fraction(self, limit):
        """(numerator, denominator) of the limit for the engine's main cache at this limit."""
        choices = dict(VARIANTS[self.name])
        return choices.get(self.variant.get(limit), VARIANTS[self.name][0][1])

    # -- to override -------------------------------------------------------------------
    def settings(self, limit, probe=False):
        return {}

    def argv(self, limit, probe=False):
        raise NotImplementedError

    def init_datadir(self):
        os.makedirs(self.datadir, exist_ok=True)

    def post_init(self):
        sql(self.port, "CREATE DATABASE IF NOT EXISTS sbtest")

    def before_template_stop(self):
        pass

    def debt(self):
        return {}

    def wait_compactions(self, timeout=900):
        """LSM engines: after the load, wait (up to `timeout` s) until the compaction debt
        estimate is 0, so that the template is as settled as InnoDB's after its slow shutdown
        and no run starts by paying for the load's compactions."""
        end = time.time() + timeout
        while time.time() < end:
            d = self.debt() or {}
            if not d.get("debt_bytes"):
                return True
            time.sleep(2)
        return False

    # Engine-reported write counters: WRITE_KEYS maps common names ("log", "flush",
    # "compaction", "pages", "stall_us", "user") to keys of counters(); the runner takes their
    # deltas over the measured window and divides by the transactions.
    WRITE_KEYS = {}

    def counters(self):
        return {}

    @staticmethod
    def realized_debt(end, after):
        """Bytes of background jobs that finished between the debt() samples taken before and
        after the drain watch (recorded beside debt()'s own estimate); None if not counted."""
        return None

    def data_paths(self):
        return {"datadir": self.datadir}

    def sizes(self):
        """{'datadir': bytes, 'tables': bytes of table data} on disk."""
        out = {k: dir_size(p) for k, p in self.data_paths().items()}
        out.setdefault("tables", out["datadir"])
        return out

    def version(self):
        return ""

    # -- common --------------------------------------------------------------------------
    # With the binary log on, the variables the server must show (checked after each start);
    # subclasses add their engine's (MyRocks: 2PC, without which log and engine can disagree
    # after a crash; Strata: the synced commit that also syncs its log).
    BINLOG_EXPECT = {"log_bin": "1", "binlog_format": "ROW", "sync_binlog": "1"}

    def binlog_expect(self):
        return dict(Engine.BINLOG_EXPECT, **type(self).BINLOG_EXPECT)

    def check_binlog(self):
        """After a start with the binary log on: its variables, or an error if it is not as
        asked (a binlog-on number must never come from a server running without it)."""
        want = self.binlog_expect()
        names = list(want)
        row = (sql(self.port, "SELECT " + ", ".join("@@" + k for k in names)) or [[]])[0]
        got = dict(zip(names, row))
        if any(got.get(k) != v for k, v in want.items()):
            raise EngineError("%s: the binary log should be on (%s), the server says %s" % (
                self.label, ", ".join("%s=%s" % kv for kv in want.items()), got))
        return got

    def binlog_bytes(self):
        """Total size of the binary log files (SHOW BINARY LOGS), to show that the log grew
        during a measured window and by how much per transaction."""
        return sum(int(r[1]) for r in sql(self.port, "SHOW BINARY LOGS") if len(r) > 1 and r[1].isdigit())

    def ping(self):
        try:
            sql(self.port, "SELECT 1", timeout=10)
            return True
        except EngineError:
            return False


class MariaDB(Engine):
    """Shared MariaDB server setup; subclasses add the engine section."""

    def common_settings(self):
        s = {
            "skip-log-bin": None,
            "skip-name-resolve": None,
            "max_connections": 512,
            "max_prepared_stmt_count": 1048576,
            "table_open_cache": 4000,
            "back_log": 1000,
            "connect_timeout": 120,
            "performance_schema": "OFF",
            # MySQL 8.4's defaults (the seed ran Percona Server 8.4) for the caches MariaDB
            # sizes larger: its MyISAM key cache and Aria page cache (128 MB each, used here
            # only by on-disk internal temporary tables) and the per-sort buffer (2 MB). At
            # MariaDB's defaults mariadbd held 619 MB of anonymous memory beside a 450 MB buffer
            # pool and InnoDB stalled at 600 MB in oltp_read_write at 8 threads.
            "key_buffer_size": "8M",
            "aria_pagecache_buffer_size": "8M",
            "sort_buffer_size": "256K",
            "innodb_buffer_pool_dump_at_shutdown": "OFF",
            "innodb_buffer_pool_load_at_startup": "OFF",
        }
        if self.binlog:
            del s["skip-log-bin"]
            s.update({"log-bin": "mysql-bin", "server-id": 1, "binlog_format": "ROW", "sync_binlog": 1})
        return s

    def write_cnf(self, limit, probe=False):
        os.makedirs(self.rundir, exist_ok=True)
        lines = ["[mariadbd]",
                 "user=root",
                 "datadir=%s" % self.datadir,
                 "socket=%s" % os.path.join(self.rundir, "mysqld.sock"),
                 "pid-file=%s" % os.path.join(self.rundir, "mysqld.pid"),
                 "port=%d" % self.port,
                 "bind-address=127.0.0.1",
                 "tmpdir=%s" % self.rundir,
                 "log-error=%s" % self.log_path]
        for k, v in self.settings(limit, probe=probe).items():
            lines.append(k if v is None else "%s=%s" % (k, v))
        path = os.path.join(self.rundir, "my.cnf")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        return path

    def argv(self, limit, probe=False):
        return [MARIADBD, "--defaults-file=%s" % self.write_cnf(limit, probe), "--user=root"]

    def init_datadir(self):
        if os.path.exists(self.datadir):
            shutil.rmtree(self.datadir)
        os.makedirs(self.datadir)
        cnf = self.write_cnf(min(self.cfg.mems), probe=True)
        p = subprocess.run(["mariadb-install-db", "--defaults-file=%s" % cnf, "--user=root",
                            "--datadir=%s" % self.datadir, "--auth-root-authentication-method=normal",
                            "--skip-test-db"], capture_output=True, text=True, timeout=300)
        if p.returncode != 0:
            raise EngineError("mariadb-install-db failed: %s" % (p.stderr or p.stdout)[-2000:])

    def version(self):
        return mariadb_version()


class InnoDB(MariaDB):
    name, label = "innodb", "InnoDB"
    prepare_args = ["--mysql-storage-engine=innodb"]

    def redo_bytes(self):
        # Percona's slow-IO config uses 32 GB of redo for 161 GB of data (1/5); same ratio here.
        return max(96 * MiB, min(4096 * MiB, self.cfg.data_bytes // 5 // MiB * MiB))

    def settings(self, limit, probe=False):
        s = self.common_settings()
        s.update({
            "default_storage_engine": "InnoDB",
            "transaction_isolation": "REPEATABLE-READ",
            "innodb_buffer_pool_size": "%dM" % (limit * self.cache_fraction(limit)[0]
                                                // self.cache_fraction(limit)[1] // MiB),
            "innodb_flush_log_at_trx_commit": 1,
            "innodb_flush_method": "O_DIRECT",
            "innodb_doublewrite": "ON",
            "innodb_log_file_size": "%dM" % (self.redo_bytes() // MiB),
            "innodb_max_dirty_pages_pct": 75,
            "innodb_max_dirty_pages_pct_lwm": 50,
            "innodb_io_capacity": 10000,
            "innodb_adaptive_hash_index": "OFF",
            "innodb_change_buffering": "none",
            "innodb_file_per_table": "ON",
        })
        return s

    WRITE_KEYS = {"log": "innodb_os_log_written", "pages": "page_bytes_written"}

    def counters(self):
        out = {}
        for k, v in sql(self.port, "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_os_log_written',"
                        "'Innodb_pages_written','Innodb_page_size','Innodb_data_written',"
                        "'Innodb_dblwr_pages_written')"):
            out[k.lower()] = int(v)
        out["page_bytes_written"] = out.get("innodb_pages_written", 0) * out.get("innodb_page_size", 16384)
        return out

    def before_template_stop(self):
        # Slow shutdown after the load: purge and merge everything into the template.
        sql(self.port, "SET GLOBAL innodb_fast_shutdown=0")

    def data_paths(self):
        return {"datadir": self.datadir, "tables": os.path.join(self.datadir, "sbtest")}

    def debt(self):
        out = {}
        for k, v in sql(self.port, "SHOW GLOBAL STATUS WHERE Variable_name IN "
                        "('Innodb_buffer_pool_bytes_dirty','Innodb_buffer_pool_pages_dirty')"):
            out[k.lower()] = int(v)
        status = sql(self.port, "SHOW ENGINE INNODB STATUS")
        text = status[0][2].replace("\\n", "\n") if status and len(status[0]) > 2 else ""
        m = re.search(r"History list length (\d+)", text)
        if m:
            out["history_list_length"] = int(m.group(1))
        lsn = re.search(r"Log sequence number\s+(\d+)", text)
        ckp = re.search(r"Last checkpoint at\s+(\d+)", text)
        if lsn and ckp:
            out["checkpoint_age_bytes"] = int(lsn.group(1)) - int(ckp.group(1))
        out["debt_bytes"] = out.get("innodb_buffer_pool_bytes_dirty", 0)
        return out


class MyRocks(MariaDB):
    name, label = "myrocks", "MyRocks"
    BINLOG_EXPECT = {"rocksdb_enable_2pc": "1"}
    prepare_args = ["--mysql-storage-engine=rocksdb"]

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.compression = None  # learned from the plugin on the first start

    def cf_options(self, limit):
        wb = max(8 * MiB, min(64 * MiB, limit // 16)) // MiB
        opts = ["write_buffer_size=%dm" % wb, "max_write_buffer_number=2",
                "target_file_size_base=64m", "max_bytes_for_level_base=512m",
                "level0_file_num_compaction_trigger=4", "level0_slowdown_writes_trigger=10",
                "level0_stop_writes_trigger=15", "level_compaction_dynamic_level_bytes=true",
                "compaction_pri=kMinOverlappingRatio", "optimize_filters_for_hits=true",
                "block_based_table_factory={cache_index_and_filter_blocks=1;"
                "filter_policy=bloomfilter:10:false;whole_key_filtering=1}"]
        if self.compression:
            opts += ["compression=%s" % self.compression, "bottommost_compression=%s" % self.compression]
        return ";".join(opts)

    def settings(self, limit, probe=False):
        s = self.common_settings()
        s.update({"plugin-load-add": "ha_rocksdb", "innodb_buffer_pool_size": "16M"})
        if probe:
            return s
        s.update({
            "default_storage_engine": "ROCKSDB",
            "transaction_isolation": "READ-COMMITTED",
            "rocksdb_flush_log_at_trx_commit": 1,
            "rocksdb_block_cache_size": "%dM" % (limit * self.cache_fraction(limit)[0]
                                                 // self.cache_fraction(limit)[1] // MiB),
            "rocksdb_use_direct_reads": "ON" if direct_reads(self.variant_name(limit)) else "OFF",
            "rocksdb_use_direct_io_for_flush_and_compaction": "OFF",
            "rocksdb_max_background_jobs": 2,
            "rocksdb_max_open_files": -1,
            "rocksdb_max_total_wal_size": "1G",
            # Index builds (sysbench prepare's CREATE INDEX) sort in these buffers; the
            # defaults (64 MB, 1 GB) do not fit a small limit.
            "rocksdb_merge_buf_size": "%dM" % max(8, min(64, limit // 16 // MiB)),
            "rocksdb_merge_combine_read_size": "%dM" % max(8, min(1024, limit // 16 // MiB)),
            "rocksdb_default_cf_options": self.cf_options(limit),
        })
        return s

    def post_init(self):
        super().post_init()
        rows = sql(self.port, "SELECT @@rocksdb_supported_compression_types")
        supported = rows[0][0].split(",") if rows else []
        self.compression = "kLZ4Compression" if "LZ4" in supported else None
        self.extra["supported_compression"] = supported
        self.extra["compression"] = self.compression or "none (LZ4 not in the plugin)"
        rows = sql(self.port, "SELECT PLUGIN_VERSION, PLUGIN_AUTH_VERSION FROM "
                   "information_schema.PLUGINS WHERE PLUGIN_NAME='ROCKSDB'")
        if rows:
            self.extra["plugin_version"] = " ".join(rows[0])

    def data_paths(self):
        return {"datadir": self.datadir, "tables": os.path.join(self.datadir, "#rocksdb")}

    def before_template_stop(self):
        self.extra["load_compactions_settled"] = self.wait_compactions()

    WRITE_KEYS = {"log": "rocksdb_wal_bytes", "flush": "rocksdb_flush_write_bytes",
                  "compaction": "rocksdb_compact_write_bytes", "stall_us": "rocksdb_stall_micros",
                  "user": "rocksdb_bytes_written"}

    def counters(self):
        out = {}
        for k, v in sql(self.port, "SHOW GLOBAL STATUS WHERE Variable_name IN ('rocksdb_wal_bytes',"
                        "'rocksdb_flush_write_bytes','rocksdb_compact_write_bytes','rocksdb_stall_micros',"
                        "'rocksdb_bytes_written','rocksdb_wal_synced')"):
            try:
                out[k.lower()] = int(v)
            except ValueError:
                pass
        return out

    def debt(self):
        out = {}
        for cf, k, v in sql(self.port, "SELECT CF_NAME, STAT_TYPE, VALUE FROM "
                            "information_schema.ROCKSDB_CFSTATS WHERE CF_NAME='default'"):
            out[k.lower()] = int(v)
        levels = {}
        for cf, lvl, typ, val in sql(self.port, "SELECT CF_NAME, LEVEL, TYPE, VALUE FROM "
                                     "information_schema.ROCKSDB_COMPACTION_STATS WHERE "
                                     "CF_NAME='default' AND TYPE IN ('NumFiles','SizeBytes','Score')"):
            if lvl.startswith("L"):
                levels.setdefault(lvl, {})[typ] = float(val)
        # Bytes over each level's target (score = size / target), plus all of L0 once it is
        # at its compaction trigger: an estimate of what compaction still has to rewrite.
        est = 0.0
        for lvl, d in levels.items():
            size, score = d.get("SizeBytes", 0.0), d.get("Score", 0.0)
            if lvl == "L0":
                est += size if score >= 1 else 0
            elif score > 1:
                est += size * (1 - 1 / score)
        out["levels"] = {k: {"files": int(v.get("NumFiles", 0)), "bytes": int(v.get("SizeBytes", 0)),
                             "score": v.get("Score", 0.0)} for k, v in sorted(levels.items())}
        out["l0_files"] = out["levels"].get("L0", {}).get("files", 0)
        out["debt_bytes"] = int(est)
        for k, v in sql(self.port, "SHOW GLOBAL STATUS WHERE Variable_name IN "
                        "('rocksdb_stall_total_stops','rocksdb_stall_total_slowdowns','rocksdb_stall_micros')"):
            out[k.lower()] = int(v)
        return out


def strata_memory(limit, fraction=(1, 4)):
    """Strata's memory settings for a limit L: block cache L/4 (or `fraction` of L) and
    memtable L/16 (8-64 MB). Strata reads through the OS page cache (buffered I/O, like MyRocks
    here), which takes the rest of the cgroup, so the block cache stays well below InnoDB's 75%
    buffer pool."""
    block_cache = max(16 * MiB, limit * fraction[0] // fraction[1] // MiB * MiB)
    write_buffer = max(8 * MiB, min(64 * MiB, limit // 16)) // MiB * MiB
    return block_cache, write_buffer


class Strata(Engine):
    name, label = "strata", "Strata"
    BINLOG_EXPECT = {"strata_sync_on_commit": "1"}
    prepare_args = []

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        # The server logs to stderr, which the harness collects in stdout.log.
        self.log_path = os.path.join(self.rundir, "stdout.log")

    def settings(self, limit, probe=False):
        block_cache, write_buffer = strata_memory(limit, self.cache_fraction(limit))
        s = {
            "block-cache-size": "%dM" % (block_cache // MiB),
            "write-buffer-size": "%dM" % (write_buffer // MiB),
            "sync-on-commit": 1,
            "background-jobs": 2,
            "max-connections": 512,
            "transaction-isolation": "REPEATABLE-READ",
        }
        if direct_reads(self.variant_name(limit)):
            s["use-direct-reads"] = 1
        if self.binlog:
            s.update({"log-bin": "mysql-bin", "server-id": 1, "binlog-format": "ROW", "sync-binlog": 1})
        extra = self.expand_args(limit)
        if extra:
            s["extra-args"] = " ".join(extra)
        return s

    def expand_args(self, limit):
        return [a.replace("{limit_bytes}", str(limit)).replace("{limit_mb}", str(limit // MiB))
                for a in self.cfg.strata_args]

    def argv(self, limit, probe=False):
        os.makedirs(self.rundir, exist_ok=True)
        argv = [self.cfg.strata_bin, "--datadir=%s" % self.datadir, "--port=%d" % self.port,
                "--bind-address=127.0.0.1", "--socket=%s" % os.path.join(self.rundir, "strata.sock")]
        for k, v in self.settings(limit, probe).items():
            if k != "extra-args":
                argv.append("--%s=%s" % (k, v))
        # --strata-arg comes last: the server applies options in order, so it overrides.
        return argv + self.expand_args(limit)

    def init_datadir(self):
        if os.path.exists(self.datadir):
            shutil.rmtree(self.datadir)
        os.makedirs(self.datadir)

    def sizes(self):
        # One flat directory: table data are the SSTs; the rest is WAL, MANIFEST, CURRENT.
        return {"datadir": dir_size(self.datadir), "tables": dir_size(self.datadir, ".sst")}

    def post_init(self):
        super().post_init()
        rows = sql(self.port, "SELECT @@version")
        if rows:
            self.extra["server_version"] = rows[0][0]

    def counters(self):
        """All numeric Strata_* status variables (cumulative since the server started, except
        the gauge Strata_live_table_bytes), lower-cased."""
        out = {}
        for row in sql(self.port, "SHOW GLOBAL STATUS LIKE 'Strata%'"):
            if len(row) == 2:
                try:
                    out[row[0].lower()] = int(row[1])
                except ValueError:
                    pass
        return out

    def before_template_stop(self):
        self.extra["load_compactions_settled"] = self.wait_compactions()

    WRITE_KEYS = {"log": "strata_wal_bytes", "flush": "strata_flush_bytes",
                  "compaction": "strata_compaction_bytes_written", "stall_us": "strata_stall_micros",
                  "user": "strata_user_bytes_written"}

    def debt(self):
        # Strata_pending_compaction_bytes is the server's estimate of the bytes compaction must
        # still rewrite (RocksDB's estimate-pending-compaction-bytes, computed the same way).
        # The runner also records the flush + compaction bytes that finished during the drain
        # watch (drain_job_bytes): the debt the engine actually paid right after the load stopped.
        out = self.counters()
        out["debt_bytes"] = out.get("strata_pending_compaction_bytes", 0)
        return out

    @staticmethod
    def realized_debt(end, after):
        keys = ("strata_flush_bytes", "strata_compaction_bytes_written")
        if not all(isinstance(end.get(k), int) and isinstance(after.get(k), int) for k in keys):
            return None
        return sum(after[k] - end[k] for k in keys)

    def version(self):
        return self.extra.get("server_version", "")


def mariadb_version():
    try:
        return subprocess.run([MARIADBD, "--version"], capture_output=True, text=True,
                              timeout=30).stdout.strip()
    except OSError:
        return ""


def make(cfg, workdir, port_alloc):
    classes = {"innodb": InnoDB, "myrocks": MyRocks, "strata": Strata}
    return [classes[name](cfg, workdir, port_alloc()) for name in cfg.engines]


class Server:
    """One running server process of an engine, optionally inside a memory cgroup."""

    def __init__(self, engine, limit, cgroup=None, probe=False):
        self.engine = engine
        self.limit = limit
        self.cgroup = cgroup
        self.probe = probe
        self.proc = None
        self.started = None

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def start(self, timeout):
        e = self.engine
        if port_open(e.port):
            raise EngineError("port %d is already in use" % e.port)
        argv = e.argv(self.limit, probe=self.probe)
        if self.cgroup:
            # The shell joins the cgroup, then becomes the server (same pid).
            argv = ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', self.cgroup.procs_file] + argv
        os.makedirs(e.rundir, exist_ok=True)
        header = "\n=== %s start (limit %d MB): %s\n" % (
            time.strftime("%Y-%m-%d %H:%M:%S"), self.limit // MiB, " ".join(argv))
        self.proc = srvproc.spawn(argv, os.path.join(e.rundir, "stdout.log"), e.rundir, header.encode())
        self.started = time.time()
        return srvproc.wait_ready(self.proc, e.port, e.ping, timeout, e.label, self.log_tail, EngineError)

    def log_tail(self, n=20):
        e = self.engine
        out = os.path.join(e.rundir, "stdout.log")
        return tail(e.log_path, n) + ("" if e.log_path == out else tail(out, n))

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout=600):
        """SIGTERM (a clean shutdown for both MariaDB and Strata), SIGKILL after timeout.
        Returns the exit code (negative = killed by that signal)."""
        return srvproc.stop(self.proc, timeout)[0]

    def kill(self):
        srvproc.kill(self.proc)
