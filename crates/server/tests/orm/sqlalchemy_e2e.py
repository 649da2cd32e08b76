"""SQLAlchemy (PyMySQL driver) against a running Strata, unchanged ORM code.

Usage: sqlalchemy_e2e.py PORT

Declares models with one-to-many and many-to-many relationships, creates them with
metadata.create_all, reflects them back (Inspector and MetaData.reflect) and checks the
reflected schema, then inserts through sessions and runs joins, eager loads, subqueries,
aggregation, pagination, updates and cascading deletes, asserting exact results. Every
check is an assert; the first failure ends the script with a traceback (exit status 1).
"""

import datetime
import decimal
import enum
import sys

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Date,
    DateTime,
    Enum,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    Numeric,
    String,
    Table,
    Text,
    UniqueConstraint,
    and_,
    create_engine,
    delete,
    exists,
    func,
    inspect,
    select,
    text,
    update,
)
from sqlalchemy.orm import (
    DeclarativeBase,
    Session,
    aliased,
    joinedload,
    relationship,
    selectinload,
)

PORT = int(sys.argv[1])
DB = "orm_sa"


def step(name):
    print(f"-- {name}", flush=True)


class Base(DeclarativeBase):
    pass


class Status(enum.Enum):
    draft = "draft"
    published = "published"
    archived = "archived"


post_tags = Table(
    "post_tags",
    Base.metadata,
    Column("post_id", Integer, ForeignKey("posts.id", ondelete="CASCADE"), primary_key=True),
    Column("tag_id", Integer, ForeignKey("tags.id", ondelete="CASCADE"), primary_key=True),
)


class Author(Base):
    __tablename__ = "authors"
    id = Column(Integer, primary_key=True, autoincrement=True)
    name = Column(String(100), nullable=False)
    email = Column(String(200), nullable=False, unique=True)
    bio = Column(Text)
    active = Column(Boolean, nullable=False, default=True)
    karma = Column(BigInteger, nullable=False, default=0)
    joined = Column(Date, nullable=False)
    posts = relationship(
        "Post", back_populates="author", cascade="all, delete-orphan", order_by="Post.id"
    )


class Post(Base):
    __tablename__ = "posts"
    __table_args__ = (
        UniqueConstraint("author_id", "slug", name="uq_posts_author_slug"),
        Index("ix_posts_created", "created_at"),
    )
    id = Column(Integer, primary_key=True, autoincrement=True)
    author_id = Column(Integer, ForeignKey("authors.id"), nullable=False, index=True)
    slug = Column(String(80), nullable=False)
    title = Column(String(200), nullable=False)
    body = Column(Text, nullable=False)
    price = Column(Numeric(10, 2))
    rating = Column(Float)
    status = Column(Enum(Status, native_enum=False, length=20), nullable=False)
    created_at = Column(DateTime, nullable=False)
    author = relationship("Author", back_populates="posts")
    tags = relationship("Tag", secondary=post_tags, back_populates="posts", order_by="Tag.name")
    comments = relationship(
        "Comment", back_populates="post", cascade="all, delete-orphan", order_by="Comment.id"
    )


class Tag(Base):
    __tablename__ = "tags"
    id = Column(Integer, primary_key=True, autoincrement=True)
    name = Column(String(50), nullable=False, unique=True)
    posts = relationship("Post", secondary=post_tags, back_populates="tags")


class Comment(Base):
    __tablename__ = "comments"
    id = Column(BigInteger, primary_key=True, autoincrement=True)
    post_id = Column(Integer, ForeignKey("posts.id", ondelete="CASCADE"), nullable=False)
    commenter = Column(String(100), nullable=False)
    body = Column(Text, nullable=False)
    posted = Column(DateTime, nullable=False)
    post = relationship("Post", back_populates="comments")


def url(db=""):
    return f"mysql+pymysql://root@127.0.0.1:{PORT}/{db}?charset=utf8mb4"


