"""A loopback HTTP server that fails on purpose, for the client's retry and wait tests."""

from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import requests

API = "/service/api"


@dataclass
class Seen:
    method: str
    path: str
    body: Any


@dataclass
class FlakyServer:
    """A loopback HTTP server that answers from a script, then like a healthy service.

    ``script`` holds the next answers in order: ``503`` (or any status), ``"drop"``
    (read the request, close the connection without a word), ``"slow"`` (sleep
    ``slow_seconds`` first), ``"html"`` (200 with an HTML page), ``"html502"``. When it
    runs out, status lists answer ``ended`` for every id, everything else ``{}``-ish.
    Every request that reached the server is in ``seen``.
    """

    script: list[Any] = field(default_factory=list)
    seen: list[Seen] = field(default_factory=list)
    slow_seconds: float = 1.0

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep pytest output clean
                pass

            def do_GET(self) -> None:
                owner._handle(self, "GET")

            def do_POST(self) -> None:
                owner._handle(self, "POST")

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client that timed out and hung up is what some tests do

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self._thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,),
                                        daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def count(self, path: str) -> int:
        return sum(1 for s in self.seen if s.path.startswith(API + path))

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def _handle(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw
        with self._lock:
            self.seen.append(Seen(method, handler.path, body))
            action = self.script.pop(0) if self.script else None
        if action == "drop":
            handler.close_connection = True
            handler.connection.shutdown(socket.SHUT_RDWR)
            return
        if action == "slow":
            time.sleep(self.slow_seconds)
            action = None
        if action == "html":
            self._send(handler, 200, b"<html><body>Welcome to the proxy</body></html>",
                       "text/html")
        elif action == "html502":
            self._send(handler, 502, b"<html><body><h1>502 Bad Gateway</h1></body></html>",
                       "text/html")
        elif isinstance(action, int):
            self._send(handler, action, json.dumps({"error": {
                "code": "unavailable", "message": "Try again later.", "details": {}}}).encode())
        else:
            self._send(handler, 200, json.dumps(self._healthy(handler.path, body)).encode())

    @staticmethod
    def _healthy(path: str, body: Any) -> Any:
        if path.endswith("/extraction/status/list"):
            return {"status_map": {
                i: {"id": f"s-{i}", "status_type": "ended", "message": "",
                    "creation_unix_timestamp": time.time(), "extraction_id": i,
                    "trigger_user_id": "u"} for i in body["extraction_id_list"]},
                "query_unix_timestamp": time.time()}
        if path.endswith("/vault/list"):
            return {"documents": []}
        if "/trigger_async" in path:
            return {"extraction_id": "e-1", "extra_field": "kept"}
        return {"ok": True}

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, data: bytes,
              content_type: str = "application/json") -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)


class StatusRequests:
    """Counts the status list requests a session sends: a response hook, no mocks.

    The hook sees each request the client made once (urllib3's retries happen below
    it), with the ids it asked for and the statuses it got back.
    """

    def __init__(self, session: requests.Session) -> None:
        self.calls: list[tuple[list[str], dict[str, Any]]] = []
        self._lock = threading.Lock()
        session.hooks["response"].append(self._hook)

    def _hook(self, response: requests.Response, *args: Any, **kwargs: Any) -> None:
        if not response.url.endswith("/extraction/status/list") or not response.ok:
            return
        body = response.request.body
        ids = json.loads(body.decode() if isinstance(body, bytes) else str(body))[
            "extraction_id_list"]
        with self._lock:
            self.calls.append((ids, response.json()["status_map"]))

    def rounds(self, ids: list[str], chunk_size: int) -> list[list[list[str]]]:
        """Split the calls into rounds and check each: one request per chunk of the ids
        still running, in order. Returns the rounds (each a list of id lists)."""
        pending = list(ids)
        calls = list(self.calls)
        rounds: list[list[list[str]]] = []
        while pending:
            expected = [pending[i:i + chunk_size] for i in range(0, len(pending), chunk_size)]
            got = [call_ids for call_ids, _ in calls[:len(expected)]]
            assert got == expected, f"round {len(rounds) + 1}: requests {len(got)} vs chunks"
            final = {i for _, status_map in calls[:len(expected)]
                     for i, s in status_map.items() if s["status_type"] in ("ended", "error")}
            calls = calls[len(expected):]
            rounds.append(got)
            pending = [i for i in pending if i not in final]
        assert not calls, f"{len(calls)} status request(s) after every id was final"
        return rounds
