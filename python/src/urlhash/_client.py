"""The HTTP client of a urlhash server (standard library only)."""

from __future__ import annotations

import http.client
import json
import os
import secrets
import ssl
import threading
import time
import urllib.parse
from typing import Dict, Iterable, List, Optional, Sequence, Tuple, Union

__all__ = ["Client", "UrlhashError", "HTTPError", "InvalidURLError", "UnavailableError", "TLSError", "TOKEN_ENV"]

#: The environment variable a :class:`Client` reads its token from when it
#: is given none: the same one every ``urlhash`` command reads.
TOKEN_ENV = "URLHASH_TOKEN"


class UrlhashError(Exception):
    """Base class of the errors this package raises."""


class HTTPError(UrlhashError):
    """The server answered with an error status.

    ``status`` is the HTTP status, ``kind`` the server's error kind
    ("bad_request", "read_only", "key_reused", "unauthorized", ...) and
    ``message`` its text.
    """

    def __init__(self, status: int, kind: str, message: str) -> None:
        hint = ""
        if status == 401:
            hint = f" (give the server's token: token=..., or {TOKEN_ENV} in the environment)"
        super().__init__(f"urlhash: HTTP {status} {kind}: {message}{hint}")
        self.status = status
        self.kind = kind
        self.message = message


class UnavailableError(UrlhashError):
    """The server could not be reached, after every retry."""


class TLSError(UrlhashError):
    """The connection's TLS failed for a reason no retry mends: the server's
    certificate is not trusted (give its CA with ``ca_file=`` or
    ``ssl_context=``), or the client and the server disagree on HTTPS (an
    ``http://`` address of an HTTPS server, or the reverse). Raised at the
    first attempt."""


class InvalidURLError(UrlhashError, ValueError):
    """Some URLs of a call are not URLs the server can hash.

    The call was carried out for the others: ``results`` holds every answer,
    ``None`` for an invalid URL, and ``invalid`` lists ``(position, url,
    reason)`` for each invalid one.
    """

    def __init__(self, results: List[Optional[bool]], invalid: List[Tuple[int, str, str]]) -> None:
        first = invalid[0]
        more = f" (and {len(invalid) - 1} more)" if len(invalid) > 1 else ""
        super().__init__(f"urlhash: invalid url {first[1]!r} at {first[0]}: {first[2]}{more}")
        self.results = results
        self.invalid = invalid


# Errors worth a retry: the connection, or a server that is stopping or busy.
_RETRY_STATUS = {502, 503, 504}

# What Go's net/http answers (400, plain text) to plain HTTP on a TLS port.
_HTTPS_PORT_ANSWER = b"Client sent an HTTP request to an HTTPS server"