# ---------------------------------------------------------------- schema
step("create database")
admin = create_engine(url(), future=True)
with admin.begin() as c:
    c.execute(text(f"DROP DATABASE IF EXISTS {DB}"))
    c.execute(text(f"CREATE DATABASE {DB}"))
admin.dispose()

engine = create_engine(url(DB), future=True)
step("metadata.create_all")
Base.metadata.create_all(engine)
# A second create_all finds every table (checkfirst) and creates nothing.
Base.metadata.create_all(engine)

# ---------------------------------------------------------------- reflection
step("inspect")
insp = inspect(engine)
assert sorted(insp.get_table_names()) == ["authors", "comments", "post_tags", "posts", "tags"], (
    insp.get_table_names()
)
assert insp.has_table("posts") and not insp.has_table("nope")

cols = {c["name"]: c for c in insp.get_columns("posts")}
assert list(cols) == [
    "id", "author_id", "slug", "title", "body", "price", "rating", "status", "created_at",
], list(cols)
assert isinstance(cols["id"]["type"], Integer) and cols["id"]["autoincrement"] is True
assert not cols["id"]["nullable"]
assert isinstance(cols["slug"]["type"], String) and cols["slug"]["type"].length == 80
assert isinstance(cols["body"]["type"], Text)
assert isinstance(cols["price"]["type"], Numeric)
assert (cols["price"]["type"].precision, cols["price"]["type"].scale) == (10, 2)
assert cols["price"]["nullable"]
assert isinstance(cols["rating"]["type"], Float)
assert isinstance(cols["status"]["type"], String) and cols["status"]["type"].length == 20
assert isinstance(cols["created_at"]["type"], DateTime)
acols = {c["name"]: c for c in insp.get_columns("authors")}
assert isinstance(acols["karma"]["type"], BigInteger)
assert isinstance(acols["joined"]["type"], Date)
# MySQL's BOOLEAN is TINYINT(1); SQLAlchemy reflects it as TINYINT with display width 1.
assert type(acols["active"]["type"]).__name__ == "TINYINT", acols["active"]["type"]
assert acols["active"]["type"].display_width == 1
assert acols["bio"]["nullable"] and not acols["name"]["nullable"]

assert insp.get_pk_constraint("posts")["constrained_columns"] == ["id"]
assert insp.get_pk_constraint("post_tags")["constrained_columns"] == ["post_id", "tag_id"]

fks = insp.get_foreign_keys("posts")
assert len(fks) == 1, fks
assert fks[0]["constrained_columns"] == ["author_id"]
assert fks[0]["referred_table"] == "authors" and fks[0]["referred_columns"] == ["id"]
pt_fks = sorted(insp.get_foreign_keys("post_tags"), key=lambda f: f["referred_table"])
assert [(f["constrained_columns"], f["referred_table"], f["referred_columns"]) for f in pt_fks] == [
    (["post_id"], "posts", ["id"]),
    (["tag_id"], "tags", ["id"]),
], pt_fks
assert all(f["options"].get("ondelete") == "CASCADE" for f in pt_fks), pt_fks
cfk = insp.get_foreign_keys("comments")
assert cfk[0]["options"].get("ondelete") == "CASCADE", cfk

idx = {i["name"]: i for i in insp.get_indexes("posts")}
assert idx["ix_posts_created"]["column_names"] == ["created_at"]
assert not idx["ix_posts_created"]["unique"]
assert idx["ix_posts_author_id"]["column_names"] == ["author_id"]
uqs = insp.get_unique_constraints("posts")
assert [(u["name"], u["column_names"]) for u in uqs] == [
    ("uq_posts_author_slug", ["author_id", "slug"])
], uqs
auqs = insp.get_unique_constraints("authors")
assert [u["column_names"] for u in auqs] == [["email"]], auqs

