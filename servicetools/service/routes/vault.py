"""Section 4.7-4.10: the document vault."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from ...wire.protocol import ErrorCode
from ..core.vault import MAX_NAME, clean_name
from ..deps import CurrentUser, parts, valid_unicode
from ..errors import ApiError, bad_request, not_found
from ..settings import MIB
from ._docs import documented

router = APIRouter(prefix="/vault", tags=["vault"])

_UPLOAD_BODY = {"requestBody": {"required": True, "content": {"multipart/form-data": {"schema": {
    "type": "object", "required": ["uploadFile", "doctype"],
    "properties": {"uploadFile": {"type": "string", "format": "binary"},
                   "doctype": {"type": "string"}}}}}}}


@router.post("/upload", openapi_extra=_UPLOAD_BODY,
             **documented("vault_document", errors=(400, 413, 415, 503)))
async def upload(request: Request, user: CurrentUser) -> Any:
    p = parts(request)
    limit = p.settings.max_document_bytes + MIB  # room for the multipart framing
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise ApiError(413, ErrorCode.DOCUMENT_TOO_LARGE,
                       f"The upload is larger than the limit of "
                       f"{p.settings.max_document_bytes:,} bytes.",
                       {"size": int(declared), "limit": p.settings.max_document_bytes})
    try:
        form = await request.form(max_files=1, max_fields=10)
    except Exception as exc:  # noqa: BLE001  python-multipart raises several types
        raise bad_request(f"The body is not valid multipart form data: {exc}.",
                          ErrorCode.INVALID_MULTIPART) from exc
    try:
        file = form.get("uploadFile")
        doctype = form.get("doctype")
        if not isinstance(file, UploadFile):
            raise bad_request("The multipart field uploadFile (the file) is missing.",
                              fields=["uploadFile"])
        if not isinstance(doctype, str):
            raise bad_request("The multipart field doctype (a string) is missing.",
                              fields=["doctype"])
        for field, text in (("uploadFile's file name", file.filename or ""),
                            ("doctype", doctype)):
            if len(text) > MAX_NAME:
                raise bad_request(f"The {field} has {len(text):,} characters; the limit is "
                                  f"{MAX_NAME}.", fields=[field])
            if not valid_unicode(text):
                raise bad_request(f"The {field} is not valid Unicode.", fields=[field])
        data = await file.read()
        name = file.filename or "document"
    finally:
        await form.close()  # removes the spooled temporary file
    return await run_in_threadpool(p.vault.add, user.id, data, name, doctype)


@router.get("/list", **documented("vault_list", errors=()))
def list_documents(request: Request, user: CurrentUser) -> Any:
    docs = parts(request).store.documents(user.id)
    for doc in docs:
        del doc["num_pages"]  # 4.8: list entries carry no page count
    return {"documents": docs}


@router.get("/info/{document_id}", **documented("vault_document", errors=(404,)))
def info(document_id: str, request: Request, user: CurrentUser) -> Any:
    record = parts(request).store.document(user.id, document_id)
    if record is None:
        raise not_found("document", document_id)
    return record


@router.get("/get/{document_id}", responses={
    200: {"description": "The stored bytes (D12).",
          "content": {t: {} for t in ("application/pdf", "image/png", "image/jpeg")}},
    **documented(None, errors=(404, 503))["responses"]})
def download(document_id: str, request: Request, user: CurrentUser
             ) -> Response:
    found = parts(request).vault.read(user.id, document_id)
    if found is None:
        raise not_found("document", document_id)
    record, data = found
    return Response(data, media_type=record["content_type"],
                    headers={"Content-Disposition": content_disposition(record["document_name"])})


def content_disposition(name: str) -> str:
    """D12's header, safe for any stored name (RFC 6266 with RFC 8187's ``filename*``).

    >>> print(content_disposition("Rechnung März.pdf"))
    attachment; filename="Rechnung M_rz.pdf"; filename*=UTF-8''Rechnung%20M%C3%A4rz.pdf

    The name is cleaned again as at upload: a record stored before names had a limit
    must not make a header line that clients refuse (64 KiB) or that a line break
    splits. ``filename`` gets printable ASCII without quote, backslash or percent (some
    clients decode %xx there); when that is not the exact name, ``filename*`` carries
    the exact name, UTF-8 and percent-encoded.
    """
    name = clean_name(name)
    fallback = "".join(ch if " " <= ch <= "~" and ch not in '"\\%' else "_" for ch in name)
    header = f'attachment; filename="{fallback}"'
    if fallback != name:
        header += f"; filename*=UTF-8''{quote(name, safe='')}"
    return header
