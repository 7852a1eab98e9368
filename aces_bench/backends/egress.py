"""Egress to allowlisted endpoints only, for a sandbox with its own empty network namespace.

The local sandbox's network namespace has nothing but loopback. For each allowed
endpoint (the model's base URL, say ``http://127.0.0.1:8000`` or
``https://api.anthropic.com``) the host opens a listening socket *inside* that
namespace on ``127.0.0.1:<port>`` (a socket belongs to the namespace it was created
in; a short-lived thread enters the namespace with ``setns`` to create it) and
relays each accepted connection to the real endpoint from the host. A hostname is
mapped to ``127.0.0.1`` by the sandbox's own ``/etc/hosts``, so TLS still runs end to
end between the agent and the endpoint (the relay only copies bytes).

Nothing else is reachable from inside: no route leaves the namespace, and the host's
other loopback ports are in another namespace.

A plain-HTTP endpoint given in ``metered`` is served by a metering proxy instead of the
byte relay (:mod:`aces_bench.backends.meter`): every model request of the trial is then
recorded on the host, in the trial dir, from the provider's responses.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import os
import socket
import threading
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from aces_bench.backends.meter import MeteringProxy
from aces_bench.core.errors import BackendError

log = logging.getLogger(__name__)

_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True)
class Endpoint:
    """One host:port the sandbox may reach."""

    host: str
    port: int

    @property
    def is_ip(self) -> bool:
        try:
            ipaddress.ip_address(self.host)
        except ValueError:
            return False
        return True

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


def endpoint_from_url(url: str, *, where: str = "model.base_url") -> Endpoint:
    """The host and port of ``url``; BackendError naming ``where`` when it has none."""
    try:
        parts = urlsplit(url)
        port = parts.port or _DEFAULT_PORTS.get(parts.scheme)
    except ValueError:
        port, parts = None, None
    if parts is None or not parts.hostname or port is None:
        raise BackendError(f"cannot tell the host and port of {url!r}", where=where,
                           fix="give a URL like http://127.0.0.1:8000/v1 or https://api.example.com")
    return Endpoint(parts.hostname.lower(), port)


def metered_endpoints(urls: list[str]) -> dict[Endpoint, str]:
    """The plain-HTTP endpoints among ``urls`` (the model's base URL), each with the origin
    its metering proxy forwards to; an https endpoint is left to the byte relay (TLS)."""
    out: dict[Endpoint, str] = {}
    for url in urls:
        if urlsplit(url).scheme != "http":
            continue
        ep = endpoint_from_url(url, where="backend.kwargs.egress_urls")
        out[ep] = f"http://{ep.host}:{ep.port}"
    return out


def allowlist_endpoints(allowed_hosts: list[str], urls: list[str]) -> tuple[Endpoint, ...]:
    """The endpoints for Harbor's allowlist: each configured URL whose host is allowed,
    and ports 443 and 80 of every allowed host no URL names.

    IPv6 literals, CIDR ranges and wildcards are refused (BackendError naming them).
    """
    hosts = [h.lower() for h in allowed_hosts]
    bad = [h for h in hosts if "/" in h or "*" in h or ":" in h]
    if bad:
        raise BackendError(
            f"backend=local can allowlist exact hostnames and IPv4 addresses only, not {', '.join(bad)}",
            where="[environment].allowed_hosts",
            fix="list exact hosts, or use workspace.network=public",
        )
    out: list[Endpoint] = []
    named = set()
    for url in urls:
        ep = endpoint_from_url(url, where="backend.kwargs.egress_urls")
        if ep.host in hosts:
            out.append(ep)
            named.add(ep.host)
    for host in hosts:
        if host not in named:
            out += [Endpoint(host, 443), Endpoint(host, 80)]
    ports: dict[int, str] = {}
    for ep in out:
        if ports.setdefault(ep.port, ep.host) != ep.host:
            raise BackendError(
                f"two allowlisted endpoints share port {ep.port} ({ports[ep.port]} and {ep.host}); "
                "the local sandbox maps every allowed host to 127.0.0.1",
                where="model.base_url", fix="serve them on different ports, or use workspace.network=public",
            )
    return tuple(dict.fromkeys(out))


def hosts_file(endpoints: tuple[Endpoint, ...]) -> str:
    """The sandbox's /etc/hosts: loopback names plus each allowed hostname on 127.0.0.1."""
    names = sorted({ep.host for ep in endpoints if not ep.is_ip and ep.host != "localhost"})
    lines = ["127.0.0.1\tlocalhost", "::1\tlocalhost ip6-localhost ip6-loopback"]
    lines += [f"127.0.0.1\t{name}" for name in names]
    return "\n".join(lines) + "\n"


def listen_in_netns(pid: int, port: int) -> socket.socket:
    """A listening TCP socket on 127.0.0.1:``port`` inside the network namespace of ``pid``.

    ``setns`` changes only the calling thread's namespace, so a throwaway thread does
    it; the socket keeps its namespace after the thread ends.
    """
    result: dict[str, object] = {}

    def work() -> None:
        try:
            fd = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
            try:
                os.setns(fd, os.CLONE_NEWNET)
            finally:
                os.close(fd)
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(("127.0.0.1", port))
            sock.listen(64)
            sock.setblocking(False)
            result["sock"] = sock
        except OSError as exc:
            result["error"] = exc

    thread = threading.Thread(target=work, name=f"aces-egress-{port}")
    thread.start()
    thread.join()
    if "error" in result:
        exc = result["error"]
        raise BackendError(f"cannot open the model endpoint's port {port} inside the sandbox: {exc}",
                           fix="the local sandbox's allowlist needs root (CAP_SYS_ADMIN for setns)")
    return result["sock"]  # type: ignore[return-value]


class EgressRelay:
    """Relays connections made inside a sandbox to its allowed endpoints (module doc)."""

    def __init__(self, pid: int, endpoints: tuple[Endpoint, ...], *, metered: dict[Endpoint, str] | None = None,
                 trial_dir: Path | None = None):
        """``metered``: endpoint -> the plain-HTTP URL its metering proxy forwards to; its
        record goes to ``trial_dir`` (required with ``metered``)."""
        self.pid = pid
        self.endpoints = endpoints
        self.metered = dict(metered or {}) if trial_dir is not None else {}
        self.trial_dir = trial_dir
        self.connections = 0
        self._servers: list[asyncio.AbstractServer] = []
        self._proxies: list[MeteringProxy] = []
        self._tasks: set[asyncio.Task] = set()

    async def start(self) -> None:
        for ep in self.endpoints:
            sock = await asyncio.to_thread(listen_in_netns, self.pid, ep.port)
            if ep in self.metered and self.trial_dir is not None:
                proxy = MeteringProxy(self.metered[ep], self.trial_dir)
                await proxy.start(sock)
                self._proxies.append(proxy)
                continue
            server = await asyncio.start_server(lambda r, w, ep=ep: self._relay(r, w, ep), sock=sock)
            self._servers.append(server)

    async def stop(self) -> None:
        for proxy in self._proxies:
            await proxy.stop()
        self._proxies.clear()
        for server in self._servers:
            server.close()
        for task in list(self._tasks):
            task.cancel()
        for server in self._servers:
            with contextlib.suppress(Exception):
                await server.wait_closed()
        self._servers.clear()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, ep: Endpoint) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        self.connections += 1
        try:
            up_reader, up_writer = await asyncio.open_connection(ep.host, ep.port)
        except OSError as exc:
            log.debug("egress relay: %s unreachable from the host: %s", ep, exc)
            writer.close()
            self._tasks.discard(task)
            return
        try:
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        finally:
            for w in (writer, up_writer):
                w.close()
            self._tasks.discard(task)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (ConnectionError, asyncio.IncompleteReadError, OSError):
        pass