step("MetaData.reflect")
reflected = MetaData()
reflected.reflect(bind=engine)
assert sorted(reflected.tables) == sorted(Base.metadata.tables), sorted(reflected.tables)
for name, table in Base.metadata.tables.items():
    r = reflected.tables[name]
    assert [c.name for c in r.columns] == [c.name for c in table.columns], name
    assert [c.name for c in r.primary_key] == [c.name for c in table.primary_key], name
    assert {(fk.parent.name, fk.column.table.name, fk.column.name) for fk in r.foreign_keys} == {
        (fk.parent.name, fk.column.table.name, fk.column.name) for fk in table.foreign_keys
    }, name
    for c in table.columns:
        assert r.c[c.name].nullable == c.nullable, (name, c.name)
# A table built from the reflected metadata can be queried.
assert engine.connect().execute(select(func.count()).select_from(reflected.tables["tags"])).scalar() == 0

# ---------------------------------------------------------------- data
T0 = datetime.datetime(2024, 1, 1, 12, 0, 0)
TAGS = ["python", "rust", "sql", "storage", "misc"]
STATUSES = [Status.draft, Status.published, Status.archived]
# The data as plain Python: post n (1..15) belongs to author a (author a has a posts),
# has status STATUSES[n % 3], rating n / 4, price n.nn, n % 4 comments and the tags k
# with (n + k) % 3 == 0. Expected answers below are computed from this model.
MODEL = []
n = 0
for a in range(1, 6):
    for j in range(a):
        n += 1
        MODEL.append(
            dict(
                n=n,
                author=a,
                slug=f"p{j}",
                status=STATUSES[n % 3],
                rating=n / 4,
                price=decimal.Decimal(f"{n}.{n % 100:02d}"),
                comments=n % 4,
                tags=[t for k, t in enumerate(TAGS) if (n + k) % 3 == 0],
            )
        )
AUTHOR_OF = {m["n"]: m["author"] for m in MODEL}

step("insert through sessions")
with Session(engine) as s:
    tags = {n: Tag(name=n) for n in ["python", "rust", "sql", "storage", "misc"]}
    s.add_all(tags.values())
    authors = []
    for i in range(1, 6):
        a = Author(
            name=f"author{i}",
            email=f"a{i}@example.com",
            bio=None if i % 2 else f"bio of {i}",
            active=i != 3,
            karma=i * 10_000_000_000,
            joined=datetime.date(2020, i, 1),
        )
        authors.append(a)
    s.add_all(authors)
    n = 0
    for ai, a in enumerate(authors, start=1):
        for j in range(ai):  # author i has i posts
            n += 1
            p = Post(
                slug=f"p{j}",
                title=f"Post {n} by {a.name}",
                body="x" * (n * 10),
                price=decimal.Decimal(f"{n}.{n % 100:02d}"),
                rating=n / 4,
                status=[Status.draft, Status.published, Status.archived][n % 3],
                created_at=T0 + datetime.timedelta(hours=n),
            )
            p.tags = [t for k, t in enumerate(tags.values()) if (n + k) % 3 == 0]
            for c in range(n % 4):
                p.comments.append(
                    Comment(
                        commenter=f"c{c}",
                        body=f"comment {c} on {n}",
                        posted=T0 + datetime.timedelta(days=n, minutes=c),
                    )
                )
            a.posts.append(p)
    s.commit()
    assert [a.id for a in authors] == [1, 2, 3, 4, 5]

with Session(engine) as s:
    assert s.scalar(select(func.count()).select_from(Post)) == 15
    assert s.scalar(select(func.count()).select_from(Comment)) == sum(n % 4 for n in range(1, 16))
    assert s.scalar(select(func.count()).select_from(post_tags)) == sum(
        1 for n in range(1, 16) for k in range(5) if (n + k) % 3 == 0
    )
    p = s.get(Post, 7)
    assert p.title == "Post 7 by author4", p.title
    assert p.price == decimal.Decimal("7.07") and p.rating == 1.75
    assert p.status == Status.published and p.created_at == T0 + datetime.timedelta(hours=7)
    assert p.author.karma == 40_000_000_000 and p.author.joined == datetime.date(2020, 4, 1)
    assert [t.name for t in p.tags] == ["sql"], [t.name for t in p.tags]
    assert [c.body for c in p.comments] == ["comment 0 on 7", "comment 1 on 7", "comment 2 on 7"]
    a3 = s.get(Author, 3)
    assert a3.active is False and a3.bio is None and s.get(Author, 2).bio == "bio of 2"

