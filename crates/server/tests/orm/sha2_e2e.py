"""caching_sha2_password accounts with Python drivers (e2e_orm.rs): PyMySQL over plain
TCP (RSA key exchange), TLS and the unix socket, then from the cache; MySQL's
Connector/Python (pure) switching users with COM_CHANGE_USER over TLS (a new scramble
in an AuthSwitchRequest: full, then fast authentication). Wrong passwords and unknown
users get 1045 everywhere. Arguments: port, unix socket path."""
import ssl
import sys

import mysql.connector
import pymysql

PORT = int(sys.argv[1])
SOCK = sys.argv[2]


def no_verify():
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


def who(c):
    """The user name of CURRENT_USER() (the account matched: user@host pattern)."""
    cur = c.cursor()
    cur.execute("SELECT CURRENT_USER()")
    return cur.fetchone()[0].split("@")[0]


def tls_version(c):
    cur = c.cursor()
    cur.execute("SHOW SESSION STATUS LIKE 'Ssl_version'")
    return cur.fetchone()[1]


def py(user, pw, how):
    kw = {"user": user, "password": pw}
    if how == "socket":
        kw["unix_socket"] = SOCK
    else:
        kw.update(host="127.0.0.1", port=PORT)
    if how == "tls":
        kw["ssl"] = no_verify()
    return pymysql.connect(**kw)


def denied(fn, *args):
    try:
        fn(*args)
    except (pymysql.err.OperationalError, mysql.connector.Error) as e:
        code = e.args[0] if isinstance(e, pymysql.err.OperationalError) else e.errno
        assert code == 1045, e
        return
    raise AssertionError(f"{fn.__name__}{args} logged in")


root = py("root", "", "plain")
rc = root.cursor()
rc.execute("CREATE USER sha@'%' IDENTIFIED WITH caching_sha2_password BY 'sha-pw'")
rc.execute("CREATE USER sha2b@'%' IDENTIFIED WITH caching_sha2_password BY 'other-pw'")
rc.execute("CREATE USER nat@'%' IDENTIFIED BY 'nat-pw'")

# PyMySQL starts with mysql_native_password and is switched; each transport's full
# authentication after the cache is emptied, then the cache (fast authentication).
for how in ["plain", "tls", "socket"]:
    rc.execute("FLUSH PRIVILEGES")
    denied(py, "sha", "wrong", how)
    c = py("sha", "sha-pw", how)
    assert who(c) == "sha", who(c)
    assert (tls_version(c) != "") == (how == "tls"), (how, tls_version(c))
    c.close()
    c = py("sha", "sha-pw", how)
    assert who(c) == "sha"
    c.close()
    denied(py, "sha", "wrong", how)
    denied(py, "ghost", "sha-pw", how)
    assert who(py("nat", "nat-pw", how)) == "nat"
    print("pymysql", how, "ok")

# Connector/Python: COM_CHANGE_USER between accounts over TLS.
rc.execute("FLUSH PRIVILEGES")


def connector(user, pw):
    return mysql.connector.connect(
        host="127.0.0.1", port=PORT, user=user, password=pw, use_pure=True,
        ssl_disabled=False, ssl_verify_cert=False, ssl_verify_identity=False)


cx = connector("nat", "nat-pw")
assert who(cx) == "nat"
assert tls_version(cx) != ""
cx.cmd_change_user(username="sha", password="sha-pw")  # full authentication
assert who(cx) == "sha", who(cx)
cx.cmd_change_user(username="nat", password="nat-pw")
assert who(cx) == "nat"
cx.cmd_change_user(username="sha", password="sha-pw")  # fast, from the cache
assert who(cx) == "sha"
cx.cmd_change_user(username="sha2b", password="other-pw")
assert who(cx) == "sha2b"
cx.close()
cx = connector("sha", "sha-pw")
assert who(cx) == "sha"
denied(cx.cmd_change_user, "sha2b", "wrong")
cx = connector("sha", "sha-pw")
denied(cx.cmd_change_user, "ghost", "x")
print("connector change_user ok")
