"""The annotation app over real HTTP (uvicorn on 127.0.0.1, port 0): no page or API without a
session, wrong passwords refused and rate-limited, CSRF, annotators kept apart, the sandboxed
page, and 20 concurrent annotators × 50 labels losing none."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

import orjson
import pytest
from annotate_server import (
    PASSWORD,
    SECRET,
    Client,
    add_users,
    form_token,
    running_app,
    turn_item,
    web_item,
)
from starlette.routing import Route

from bigaction_assets.annotate.accounts import RateLimits
from bigaction_assets.annotate.app import AppSettings, create_app
from bigaction_assets.annotate.db import Database
from bigaction_assets.annotate.security import Passwords, Signer
from bigaction_assets.annotate.store import AnnotationStore
from bigaction_assets.annotate.web import SESSION_COOKIE

PUBLIC = {"/login", "/static/{name}"}


@pytest.fixture
def store_path(tmp_path):
    path = tmp_path / "store.sqlite3"
    add_users(path, ["ana", "bo", "cy"])
    AnnotationStore(Database(path)).load_items(
        [web_item(n) for n in range(4)] + [turn_item(n) for n in range(4, 6)]
    )
    return path


@pytest.fixture
def app(store_path):
    with running_app(store_path, RateLimits(per_account=3, per_address=6)) as address:
        yield address


def every_route(store_path) -> list[tuple[str, str]]:
    """(method, path) of every route the app defines, with `1` for a path parameter."""
    asgi = create_app(AppSettings(store_path, Signer(SECRET), Passwords())).app
    found = []
    for route in asgi.routes:
        assert isinstance(route, Route)
        for method in sorted(route.methods - {"HEAD"}):
            if route.path not in PUBLIC:
                found.append((method, re.sub(r"\{[^}]+\}", "1", route.path)))
    return found


def test_no_page_or_api_answers_without_a_session(app, store_path) -> None:
    routes = every_route(store_path)
    assert len(routes) >= 12
    forged = Client(app)
    forged.cookies[SESSION_COOKIE] = Signer(b"another key, another app, 32+ chars").sign(
        "session", "x" * 43
    )
    for client in (Client(app), forged):
        for method, path in routes:
            status, headers, body = client.request(method, path)
            if path.startswith("/api/") or method == "POST":
                assert status == 401, (method, path, body)
            else:
                assert (status, headers.get("location")) == (303, "/login"), (method, path)
            assert b"task" not in body and b"ep#" not in body


def test_session_cookies_are_signed_httponly_strict_and_secure(app) -> None:
    client = Client(app)
    assert client.login("ana") == 303
    [header] = [h for h in client.set_cookie_headers if h.startswith(SESSION_COOKIE)]
    flags = header.lower()
    assert "httponly" in flags and "samesite=strict" in flags and "secure" in flags
    assert "path=/" in flags and "domain" not in flags
    token, _, signature = client.cookies[SESSION_COOKIE].rpartition(".")
    assert len(signature) == 64
    tampered = Client(app)
    tampered.cookies[SESSION_COOKIE] = f"{token}.{'0' * 64}"
    assert tampered.get("/api/progress")[0] == 401
    assert client.get("/api/progress")[0] == 200


def test_wrong_passwords_are_refused_then_rate_limited(app) -> None:
    client = Client(app)
    assert client.login("ana", "not the password") == 401
    assert client.login("nobody-here", PASSWORD) == 401
    assert client.login("ana", "still wrong") == 401
    assert client.login("ana", "wrong again") == 401  # 3rd failure on the account
    status = client.login("ana", PASSWORD)
    assert status == 429  # the right password, but the account is locked for the window
    assert client.get("/api/progress")[0] == 401
    # the address has 4 failures; 2 more on other accounts, then everyone from it is refused
    assert client.login("bo", "wrong") == 401 and client.login("cy", "wrong") == 401
    assert client.login("cy", PASSWORD) == 429


def test_a_form_without_its_csrf_token_is_refused(app, store_path) -> None:
    client = Client(app)
    assert client.login("ana") == 303
    item = client.next_item("web_step")
    path = f"/items/{item['item_no']}/label"
    assert client.post_form(path, {"verdict": "correct"})[0] == 403
    assert client.post_form(path, {"verdict": "correct", "csrf_token": "guess"})[0] == 403
    other = Client(app)
    assert other.login("bo") == 303
    assert client.post_form(path, {"verdict": "correct", "csrf_token": other.csrf})[0] == 403
    good = {"verdict": "correct", "csrf_token": client.csrf}
    assert client.post_form(path, good, Origin="https://evil.example")[0] == 403
    assert client.post_json(f"/api/items/{item['item_no']}/label", {"verdict": "correct"})[0] == 403
    assert client.post_form("/logout", {})[0] == 403
    assert client.get(f"/api/items/{item['item_no']}/label")[2] == b'{"label":null}'
    assert client.post_form(path, good)[0] == 303  # the same form with its token goes through
    assert orjson.loads(client.get(f"/api/items/{item['item_no']}/label")[2]) == {
        "label": {"verdict": "correct"}
    }
    # sign-in form: its token must match the pre-session cookie
    fresh = Client(app)
    fresh.get("/login")
    fields = {"username": "cy", "password": PASSWORD}
    assert fresh.post_form("/login", {**fields, "csrf_token": "made-up"})[0] == 403


def test_an_annotator_cannot_read_or_change_anothers_labels(app) -> None:
    ana, bo = Client(app), Client(app)
    assert ana.login("ana") == 303 and bo.login("bo") == 303
    item = ana.next_item("web_step")
    number = item["item_no"]
    assert ana.label(number, {"verdict": "incorrect"})[0] == 200
    assert bo.get(f"/items/{number}")[0] == 404
    assert bo.get(f"/api/items/{number}")[0] == 404
    assert bo.get(f"/api/items/{number}/label")[0] == 404
    assert bo.label(number, {"verdict": "correct"})[0] == 404
    page = bo.get(f"/items/{number}")[2]
    status, _, _ = bo.post_form(
        f"/items/{number}/label", {"verdict": "correct", "csrf_token": bo.csrf}
    )
    assert status == 404 and b"click(bid=" not in page
    assert orjson.loads(ana.get(f"/api/items/{number}/label")[2])["label"] == {
        "verdict": "incorrect"
    }
    assert item["item_id"].encode() not in bo.get("/labels")[2]


def test_item_pages_show_the_page_sandboxed_and_take_keyboard_labels(app, store_path) -> None:
    AnnotationStore(Database(store_path)).load_items(
        [{**web_item(99, "evil"), "page_html": '<p bnid=1>hi</p><script>alert("x")</script>'}]
    )
    client = Client(app)
    assert client.login("ana") == 303
    while (item := client.next_item("web_step"))["item_id"] != "evil#99":
        client.label(item["item_no"], {"verdict": "unsure"})
    status, headers, page = client.get(f"/items/{item['item_no']}")
    assert status == 200
    assert "script-src 'self'" in headers["content-security-policy"]
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    [frame] = re.findall(rb"<iframe[^>]*>", page)
    assert b'sandbox=""' in frame and b"allow-scripts" not in frame
    assert b"&lt;script&gt;alert(&#34;x&#34;)" in frame  # inert text inside srcdoc
    assert re.findall(rb"<script[^>]*>", page) == [b'<script src="/static/app.js" defer>']
    assert b'data-key="c"' in page and b'data-key="i"' in page and b'data-key="u"' in page
    assert re.search(
        rb"you labelled \d+ \xc2\xb7\s+\d+ left for you \xc2\xb7\s+\d+/7 items complete", page
    )
    turn = client.next_item("proactive_turn")
    page = client.get(f"/items/{turn['item_no']}")[2]
    assert b'data-key="1"' in page and b'data-key="h"' in page and b'data-key="n"' in page
    assert b"1970-01-01 00:00:01 UTC" in page  # epoch seconds shown as a time
    token = form_token(page)
    form = [("csrf_token", token), ("accept", "1"), ("action", "accept")]
    assert client.post_form(f"/items/{turn['item_no']}/label", form)[0] == 303
    assert orjson.loads(client.get(f"/api/items/{turn['item_no']}/label")[2])["label"] == {
        "accepted_tasks": [1], "help_needed": True,
    }  # fmt: skip


ANNOTATORS, LABELS_EACH = 20, 50


def test_twenty_concurrent_annotators_lose_no_label(tmp_path) -> None:
    path = tmp_path / "busy.sqlite3"
    names = [f"annotator{i:02d}" for i in range(ANNOTATORS)]
    add_users(path, names)
    AnnotationStore(Database(path)).load_items([web_item(n) for n in range(400)])

    def annotate(name: str) -> list[tuple[int, int]]:
        client = Client(address)
        assert client.login(name) == 303
        saved = []
        for _ in range(LABELS_EACH):
            item = client.next_item()
            status, answer = client.label(item["item_no"], {"verdict": "correct"})
            assert status == 200, answer
            saved.append((item["item_no"], answer["revision"]))
        client.close()
        return saved

    with running_app(path) as address, ThreadPoolExecutor(ANNOTATORS) as pool:
        acknowledged = [pair for saved in pool.map(annotate, names) for pair in saved]
    stored = list(AnnotationStore(Database(path)).export_labels())
    assert len(acknowledged) == len(stored) == ANNOTATORS * LABELS_EACH
    assert sorted(r for _, r in acknowledged) == [row["revision"] for row in stored]
    per_item: dict[str, list[int]] = {}
    for row in stored:
        per_item.setdefault(row["item_id"], []).append(row["user_id"])
    assert max(len(users) for users in per_item.values()) <= 3
    assert all(len(set(users)) == len(users) for users in per_item.values())