step("unique constraint violation")
from sqlalchemy.exc import IntegrityError



def expect_integrity_error(obj, code):
    """Adding `obj` fails at commit with IntegrityError carrying MySQL error `code`."""
    with Session(engine) as s:
        s.add(obj)
        try:
            s.commit()
        except IntegrityError as e:
            assert e.orig.args[0] == code, e.orig.args
            s.rollback()
            return
    raise AssertionError(f"{obj!r} accepted")


expect_integrity_error(Author(name="dup", email="a1@example.com", joined=datetime.date(2021, 1, 1)), 1062)
expect_integrity_error(
    Post(author_id=99, slug="x", title="x", body="x", status=Status.draft, created_at=T0), 1452
)

# ---------------------------------------------------------------- queries
step("joins")
with Session(engine) as s:
    rows = s.execute(
        select(Author.name, Post.title)
        .join(Post, Author.posts)
        .where(Post.status == Status.archived)
        .order_by(Post.id)
    ).all()
    assert rows == [
        (f"author{m['author']}", f"Post {m['n']} by author{m['author']}")
        for m in MODEL
        if m["status"] == Status.archived
    ], rows
    assert len(rows) == 5
    # many-to-many through the association table
    rows = s.scalars(
        select(Post.id).join(Post.tags).where(Tag.name == "sql").order_by(Post.id)
    ).all()
    assert rows == [n for n in range(1, 16) if (n + 2) % 3 == 0], rows
    # outer join: authors and their comment counts (zero included)
    rows = s.execute(
        select(Author.name, func.count(Comment.id))
        .outerjoin(Post, Post.author_id == Author.id)
        .outerjoin(Comment, Comment.post_id == Post.id)
        .group_by(Author.id, Author.name)
        .order_by(Author.id)
    ).all()
    expect = []
    n = 0
    for ai in range(1, 6):
        cnt = 0
        for _ in range(ai):
            n += 1
            cnt += n % 4
        expect.append((f"author{ai}", cnt))
    assert rows == expect, rows
    # self-join through an alias: pairs of posts by the same author
    p2 = aliased(Post)
    rows = s.execute(
        select(Post.id, p2.id)
        .join(p2, and_(p2.author_id == Post.author_id, p2.id > Post.id))
        .where(Post.author_id == 3)
        .order_by(Post.id, p2.id)
    ).all()
    assert rows == [(4, 5), (4, 6), (5, 6)], rows

step("joinedload / selectinload")
with Session(engine) as s:
    authors = s.scalars(
        select(Author).options(joinedload(Author.posts).joinedload(Post.tags)).order_by(Author.id)
    ).unique().all()
    assert [len(a.posts) for a in authors] == [1, 2, 3, 4, 5]
    for a in authors:
        for p in a.posts:
            m = MODEL[p.id - 1]
            assert (a.id, [t.name for t in p.tags]) == (m["author"], sorted(m["tags"])), p.id
    posts = s.scalars(
        select(Post)
        .options(selectinload(Post.comments), selectinload(Post.tags), joinedload(Post.author))
        .where(Post.id.in_([2, 3, 11]))
        .order_by(Post.id.desc())
    ).all()
    got = [(p.id, p.author.name, len(p.comments), len(p.tags)) for p in posts]
    assert got == [
        (n, f"author{AUTHOR_OF[n]}", MODEL[n - 1]["comments"], len(MODEL[n - 1]["tags"]))
        for n in [11, 3, 2]
    ], got

