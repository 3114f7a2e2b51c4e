"""Fetching a Client ID Metadata Document without becoming a proxy into the network the
server sits in: HTTPS only, every resolved address public, the connection pinned to the
address that was checked (no DNS rebinding between check and connect), no redirects, a
size cap and a deadline. Loopback documents (`http`, or `https` with a certificate the
trust store accepts) are allowed only when the caller says so (the local gateway, where the
MCP client runs on the same machine)."""

from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
import time
from dataclasses import dataclass
from typing import Callable
from urllib.parse import urlsplit

from .errors import OAuthError

MAX_BYTES = 5 * 1024
TIMEOUT_S = 5.0
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")


@dataclass(frozen=True)
class Fetched:
    body: bytes
    max_age: int | None  # from Cache-Control, if any


Fetcher = Callable[[str], Fetched]


def refuse(description: str) -> OAuthError:
    return OAuthError("invalid_client", description, redirect=False)


def is_loopback_http(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme == "http" and (parts.hostname or "") in LOOPBACK_HOSTS


def is_loopback_document(url: str) -> bool:
    """`http` or `https` on a loopback host: what only the local gateway may fetch."""
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and (parts.hostname or "") in LOOPBACK_HOSTS


def public_addresses(host: str, port: int) -> list[str]:
    """The host's addresses, if every one is globally routable; else refused."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise refuse("the client metadata host does not resolve") from None
    addresses = sorted({info[4][0] for info in infos})
    for address in addresses:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
        if not ip.is_global or ip.is_multicast:
            raise refuse("the client metadata document is not on a public address")
    if not addresses:
        raise refuse("the client metadata host does not resolve")
    return addresses


class _Pinned(http.client.HTTPSConnection):
    """HTTPS to `address`, certificate checked against the URL's host name."""

    def __init__(self, host: str, address: str, port: int, timeout: float):
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self._address = address

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)


def fetch(url: str, *, allow_loopback_http: bool = False, max_bytes: int = MAX_BYTES, timeout: float = TIMEOUT_S) -> Fetched:
    """GET `url` under the rules above; OAuthError(invalid_client) on any breach."""
    parts = urlsplit(url)
    host, port = parts.hostname or "", parts.port
    if allow_loopback_http and is_loopback_http(url):
        conn: http.client.HTTPConnection = http.client.HTTPConnection(host.strip("[]"), port or 80, timeout=timeout)
    elif allow_loopback_http and is_loopback_document(url):  # https, checked against the trust store
        conn = http.client.HTTPSConnection(host.strip("[]"), port or 443, timeout=timeout, context=ssl.create_default_context())
    elif parts.scheme != "https":
        raise refuse("a client metadata document must be served over https")
    else:
        address = public_addresses(host, port or 443)[0]
        conn = _Pinned(host, address, port or 443, timeout)
    deadline = time.monotonic() + timeout
    try:
        conn.request("GET", parts.path + (f"?{parts.query}" if parts.query else ""),
                     headers={"Accept": "application/json", "User-Agent": "xmemo-oauth"})
        resp = conn.getresponse()
        if resp.status != 200:
            raise refuse(f"the client metadata document answered HTTP {resp.status}")
        declared = resp.getheader("Content-Length")
        if declared and declared.isdigit() and int(declared) > max_bytes:
            raise refuse(f"the client metadata document exceeds {max_bytes} bytes")
        body = b""
        while len(body) <= max_bytes:
            if time.monotonic() > deadline:
                raise refuse("the client metadata document took too long")
            chunk = resp.read(1024)
            if not chunk:
                break
            body += chunk
        if len(body) > max_bytes:
            raise refuse(f"the client metadata document exceeds {max_bytes} bytes")
        return Fetched(body, _max_age(resp.getheader("Cache-Control") or ""))
    except (OSError, http.client.HTTPException, ssl.SSLError):
        raise refuse("the client metadata document could not be fetched") from None
    finally:
        conn.close()


def _max_age(cache_control: str) -> int | None:
    for part in cache_control.split(","):
        name, _, value = part.strip().partition("=")
        if name.lower() == "max-age" and value.isdigit():
            return int(value)
        if name.lower() in ("no-store", "no-cache"):
            return 0
    return None
