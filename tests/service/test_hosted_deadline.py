"""A hosted download is bounded in total time, however the server trickles (D14).

The servers here are started by the test on loopback (so private hosts are allowed).
A trickling server sends one byte every 0.2 s; the download's limit is far shorter
than the time it takes to send everything. What is asserted is what happened, not how
long it took: the download gave up, and the server saw the connection go before it
had sent all its bytes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from servicetools.service.core.hosted import DownloadError, download
from servicetools.service.settings import Settings

BODY = b"%PDF-1.4 trickled " * 4  # 72 bytes: 14 s at one byte each 0.2 s


class Trickle(BaseHTTPRequestHandler):
    finished: list[bool] = []
    pause = 0.2

    def do_GET(self) -> None:  # noqa: N802  (http.server's name)
        self.send_response(200)
        self.send_header("Content-Type", "application/pdf")
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        try:
            for byte in BODY:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(self.pause)
        except OSError:
            self.finished.append(False)  # the client went away
            return
        self.finished.append(True)

    def log_message(self, *args: object) -> None:
        pass


class SlowHeaders(Trickle):
    """Sends its status line and headers a byte at a time, then the body at once."""

    def do_GET(self) -> None:  # noqa: N802
        head = (b"HTTP/1.1 200 OK\r\nContent-Type: application/pdf\r\n"
                b"Content-Length: 8\r\nX-Padding: " + b"x" * 40 + b"\r\n\r\n")
        try:
            for byte in head:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(self.pause)
            self.wfile.write(b"%PDF-1.4")
        except OSError:
            self.finished.append(False)
            return
        self.finished.append(True)


class Quick(Trickle):
    pause = 0.0


def wait_for(finished: list[bool]) -> list[bool]:
    """What the server saw, once it has finished writing (it learns of a gone client on
    its next write)."""
    for _ in range(100):
        if finished:
            break
        time.sleep(0.1)
    return finished


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[tuple[str, list[bool]]]:
    handler: type[Trickle] = request.param
    finished: list[bool] = []
    handler_class = type(handler.__name__, (handler,), {"finished": finished})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler_class)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/doc.pdf", finished
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.parametrize("server", [Trickle, SlowHeaders], indirect=True,
                         ids=["trickled-body", "trickled-headers"])
def test_a_trickling_server_does_not_hold_the_download(
    server: tuple[str, list[bool]], tmp_path: Path,
) -> None:
    url, finished = server
    settings = Settings(data_dir=tmp_path, allow_private_hosts=True,
                        hosted_timeout=1.0)
    with pytest.raises(DownloadError, match="took longer than 1 s"):
        download(url, settings)
    assert wait_for(finished) == [False]


@pytest.mark.parametrize("server", [Quick], indirect=True)
def test_a_download_within_its_time_is_not_cut(server: tuple[str, list[bool]],
                                               tmp_path: Path) -> None:
    url, finished = server
    settings = Settings(data_dir=tmp_path, allow_private_hosts=True,
                        hosted_timeout=30.0)
    assert download(url, settings) == (BODY, "doc.pdf")
    assert wait_for(finished) == [True]