step("subqueries")
with Session(engine) as s:
    # IN (subquery)
    sub = select(Post.author_id).where(Post.rating > 3)
    rows = s.scalars(select(Author.name).where(Author.id.in_(sub)).order_by(Author.id)).all()
    assert rows == ["author5"], rows
    # EXISTS through any() (one-to-many) and has() (many-to-one)
    rows = s.scalars(
        select(Author.id).where(Author.posts.any(Post.status == Status.draft)).order_by(Author.id)
    ).all()
    assert rows == sorted({m["author"] for m in MODEL if m["status"] == Status.draft}), rows
    assert rows == [2, 3, 4, 5]
    rows = s.scalars(
        select(Post.id).where(Post.author.has(Author.active == False)).order_by(Post.id)  # noqa: E712
    ).all()
    assert rows == [4, 5, 6], rows
    rows = s.scalars(
        select(Tag.name).where(~Tag.posts.any()).order_by(Tag.name)
    ).all()
    assert rows == [], rows
    rows = s.scalars(
        select(Post.id).where(~exists().where(Comment.post_id == Post.id)).order_by(Post.id)
    ).all()
    assert rows == [4, 8, 12], rows
    # uncorrelated scalar subquery
    avg = select(func.avg(Post.rating)).scalar_subquery()
    rows = s.scalars(select(Post.id).where(Post.rating > avg).order_by(Post.id)).all()
    assert rows == list(range(9, 16)), rows
    # correlated scalar subquery in the select list
    cnt = (
        select(func.count(Comment.id))
        .where(Comment.post_id == Post.id)
        .correlate(Post)
        .scalar_subquery()
    )
    rows = s.execute(select(Post.id, cnt.label("n")).where(Post.id <= 5).order_by(Post.id)).all()
    assert rows == [(1, 1), (2, 2), (3, 3), (4, 0), (5, 1)], rows
    # a subquery in FROM joined back
    per_author = (
        select(Post.author_id, func.max(Post.created_at).label("latest"))
        .group_by(Post.author_id)
        .subquery()
    )
    rows = s.execute(
        select(Author.name, per_author.c.latest)
        .join(per_author, per_author.c.author_id == Author.id)
        .order_by(per_author.c.latest.desc())
        .limit(2)
    ).all()
    assert rows == [
        ("author5", T0 + datetime.timedelta(hours=15)),
        ("author4", T0 + datetime.timedelta(hours=10)),
    ], rows

step("aggregation")
with Session(engine) as s:
    rows = s.execute(
        select(Post.author_id, func.count(), func.sum(Post.price), func.max(Post.rating))
        .group_by(Post.author_id)
        .having(func.count() >= 3)
        .order_by(Post.author_id)
    ).all()
    assert rows == [
        (3, 3, decimal.Decimal("15.15"), 1.5),
        (4, 4, decimal.Decimal("34.34"), 2.5),
        (5, 5, decimal.Decimal("65.65"), 3.75),
    ], rows
    rows = s.execute(
        select(Post.status, func.count()).group_by(Post.status).order_by(Post.status)
    ).all()
    assert rows == [(Status.archived, 5), (Status.draft, 5), (Status.published, 5)], rows
    rows = s.execute(
        select(Tag.name, func.count(post_tags.c.post_id).label("n"))
        .join(post_tags, post_tags.c.tag_id == Tag.id)
        .group_by(Tag.name)
        .order_by(func.count(post_tags.c.post_id).desc(), Tag.name)
    ).all()
    assert rows == [("misc", 5), ("python", 5), ("rust", 5), ("sql", 5), ("storage", 5)], rows
    assert s.scalar(select(func.count(func.distinct(Comment.commenter)))) == 3

