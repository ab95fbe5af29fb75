"""The annotation app: sign in, take the next item, label it, see progress and one's own labels.

Pages are rendered on the server; the only script is the keyboard-shortcut file. A web step's
page is shown from its cleaned DOM inside `<iframe sandbox srcdoc>`: no scripts, an opaque
origin, and the app's own content policy, so nothing from a captured page runs as the app.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, RedirectResponse, Response
from starlette.routing import Route

from bigaction_assets.annotate.accounts import MAX_USERNAME_CHARS, Accounts, RateLimits, Session
from bigaction_assets.annotate.api import api_item, api_label, api_next, api_progress, api_session
from bigaction_assets.annotate.assignments import Item, NotAssigned
from bigaction_assets.annotate.bodies import BodyCap
from bigaction_assets.annotate.db import Database
from bigaction_assets.annotate.labels import ITEM_KINDS, WEB_STEP
from bigaction_assets.annotate.params import (
    BadParameter,
    form_action,
    item_kind,
    item_number,
    task_numbers,
)
from bigaction_assets.annotate.security import (
    MAX_PASSWORD_CHARS,
    Passwords,
    Signer,
    new_token,
    same_token,
)
from bigaction_assets.annotate.store import AnnotationStore
from bigaction_assets.annotate.web import (
    HERE,
    LOGIN_COOKIE,
    SESSION_COOKIE,
    SecurityHeaders,
    Services,
    bad_parameter,
    error,
    make_templates,
    progress_of,
    read_form,
    render,
    same_origin,
    save_label,
    services,
    set_cookie,
    set_session_cookie,
    signed_in,
)

STATIC = {"app.js": "text/javascript", "style.css": "text/css"}


@dataclass(frozen=True)
class AppSettings:
    store_path: Path
    signer: Signer
    passwords: Passwords
    limits: RateLimits = field(default_factory=RateLimits)


def client_address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


# --- signing in and out ------------------------------------------------------------------------
async def login_page(request: Request) -> Response:
    signer = services(request).signer
    token = signer.unsign("login", request.cookies.get(LOGIN_COOKIE)) or new_token()
    response = render(request, "login.html", csrf_token=token, message=None)
    set_cookie(response, LOGIN_COOKIE, signer.sign("login", token), max_age=3600)
    return response


async def login(request: Request) -> Response:
    form = await read_form(request)
    expected = services(request).signer.unsign("login", request.cookies.get(LOGIN_COOKIE))
    if not same_origin(request) or not same_token((form.get("csrf_token") or [""])[0], expected):
        return error(request, 403, "this sign-in form lacks a valid CSRF token")
    username = (form.get("username") or [""])[0].strip()
    password = (form.get("password") or [""])[0]
    if len(username) > MAX_USERNAME_CHARS or len(password) > MAX_PASSWORD_CHARS:
        # no account has such a name or password, so this is no guess worth counting
        message = (
            f"a name has at most {MAX_USERNAME_CHARS} characters "
            f"and a password at most {MAX_PASSWORD_CHARS}"
        )
        return render(request, "login.html", 400, csrf_token=expected, message=message)
    accounts = services(request).accounts
    token, limited = await run_in_threadpool(
        accounts.sign_in, username, password, client_address(request)
    )
    if token is None:
        status, message = (
            (429, "too many failed sign-ins: wait a few minutes and try again")
            if limited
            else (401, "wrong name or password")
        )
        response = render(request, "login.html", status, csrf_token=expected, message=message)
        if limited:
            response.headers["retry-after"] = str(int(accounts.limits.window_seconds))
        return response
    response = RedirectResponse("/", status_code=303)
    set_session_cookie(response, services(request).signer.sign("session", token))
    response.delete_cookie(LOGIN_COOKIE, path="/", secure=True, httponly=True, samesite="strict")
    return response


@signed_in
async def logout(request: Request, session: Session) -> Response:
    token = services(request).signer.unsign("session", request.cookies.get(SESSION_COOKIE))
    if token:
        await run_in_threadpool(services(request).accounts.sign_out, token)
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/", secure=True, httponly=True, samesite="strict")
    return response


# --- pages -------------------------------------------------------------------------------------
@signed_in
async def home(request: Request, session: Session) -> Response:
    progress = await progress_of(request, session)
    return render(request, "home.html", session=session, progress=progress, kinds=ITEM_KINDS)


async def _go_next(request: Request, session: Session) -> Response:
    """Hand out the next item (of the kind the form asks for, if any) and show it."""
    kind = item_kind((request.state.form.get("kind") or [None])[0])
    item = await run_in_threadpool(services(request).store.next_item, session.user_id, kind)
    return RedirectResponse(f"/items/{item.item_no}" if item else "/?done=1", status_code=303)


@signed_in
async def next_page(request: Request, session: Session) -> Response:
    return await _go_next(request, session)


def _item_context(item: Item) -> dict[str, Any]:
    return {"item": item, "payload": item.payload, "is_web": item.kind == WEB_STEP}


@signed_in
async def item_page(request: Request, session: Session) -> Response:
    store = services(request).store
    number = item_number(request.path_params["item_no"])
    try:
        item = await run_in_threadpool(store.item_for, session.user_id, number)
        label = await run_in_threadpool(store.label_of, session.user_id, number)
    except NotAssigned:
        return error(request, 404, "no such item among yours")
    progress = await progress_of(request, session)
    return render(
        request, "item.html", session=session, progress=progress, label=label,
        **_item_context(item),
    )  # fmt: skip


def label_from_form(form: dict[str, list[str]]) -> dict[str, Any]:
    """The label a submitted item form means (checked again by the store)."""
    if "verdict" in form:
        return {"verdict": form["verdict"][0]}
    action = form_action((form.get("action") or [""])[0])
    accepted = task_numbers(form.get("accept", []))
    if action == "accept":
        return {"accepted_tasks": accepted, "help_needed": True}
    return {"accepted_tasks": [], "help_needed": action == "reject_help_needed"}


@signed_in
async def submit_label(request: Request, session: Session) -> Response:
    saved = await save_label(request, session, label_from_form(request.state.form))
    if isinstance(saved, Response):
        return saved
    return await _go_next(request, session)


@signed_in
async def my_labels(request: Request, session: Session) -> Response:
    labels = await run_in_threadpool(services(request).store.labels_of, session.user_id)
    progress = await progress_of(request, session)
    return render(request, "labels.html", session=session, progress=progress, labels=labels)


async def static(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in STATIC:
        return error(request, 404, "not found")
    return FileResponse(HERE / "static" / name, media_type=STATIC[name])


def create_app(settings: AppSettings) -> SecurityHeaders:
    db = Database(settings.store_path)
    app = Starlette(
        middleware=[Middleware(BodyCap)],
        exception_handlers={BadParameter: bad_parameter},
        routes=[
            Route("/login", login_page, methods=["GET"]),
            Route("/login", login, methods=["POST"]),
            Route("/logout", logout, methods=["POST"]),
            Route("/", home, methods=["GET"]),
            Route("/next", next_page, methods=["POST"]),
            Route("/items/{item_no}", item_page, methods=["GET"]),
            Route("/items/{item_no}/label", submit_label, methods=["POST"]),
            Route("/labels", my_labels, methods=["GET"]),
            Route("/api/session", api_session, methods=["GET"]),
            Route("/api/progress", api_progress, methods=["GET"]),
            Route("/api/next", api_next, methods=["POST"]),
            Route("/api/items/{item_no}", api_item, methods=["GET"]),
            Route("/api/items/{item_no}/label", api_label, methods=["GET", "POST"]),
            Route("/static/{name}", static, methods=["GET"]),
        ],
    )
    app.state.services = Services(
        store=AnnotationStore(db),
        accounts=Accounts(db, settings.passwords, settings.limits),
        signer=settings.signer,
        templates=make_templates(),
    )
    return SecurityHeaders(app)
