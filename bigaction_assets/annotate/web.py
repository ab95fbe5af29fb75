"""The app's HTTP plumbing: cookies, sessions and CSRF on every route, security headers, forms,
templates. Routes (`app.py`) only say what a page shows or a request changes."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bigaction_assets.annotate.accounts import SESSION_MAX_SECONDS, Accounts, Session
from bigaction_assets.annotate.assignments import NotAssigned, SlotLost
from bigaction_assets.annotate.labels import InvalidLabel
from bigaction_assets.annotate.params import BadParameter, form_fields, item_number
from bigaction_assets.annotate.security import Signer, same_token
from bigaction_assets.annotate.store import AnnotationStore

HERE = Path(__file__).parent
SESSION_COOKIE = "__Host-ba_session"  # __Host-: Secure, Path=/, no Domain (Chromium allows it on
LOGIN_COOKIE = "__Host-ba_login"  # http://127.0.0.1 and localhost, which it treats as secure)
# The sandboxed page's only style; its hash is allowed by the policy the srcdoc inherits.
FRAME_STYLE = (
    "body{font:14px sans-serif;margin:8px}text::after{content:' '}"
    "[data-ba-target]{outline:3px solid #d00;background:#fff3a0}"
)
_FRAME_STYLE_HASH = base64.b64encode(hashlib.sha256(FRAME_STYLE.encode()).digest()).decode()
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; "
    f"style-src 'self' 'sha256-{_FRAME_STYLE_HASH}'; img-src 'self' data:; frame-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
HEADERS = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    # same-origin, not no-referrer: under no-referrer Chromium sends `Origin: null` on form posts
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
]


class SecurityHeaders:
    """Adds the headers above to every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *HEADERS]
            await send(message)

        await self.app(scope, receive, send_with_headers)


@dataclass
class Services:
    store: AnnotationStore
    accounts: Accounts
    signer: Signer
    templates: Environment


def make_templates() -> Environment:
    env = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
    )
    env.globals["frame_document"] = frame_document
    env.filters["when"] = when
    return env


def when(time: str) -> str:
    """An event time as people read it: epoch seconds become UTC, anything else stays."""
    try:
        moment = datetime.fromtimestamp(float(time), UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return time
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def frame_document(page_html: str | None) -> str:
    """The sandboxed frame's whole document; the template escapes it into `srcdoc`."""
    body = page_html or "<p>(no page was captured for this step)</p>"
    return f"<!doctype html><meta charset=utf-8><style>{FRAME_STYLE}</style>{body}"


def services(request: Request) -> Services:
    return request.app.state.services


def render(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
    template = services(request).templates.get_template(name)
    return HTMLResponse(template.render(**context), status_code=status)


def is_api(request: Request) -> bool:
    return request.url.path.startswith("/api/")


async def bad_parameter(request: Request, exc: Exception) -> Response:
    """The answer to a `BadParameter` raised by any route."""
    assert isinstance(exc, BadParameter)
    return error(request, exc.status, exc.message)


def error(request: Request, status: int, message: str) -> Response:
    if is_api(request):
        return JSONResponse({"error": message}, status_code=status)
    return render(request, "error.html", status, message=message, code=status)


def set_cookie(response: Response, name: str, value: str, max_age: int | None = None) -> None:
    response.set_cookie(
        name, value, max_age=max_age, path="/", secure=True, httponly=True, samesite="strict"
    )


def set_session_cookie(response: Response, value: str) -> None:
    set_cookie(response, SESSION_COOKIE, value, SESSION_MAX_SECONDS)


async def read_form(request: Request) -> dict[str, list[str]]:
    """A urlencoded form (the only kind the app's pages send); the body stays readable, and
    `BodyCap` has bounded it."""
    if request.headers.get("content-type", "").split(";")[0].strip() != (
        "application/x-www-form-urlencoded"
    ):
        return {}
    return form_fields(await request.body())


def same_origin(request: Request) -> bool:
    """A browser's Origin header, when sent, names this very host (a sandboxed frame's is
    `null` and is refused)."""
    origin = request.headers.get("origin")
    if origin is None:
        return True
    return origin == f"{request.url.scheme}://{request.headers.get('host', '')}"


async def current_session(request: Request) -> tuple[Session | None, str | None]:
    token = services(request).signer.unsign("session", request.cookies.get(SESSION_COOKIE))
    if token is None:
        return None, None
    return await run_in_threadpool(services(request).accounts.session, token), token


Handler = Callable[..., Awaitable[Response]]


def signed_in(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """Every page and API call but sign-in goes through this: no session, no content (pages
    redirect to sign-in, API calls get 401); a request that changes anything must carry the
    session's CSRF token (form field `csrf_token` or header `X-CSRF-Token`) and come from this
    origin."""

    async def endpoint(request: Request) -> Response:
        session, _ = await current_session(request)
        if session is None:
            if is_api(request) or request.method != "GET":
                return error(request, 401, "sign in first")
            return RedirectResponse("/login", status_code=303)
        form: dict[str, list[str]] = {}
        if request.method not in ("GET", "HEAD"):
            form = await read_form(request)
            given = request.headers.get("x-csrf-token") or (form.get("csrf_token") or [None])[0]
            if not same_origin(request) or not same_token(given, session.csrf_token):
                return error(request, 403, "this request lacks a valid CSRF token")
        request.state.session = session
        request.state.form = form
        return await handler(request, session)

    return endpoint


# --- what pages and API calls share ----------------------------------------------------------
async def progress_of(request: Request, session: Session) -> dict[str, int]:
    return await run_in_threadpool(services(request).store.progress, session.user_id)


async def save_label(request: Request, session: Session, label: dict[str, Any]) -> int | Response:
    """The label's revision once stored, or the error page/answer saying why it was not."""
    try:
        return await run_in_threadpool(
            services(request).store.save_label,
            session.user_id,
            item_number(request.path_params["item_no"]),
            label,
        )
    except NotAssigned:
        return error(request, 404, "no such item among yours")
    except SlotLost:
        return error(request, 409, "your time on this item ran out and others filled it")
    except InvalidLabel as exc:
        return error(request, 422, str(exc))