step("pagination")
with Session(engine) as s:
    pages = []
    for page in range(4):
        pages.append(
            s.scalars(select(Post.id).order_by(Post.created_at.desc()).limit(4).offset(page * 4)).all()
        )
    assert pages == [[15, 14, 13, 12], [11, 10, 9, 8], [7, 6, 5, 4], [3, 2, 1]], pages
    # paginating an eager-loaded collection query: SQLAlchemy wraps the LIMIT in a subquery
    authors = s.scalars(
        select(Author).options(joinedload(Author.posts)).order_by(Author.id).limit(2).offset(1)
    ).unique().all()
    assert [(a.id, len(a.posts)) for a in authors] == [(2, 2), (3, 3)]
    assert s.scalar(select(func.count()).select_from(select(Post.id).limit(100).subquery())) == 15

step("updates")
with Session(engine) as s:
    p = s.get(Post, 1)
    p.title = "Renamed"
    p.tags.append(s.scalars(select(Tag).where(Tag.name == "misc")).one())
    s.commit()
    s.execute(
        update(Post).where(Post.author_id == 5).values(price=Post.price * 2, rating=None)
    )
    s.execute(
        update(Author).where(Author.id.in_(select(Post.author_id).where(Post.price > 25))).values(karma=Author.karma + 1)
    )
    s.commit()
with Session(engine) as s:
    assert s.get(Post, 1).title == "Renamed"
    assert [t.name for t in s.get(Post, 1).tags] == ["misc", "sql"]
    assert s.scalar(select(func.sum(Post.price)).where(Post.author_id == 5)) == decimal.Decimal("131.30")
    assert s.scalar(select(func.count()).where(Post.rating.is_(None))) == 5
    assert s.scalars(select(Author.karma).order_by(Author.id)).all() == [
        10_000_000_000, 20_000_000_000, 30_000_000_000, 40_000_000_000, 50_000_000_001
    ]

step("deletes with cascades")
with Session(engine) as s:
    # ORM cascade: deleting an author deletes its posts (delete-orphan), their comments
    # and their association rows.
    a = s.get(Author, 4)
    s.delete(a)
    s.commit()
    assert s.scalar(select(func.count()).select_from(Post)) == 11
    assert s.scalar(select(func.count()).select_from(Comment).where(Comment.post_id.between(7, 10))) == 0
    assert s.scalar(select(func.count()).select_from(post_tags).where(post_tags.c.post_id.between(7, 10))) == 0
    # Database cascade (ON DELETE CASCADE): a Core delete of posts removes comments and
    # association rows without the ORM's help.
    before = s.scalar(select(func.count()).select_from(Comment))
    gone = s.scalar(select(func.count()).select_from(Comment).where(Comment.post_id.in_([11, 13])))
    s.execute(delete(Post).where(Post.id.in_([11, 13])))
    s.commit()
    assert s.scalar(select(func.count()).select_from(Comment)) == before - gone
    assert s.scalar(select(func.count()).select_from(post_tags).where(post_tags.c.post_id.in_([11, 13]))) == 0
    # Removing a tag from a post deletes only the association row.
    p = s.get(Post, 1)
    p.tags.remove(p.tags[0])
    s.commit()
    assert [t.name for t in s.get(Post, 1).tags] == ["sql"]
    assert s.scalar(select(func.count()).select_from(Tag)) == 5
    # A rolled-back session leaves nothing behind.
    s.delete(s.get(Author, 5))
    s.flush()
    assert s.get(Author, 5) is None
    s.rollback()
    assert s.get(Author, 5) is not None

step("binary results are bytes")
# Binary expressions are declared binary (collation 63), so PyMySQL returns bytes, untouched,
# and text stays str.
with engine.connect() as c:
    row = c.execute(
        text("SELECT x'00ff', CAST('\u00e9' AS BINARY), UNHEX('00FF'), _binary'ab', '\u00e9'")
    ).one()
    assert tuple(row) == (b"\x00\xff", "\u00e9".encode(), b"\x00\xff", b"ab", "\u00e9"), row

step("drop_all")
Base.metadata.drop_all(engine)
assert inspect(engine).get_table_names() == []
engine.dispose()
print("sqlalchemy: all checks passed", flush=True)
