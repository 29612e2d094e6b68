"""A TCP round-robin balancer for the harness, standing in for the lab's haproxy (mode tcp, roundrobin).

Per connection it dials the next backend and, when that one refuses, the ones after it (like
haproxy's ``retries`` + ``option redispatch``); no health checks, so a backend that accepts and
then fails is not taken out. TLS passes through: clients verify the API server certificate.
"""

from __future__ import annotations

import itertools
import socket
import threading


class TcpBalancer:
    def __init__(self, backends: list[tuple[str, int]], host: str = "127.0.0.1"):
        self.backends = backends
        self.next = itertools.count()
        self.sock = socket.create_server((host, 0))
        self.address = self.sock.getsockname()
        self.closed = False

    @property
    def url(self) -> str:
        return f"https://{self.address[0]}:{self.address[1]}"

    def start(self) -> TcpBalancer:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def close(self) -> None:
        self.closed = True
        self.sock.close()

    def _dial(self) -> socket.socket | None:
        first = next(self.next)
        for i in range(len(self.backends)):
            try:
                return socket.create_connection(self.backends[(first + i) % len(self.backends)], timeout=2)
            except OSError:
                continue
        return None

    def _accept(self) -> None:
        while not self.closed:
            try:
                client, _addr = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        upstream = self._dial()
        if upstream is None:
            client.close()
            return
        upstream.settimeout(None)
        threading.Thread(target=_pump, args=(upstream, client), daemon=True).start()
        _pump(client, upstream)


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for sock in (src, dst):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