class Client:
    """A urlhash server's seen-set.

    ``base_url`` is the server (``http://HOST:PORT`` or ``https://...``).
    ``token`` is its bearer token; when it is ``None`` the client reads
    ``URLHASH_TOKEN`` from the environment once, here (as every ``urlhash``
    command does); ``token=""`` sends none whatever the environment says.
    ``batch_size`` URLs go in one request; ``retries`` more attempts are
    made after a connection error or a 502/503/504, ``backoff`` seconds
    apart, doubling. For an HTTPS server, ``ca_file`` names a PEM file of
    the certificate authorities to trust (a private CA), or ``ssl_context``
    gives the whole :class:`ssl.SSLContext`; by default the system's CAs.
    A TLS failure (an untrusted certificate, HTTP against HTTPS) raises
    :class:`TLSError` at once, without retries. A Client keeps one
    connection alive and is safe to share between threads (requests take
    turns); use one per process, or one per thread for requests at once.
    """

    def __init__(
        self,
        base_url: str,
        token: Optional[str] = None,
        *,
        batch_size: int = 1000,
        timeout: float = 60.0,
        retries: int = 5,
        backoff: float = 0.2,
        ssl_context: Optional[ssl.SSLContext] = None,
        ca_file: Optional[str] = None,
    ) -> None:
        u = urllib.parse.urlsplit(base_url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError(f"urlhash: server address {base_url!r}: want http://HOST:PORT")
        if batch_size < 1:
            raise ValueError("urlhash: batch_size must be 1 or more")
        if ssl_context is not None and ca_file is not None:
            raise ValueError("urlhash: give ssl_context or ca_file, not both")
        if (ssl_context is not None or ca_file is not None) and u.scheme != "https":
            raise ValueError(f"urlhash: server address {base_url!r}: ssl_context and ca_file are for https:// servers")
        if ca_file is not None:
            ssl_context = ssl.create_default_context(cafile=ca_file)
        if token is None:
            token = os.environ.get(TOKEN_ENV) or None
        self._scheme = u.scheme
        self._host: str = u.hostname
        self._port = u.port
        self._prefix = u.path.rstrip("/")
        self._token = token
        self._ssl = ssl_context
        self.batch_size = batch_size
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self._conn: Optional[http.client.HTTPConnection] = None
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        """The server's address, as given (without a password)."""
        port = f":{self._port}" if self._port else ""
        return f"{self._scheme}://{self._host}{port}{self._prefix}"

    def __repr__(self) -> str:
        return f"urlhash.Client({self.url})"

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the kept-alive connection (a later call opens another)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def add(self, urls: Iterable[str], *, revisit_after: Union[None, str, float] = None) -> List[bool]:
        """Adds the URLs' identities; returns, per URL, True when it was new.

        A URL repeated in one call is new at most once (the first). With
        ``revisit_after`` (seconds, or a Go duration string such as "24h") a
        URL is new again once it was last reported new that long ago, by the
        server's clock. An item that is not a ``str`` raises TypeError naming
        its position, before anything is sent.
        """
        path = "/v1/urls/add"
        if revisit_after is not None:
            if not isinstance(revisit_after, str):
                revisit_after = f"{float(revisit_after)}s"
            path += "?revisit_after=" + urllib.parse.quote(revisit_after)
        return self._urls(path, urls, "new", "present", keyed=True)

    def has(self, urls: Iterable[str]) -> List[bool]:
        """Returns, per URL, True when its identity is stored."""
        return self._urls("/v1/urls/has", urls, "present", "absent", keyed=False)

    def add_hashes(self, hashes: Sequence[bytes]) -> List[bool]:
        """Adds 32-byte hashes (bytes) as they are; returns, per hash, True when new.

        For identities made elsewhere (scrapy's request fingerprints).
        """
        out: List[bool] = []
        for i, h in enumerate(hashes):
            if not isinstance(h, (bytes, bytearray, memoryview)):
                raise TypeError(f"urlhash: hash at position {i} is {type(h).__name__}, want 32 bytes")
            if len(h) != 32:
                raise ValueError(f"urlhash: hash at position {i} has {len(h)} bytes, want 32")
        for i in range(0, len(hashes), self.batch_size):
            chunk = hashes[i : i + self.batch_size]
            body = bytearray()
            for h in chunk:
                body += b"\x20" + bytes(h) + b"\x00\x00"
            answer = self._post("/v1/add", bytes(body), key=secrets.token_hex(16), ctype="application/octet-stream")
            if len(answer) != len(chunk):
                raise UrlhashError(f"urlhash: {len(answer)} answers for {len(chunk)} hashes")
            out.extend(b == 1 for b in answer)
        return out

    def _urls(self, path: str, urls: Iterable[str], yes: str, no: str, keyed: bool) -> List[bool]:
        """Posts the URLs in batches to path, whose answer lines say yes,
        no or invalid; returns True for yes, False for no."""
        if isinstance(urls, (str, bytes)):
            raise TypeError("urlhash: pass a list of URLs, not one string")
        items = list(urls)
        for i, u in enumerate(items):
            if not isinstance(u, str):
                raise TypeError(f"urlhash: url at position {i} is {type(u).__name__} ({u!r:.80}), want str")
        results: List[Optional[bool]] = []
        invalid: List[Tuple[int, str, str]] = []
        for i in range(0, len(items), self.batch_size):
            chunk = items[i : i + self.batch_size]
            for j, u in enumerate(chunk):
                if "\n" in u or "\r" in u:
                    raise InvalidURLError([], [(i + j, u, "holds a line break")])
            body = ("\n".join(chunk) + "\n").encode("utf-8", "surrogateescape")
            key = secrets.token_hex(16) if keyed else None
            answer = self._post(path, body, key=key).decode("utf-8", "replace").split("\n")
            if answer and answer[-1] == "":
                answer.pop()
            if len(answer) != len(chunk):
                raise UrlhashError(f"urlhash: {len(answer)} answers for {len(chunk)} urls")
            for j, line in enumerate(answer):
                word, _, reason = line.partition("\t")
                if word == "invalid":
                    invalid.append((i + j, chunk[j], reason))
                    results.append(None)
                elif word in (yes, no):
                    results.append(word == yes)
                else:
                    raise UrlhashError(f"urlhash: answer line {line!r}")
        if invalid:
            raise InvalidURLError(results, invalid)
        return [bool(r) for r in results]

    def _post(
        self,
        path: str,
        body: Optional[bytes],
        key: Optional[str] = None,
        ctype: str = "text/plain; charset=utf-8",
        method: str = "POST",
    ) -> bytes:
        headers = {"Content-Type": ctype}
        if self._token:
            headers["Authorization"] = "Bearer " + self._token
        if key:
            # The same key on every attempt: the server answers a repeat
            # with its first answer.
            headers["Idempotency-Key"] = '"' + key + '"'
        delay = self.backoff
        last: Optional[Exception] = None
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(delay)
                delay *= 2
            try:
                status, data = self._send(method, self._prefix + path, body, headers)
            except ssl.SSLError as e:
                if isinstance(e, (ssl.SSLEOFError, ssl.SSLZeroReturnError)):
                    last = e  # the connection was cut: worth a retry
                    continue
                raise self._tls_error(e) from e
            except (OSError, http.client.HTTPException) as e:
                last = e
                continue
            if status in _RETRY_STATUS:
                last = HTTPError(status, "unavailable", data[:200].decode("utf-8", "replace"))
                continue
            if status >= 300:
                if status == 400 and data.startswith(_HTTPS_PORT_ANSWER):
                    raise TLSError(f"urlhash: {self.url} speaks HTTPS: use https://{self._netloc()}{self._prefix}")
                try:
                    answer = json.loads(data)
                    raise HTTPError(status, answer.get("kind", ""), answer.get("error", ""))
                except (ValueError, AttributeError):
                    raise HTTPError(status, "", data[:200].decode("utf-8", "replace")) from None
            return data
        raise UnavailableError(f"urlhash: {self.url}: {last}") from last

    def _netloc(self) -> str:
        return f"{self._host}:{self._port}" if self._port else self._host

    def _tls_error(self, e: ssl.SSLError) -> TLSError:
        """The TLSError that says what to do about e."""
        if isinstance(e, ssl.SSLCertVerificationError):
            return TLSError(
                f"urlhash: {self.url}: the server's certificate is not trusted ({e.verify_message or e}): "
                "give the CA that signed it with ca_file=... (or ssl_context=...)"
            )
        if getattr(e, "reason", "") in ("WRONG_VERSION_NUMBER", "UNKNOWN_PROTOCOL", "RECORD_LAYER_FAILURE", "HTTP_REQUEST"):
            return TLSError(f"urlhash: {self.url}: the server does not speak HTTPS ({e}): use http://{self._netloc()}{self._prefix}")
        return TLSError(f"urlhash: {self.url}: TLS failed: {e}")

    def _send(self, method: str, path: str, body: Optional[bytes], headers: Dict[str, str]) -> Tuple[int, bytes]:
        with self._lock:
            if self._conn is None:
                if self._scheme == "https":
                    self._conn = http.client.HTTPSConnection(self._host, self._port, timeout=self.timeout, context=self._ssl)
                else:
                    self._conn = http.client.HTTPConnection(self._host, self._port, timeout=self.timeout)
            conn = self._conn
            try:
                conn.request(method, path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
            except BaseException:
                # The connection is in an unknown state: the next attempt
                # opens another.
                conn.close()
                self._conn = None
                raise
            if resp.getheader("Connection", "").lower() == "close":
                conn.close()
                self._conn = None
            return resp.status, data
