"""Django (with mysqlclient, its supported driver) against a running Strata: `migrate`
for the built-in apps (admin, auth, contenttypes, sessions, messages), introspection,
then ORM queries: users, groups and permissions joined through their many-to-many
tables, sessions, the admin log, cascading deletes, and migrating admin back to zero
and forward again. Every check is an assert. Usage: django_e2e.py PORT"""

import sys

import django
import MySQLdb
from django.conf import settings

PORT = int(sys.argv[1])
DB = "orm_django"


def step(name):
    print(f"-- {name}", flush=True)


admin = MySQLdb.connect(host="127.0.0.1", port=PORT, user="root", charset="utf8mb4")
c = admin.cursor()
c.execute(f"DROP DATABASE IF EXISTS {DB}")
c.execute(f"CREATE DATABASE {DB}")
admin.close()

settings.configure(
    DEBUG=False,
    SECRET_KEY="strata-e2e",
    USE_TZ=True,
    INSTALLED_APPS=[
        "django.contrib.admin",
        "django.contrib.auth",
        "django.contrib.contenttypes",
        "django.contrib.sessions",
        "django.contrib.messages",
    ],
    DATABASES={
        "default": {
            "ENGINE": "django.db.backends.mysql",
            "NAME": DB,
            "USER": "root",
            "PASSWORD": "",
            "HOST": "127.0.0.1",
            "PORT": str(PORT),
            "OPTIONS": {"charset": "utf8mb4"},
        }
    },
    DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
)
django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

step("migrate")
call_command("migrate", interactive=False, verbosity=1)

step("introspection")
tables = set(connection.introspection.table_names())
for t in [
    "auth_user",
    "auth_group",
    "auth_permission",
    "auth_user_groups",
    "auth_group_permissions",
    "auth_user_user_permissions",
    "django_content_type",
    "django_session",
    "django_admin_log",
    "django_migrations",
]:
    assert t in tables, (t, sorted(tables))
with connection.cursor() as c:
    cons = connection.introspection.get_constraints(c, "auth_user_groups")
fk_targets = sorted(v["foreign_key"] for v in cons.values() if v["foreign_key"])
assert fk_targets == [("auth_group", "id"), ("auth_user", "id")], fk_targets
assert any(v["unique"] and v["columns"] == ["user_id", "group_id"] for v in cons.values()), cons
# PositiveSmallIntegerField's CHECK (`action_flag` >= 0), read back as a check constraint.
with connection.cursor() as c:
    cons = connection.introspection.get_constraints(c, "django_admin_log")
checks = [v["columns"] for v in cons.values() if v["check"]]
assert checks == [["action_flag"]], cons

# Every migration of the built-in apps is recorded as applied.
from django.db.migrations.recorder import MigrationRecorder  # noqa: E402

applied = {(m.app, m.name) for m in MigrationRecorder.Migration.objects.all()}
assert ("auth", "0001_initial") in applied and ("admin", "0003_logentry_add_action_flag_choices") in applied, applied
assert ("contenttypes", "0002_remove_content_type_name") in applied, applied

step("orm queries")
from django.contrib.auth.models import Group, Permission, User  # noqa: E402
from django.contrib.contenttypes.models import ContentType  # noqa: E402
from django.db.models import Count, Q  # noqa: E402

# migrate's post_migrate signal created content types and permissions.
assert ContentType.objects.filter(app_label="auth").count() == 3
assert Permission.objects.filter(content_type__app_label="auth").count() == 12

u = User.objects.create_user("alice", "alice@example.com", "s3cret")
User.objects.create_user("bob", "bob@example.com", "pw")
assert User.objects.get(username="alice").check_password("s3cret")
editors = Group.objects.create(name="editors")
editors.permissions.set(Permission.objects.filter(codename__in=["add_user", "change_user", "view_group"]))
u.groups.add(editors)
u.user_permissions.add(Permission.objects.get(codename="delete_group"))

# Joins through the many-to-many tables.
assert list(User.objects.filter(groups__name="editors").values_list("username", flat=True)) == ["alice"]
perms = sorted(
    Permission.objects.filter(group__user__username="alice").values_list("codename", flat=True)
)
assert perms == ["add_user", "change_user", "view_group"], perms
u = User.objects.get(pk=u.pk)  # permission caches are per instance
assert u.has_perm("auth.change_user") and u.has_perm("auth.delete_group")
assert not u.has_perm("auth.delete_user")
assert u.get_all_permissions() == {
    "auth.add_user", "auth.change_user", "auth.view_group", "auth.delete_group"
}, u.get_all_permissions()
counts = list(
    User.objects.annotate(n=Count("groups")).order_by("username").values_list("username", "n")
)
assert counts == [("alice", 1), ("bob", 0)], counts
assert list(
    User.objects.filter(Q(groups__isnull=True) | Q(username__startswith="al"))
    .order_by("-username")
    .values_list("username", flat=True)
) == ["bob", "alice"]
page = list(Permission.objects.order_by("codename").values_list("codename", flat=True)[2:5])
every = list(Permission.objects.order_by("codename").values_list("codename", flat=True))
assert page == every[2:5] and len(every) == 24, (page, len(every))

# Sessions and the admin log.
from django.contrib.admin.models import ADDITION, LogEntry  # noqa: E402
from django.contrib.sessions.backends.db import SessionStore  # noqa: E402

s = SessionStore()
s["k"] = "v"
s.create()
assert SessionStore(session_key=s.session_key)["k"] == "v"
LogEntry.objects.create(
    user=u,
    content_type=ContentType.objects.get_for_model(Group),
    object_id=str(editors.pk),
    object_repr="editors",
    action_flag=ADDITION,
)
assert LogEntry.objects.filter(user__username="alice").count() == 1

# Deleting a user cascades to its m2m rows and log entries.
u.delete()
assert User.objects.count() == 1 and LogEntry.objects.count() == 0
with connection.cursor() as c:
    c.execute("SELECT COUNT(*) FROM auth_user_groups")
    assert c.fetchone()[0] == 0

step("migrate back to zero")
call_command("migrate", "admin", "zero", interactive=False, verbosity=0)
assert "django_admin_log" not in connection.introspection.table_names()
call_command("migrate", interactive=False, verbosity=0)
assert "django_admin_log" in connection.introspection.table_names()
print("django: all checks passed", flush=True)
