"""gRPC servers and channels, plain or with TLS / mutual TLS."""

from __future__ import annotations

import asyncio
import threading
from concurrent import futures
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import uvloop

from braid.adapters.listening import AddressInUseError, taken

# Long-lived loopback and WAN connections: keep them alive, and let a
# restarted peer be reached again quickly.
_OPTIONS = [
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1_000),
    ("grpc.max_receive_message_length", 1 << 20),
]
# gRPC shares a port between servers (SO_REUSEPORT) unless told not to: a
# second agent started on a taken port would then silently get half of the
# first one's calls. Refuse the port instead.
_SERVER_ONLY = [("grpc.so_reuseport", 0)]


@dataclass(frozen=True, slots=True)
class TlsFiles:
    """PEM files. Server: cert+key, and ca to require client certificates (mutual TLS).
    Client: ca to verify the server, and cert+key to present its own certificate."""

    cert: Path | None = None
    key: Path | None = None
    ca: Path | None = None

    def read(self) -> tuple[bytes | None, bytes | None, bytes | None]:
        return _read(self.cert), _read(self.key), _read(self.ca)


def _read(path: Path | None) -> bytes | None:
    return path.read_bytes() if path is not None else None


def start_server(
    register: list[Any], address: str, *, tls: TlsFiles | None = None, workers: int = 8
) -> tuple[Any, int]:
    """Start a server with the given (add_function, servicer) pairs; returns it and its port."""
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=workers), options=[*_OPTIONS, *_SERVER_ONLY]
    )
    for add, servicer in register:
        add(servicer, server)
    port = _listen(server, address, tls)
    server.start()
    return server, port


def _listen(server: Any, address: str, tls: TlsFiles | None) -> int:
    """Bind `address`; a taken one raises `AddressInUseError` (gRPC says only "failed",
    after a line of its own on stderr: asked first, so that only braid's line is said)."""
    if taken(address):
        raise AddressInUseError(address)
    failure: RuntimeError | None = None
    try:
        if tls is None or tls.cert is None:
            port = int(server.add_insecure_port(address))
        else:
            cert, key, ca = tls.read()
            if key is None:
                raise ValueError("--tls-key: a server certificate needs its key")
            credentials = grpc.ssl_server_credentials(
                [(key, cert)], root_certificates=ca, require_client_auth=ca is not None
            )
            port = int(server.add_secure_port(address, credentials))
    except RuntimeError as exc:
        port, failure = 0, exc
    if port == 0:
        if taken(address):
            raise AddressInUseError(address) from failure
        raise OSError(f"cannot listen on {address}") from failure
    return port


class AioServer:
    """A `grpc.aio` server on an event loop (uvloop) of its own thread, or on `loop`
    (running in another thread, which outlives the server)."""

    def __init__(
        self,
        register: list[Any],
        address: str,
        tls: TlsFiles | None,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        self._thread: threading.Thread | None = None
        if loop is None:
            loop = uvloop.new_event_loop()
            self._thread = threading.Thread(
                target=loop.run_forever, name="braid-grpc-server", daemon=True
            )
            self._thread.start()
        self.loop = loop
        try:
            self.server, self.port = self.run(_start_aio(register, address, tls))
        except BaseException:
            self._end()
            raise

    def run(self, coroutine: Any, timeout: float = 30.0) -> Any:
        """Run `coroutine` on the server's loop and wait for it (from another thread)."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def stop(self, grace: float | None = None) -> None:
        """Stop serving (calls under way get `grace` seconds), then the loop."""
        try:
            self.run(self.server.stop(grace), timeout=(grace or 0) + 10)
        finally:
            self._end()

    def _end(self) -> None:
        if self._thread is None:  # the loop is someone else's
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        if not self._thread.is_alive():
            self.loop.close()


async def _start_aio(register: list[Any], address: str, tls: TlsFiles | None) -> tuple[Any, int]:
    server = grpc.aio.server(options=[*_OPTIONS, *_SERVER_ONLY])
    for add, servicer in register:
        add(servicer, server)
    port = _listen(server, address, tls)
    await server.start()
    return server, port


def start_aio_server(
    register: list[Any],
    address: str,
    *,
    tls: TlsFiles | None = None,
    loop: asyncio.AbstractEventLoop | None = None,
) -> AioServer:
    """Start an asyncio server with the given (add_function, servicer) pairs (async
    servicers), on `loop` if given (running in another thread), else on its own."""
    return AioServer(register, address, tls, loop)


def open_channel(
    address: str, *, tls: TlsFiles | None = None, own: bool = False, token: str | None = None
) -> Any:
    """A channel to `address`. `own`: its connections are its own, not shared with other
    channels to the same address (gRPC shares them by default), so its failed attempts
    never put another channel's calls into reconnect backoff. `token`: every call
    carries it as a bearer token (`authorization` metadata), for an agent's peer policy."""
    options = [*_OPTIONS, ("grpc.use_local_subchannel_pool", 1)] if own else _OPTIONS
    credentials = _credentials(tls)
    if credentials is None:
        channel = grpc.insecure_channel(address, options=options)
    else:
        channel = grpc.secure_channel(address, credentials, options=options)
    if token is None:
        return channel
    return grpc.intercept_channel(channel, _Bearer(token))


def open_aio_channel(address: str, *, tls: TlsFiles | None = None) -> Any:
    """An asyncio channel to `address` (to be made in the thread of the loop that uses it).
    A bearer token goes with each call's metadata (`bearer`)."""
    credentials = _credentials(tls)
    if credentials is None:
        return grpc.aio.insecure_channel(address, options=_OPTIONS)
    return grpc.aio.secure_channel(address, credentials, options=_OPTIONS)


def bearer(token: str | None) -> tuple[tuple[str, str], ...]:
    """The metadata that presents `token` to an agent's peer policy (none without one)."""
    return () if token is None else (("authorization", f"Bearer {token}"),)


def _credentials(tls: TlsFiles | None) -> Any:
    if tls is None or tls.ca is None:
        return None
    cert, key, ca = tls.read()
    return grpc.ssl_channel_credentials(
        root_certificates=ca, private_key=key, certificate_chain=cert
    )


def read_token(path: Path, flag: str = "--peer-token-file") -> str:
    """The bearer token in `path` (one word; surrounding white space is not part of it)."""
    try:
        token = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise ValueError(f"{flag}: cannot read {path}: {exc.strerror}") from exc
    if len(token) < 16 or any(c.isspace() for c in token):
        raise ValueError(f"{flag}: {path} must hold one word of at least 16 characters")
    return token


class _Bearer(grpc.UnaryUnaryClientInterceptor):  # type: ignore[misc]  # grpc is untyped
    """Adds `authorization: Bearer TOKEN` to every unary call of a channel."""

    def __init__(self, token: str) -> None:
        (self._header,) = bearer(token)

    def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        metadata = [*(details.metadata or ()), self._header]
        return continuation(_with_metadata(details, metadata), request)


def _with_metadata(details: Any, metadata: list[tuple[str, str]]) -> Any:
    new = _CallDetails()
    new.method = details.method
    new.timeout = details.timeout
    new.metadata = metadata
    new.credentials = details.credentials
    new.wait_for_ready = getattr(details, "wait_for_ready", None)
    new.compression = getattr(details, "compression", None)
    return new


class _CallDetails(grpc.ClientCallDetails):  # type: ignore[misc]  # grpc is untyped
    """A call's details with metadata added (gRPC reads only these attributes)."""

    method: str
    timeout: float | None
    metadata: list[tuple[str, str]]
    credentials: Any
    wait_for_ready: bool | None
    compression: Any
