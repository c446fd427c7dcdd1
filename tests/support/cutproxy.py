"""A TCP proxy on loopback that can cut a request off in the middle of its body.

Between an S3 client and the S3 server it passes everything through until told to
`cut` (forward each request's headers and half its body, then close both sides, as a
dropped connection would) or to `refuse` (close every connection at once). Switching
closes the connections open so far, so a client's pooled connection cannot slip by.
"""

from __future__ import annotations

import socket
import threading

HOST = "127.0.0.1"


class CutProxy:
    def __init__(self, upstream_port: int) -> None:
        self.upstream = (HOST, upstream_port)
        self.mode = "pass"
        #: How many requests were cut off mid-body.
        self.cuts = 0
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._server = socket.create_server((HOST, 0))
        self.port: int = self._server.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def endpoint(self) -> str:
        return f"http://{HOST}:{self.port}"

    def set_mode(self, mode: str) -> None:
        assert mode in ("pass", "cut", "refuse"), mode
        with self._lock:
            self.mode = mode
            for sock in self._open:
                _close(sock)
            self._open.clear()

    def close(self) -> None:
        self.set_mode("refuse")
        _close(self._server)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return  # closed
            with self._lock:
                mode = self.mode
                if mode == "refuse":
                    _close(client)
                    continue
                try:
                    upstream = socket.create_connection(self.upstream)
                except OSError:
                    _close(client)
                    continue
                self._open.update((client, upstream))
            threading.Thread(target=self._pump, args=(upstream, client), daemon=True).start()
            if mode == "cut":
                threading.Thread(target=self._cut, args=(client, upstream), daemon=True).start()
            else:
                threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, target: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                target.sendall(data)
        except OSError:
            pass
        _close(source)
        _close(target)

    def _cut(self, client: socket.socket, upstream: socket.socket) -> None:
        """Forward the request's headers and half its body, then drop the connection."""
        buffer = b""
        try:
            while b"\r\n\r\n" not in buffer:
                data = client.recv(65536)
                if not data:
                    raise OSError("closed before the headers ended")
                buffer += data
            head, _, body = buffer.partition(b"\r\n\r\n")
            length = _content_length(head)
            half = len(head) + 4 + length // 2
            upstream.sendall(buffer[:half])
            sent = len(buffer)
            while sent < half:  # the rest of the first half, as it arrives
                data = client.recv(min(65536, half - sent))
                if not data:
                    raise OSError("closed mid-body")
                upstream.sendall(data)
                sent += len(data)
            with self._lock:
                self.cuts += 1
        except OSError:
            pass
        _close(client)
        _close(upstream)


def _content_length(head: bytes) -> int:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value.strip())
    raise OSError("a request without Content-Length")


def _close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()
