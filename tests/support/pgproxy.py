"""A unix-socket proxy in front of a test PostgreSQL that can lose a commit's answer.

libpq reaches a server through ``host=FOLDER`` and the socket ``FOLDER/.s.PGSQL.PORT``;
this proxy listens on such a socket in a folder of its own and passes every byte to the
real one. Told to `drop_next_commit`, it lets the client's next ``COMMIT`` through to the
server and closes the connection when the server's answer (CommandComplete "COMMIT")
comes back, instead of passing that answer on: the transaction is committed, and the
client cannot know it, as when a network or a server process dies at that moment.
"""

from __future__ import annotations

import os
import socket
import tempfile
import threading
from pathlib import Path

#: The server's CommandComplete message for a commit: tag "COMMIT", NUL-terminated.
_COMMIT_DONE = b"C\x00\x00\x00\x0bCOMMIT\x00"


class CommitDropper:
    def __init__(self, server_socket: Path) -> None:
        self.upstream = str(server_socket)
        self.folder = Path(tempfile.mkdtemp(prefix="servicetools-pgproxy-"))
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(self.folder / server_socket.name))
        self._server.listen()
        self._armed = threading.Event()
        #: How many commits' answers were dropped.
        self.dropped = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, database_url: str) -> str:
        """``database_url`` with its socket folder replaced by this proxy's."""
        base, _, query = database_url.partition("?")
        params = [p for p in query.split("&") if p and not p.startswith("host=")]
        return f"{base}?{'&'.join([f'host={self.folder}', *params])}"

    def drop_next_commit(self) -> None:
        self._armed.set()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            upstream.connect(self.upstream)
            threading.Thread(target=self._pass, args=(client, upstream, False),
                             daemon=True).start()
            threading.Thread(target=self._pass, args=(upstream, client, True),
                             daemon=True).start()

    def _pass(self, source: socket.socket, sink: socket.socket, answers: bool) -> None:
        try:
            while chunk := source.recv(65536):
                if answers and _COMMIT_DONE in chunk and self._armed.is_set():
                    self._armed.clear()
                    self.dropped += 1
                    break  # the commit is done on the server; its answer goes nowhere
                sink.sendall(chunk)
        except OSError:
            pass
        for end in (source, sink):
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            end.close()

    def close(self) -> None:
        self._server.close()
        for name in os.listdir(self.folder):
            os.unlink(self.folder / name)
        os.rmdir(self.folder)
