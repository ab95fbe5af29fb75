"""The app's JSON API, for scripts and load tests: the same session, CSRF and scoping as the
pages (`X-CSRF-Token` header on every POST)."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from bigaction_assets.annotate.accounts import Session
from bigaction_assets.annotate.assignments import Item, NotAssigned
from bigaction_assets.annotate.params import item_kind, item_number
from bigaction_assets.annotate.web import error, progress_of, save_label, services, signed_in


# --- API (JSON) --------------------------------------------------------------------------------
@signed_in
async def api_session(request: Request, session: Session) -> Response:
    return JSONResponse({"username": session.username, "csrf_token": session.csrf_token})


@signed_in
async def api_progress(request: Request, session: Session) -> Response:
    return JSONResponse(await progress_of(request, session))


def _item_json(item: Item) -> dict[str, Any]:
    return {"item_no": item.item_no, "item_id": item.item_id, "kind": item.kind,
            "payload": item.payload}  # fmt: skip


@signed_in
async def api_next(request: Request, session: Session) -> Response:
    kind = item_kind(request.query_params.get("kind"))
    item = await run_in_threadpool(services(request).store.next_item, session.user_id, kind)
    return JSONResponse({"item": _item_json(item) if item else None})


@signed_in
async def api_item(request: Request, session: Session) -> Response:
    store = services(request).store
    number = item_number(request.path_params["item_no"])
    try:
        item = await run_in_threadpool(store.item_for, session.user_id, number)
    except NotAssigned:
        return error(request, 404, "no such item among yours")
    return JSONResponse(_item_json(item))


@signed_in
async def api_label(request: Request, session: Session) -> Response:
    store = services(request).store
    number = item_number(request.path_params["item_no"])
    if request.method == "GET":
        try:
            label = await run_in_threadpool(store.label_of, session.user_id, number)
        except NotAssigned:
            return error(request, 404, "no such item among yours")
        return JSONResponse({"label": label})
    try:
        body = orjson.loads(await request.body())
    except orjson.JSONDecodeError:
        return error(request, 400, "the body is not JSON")
    if not isinstance(body, dict):
        return error(request, 422, "the body must be a JSON object")
    saved = await save_label(request, session, body)
    return saved if isinstance(saved, Response) else JSONResponse({"revision": saved})
