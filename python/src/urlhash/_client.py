"""The HTTP client of a urlhash server (standard library only)."""

import http.client
import json
import secrets
import threading
import time
import urllib.parse

__all__ = ["Client", "UrlhashError", "HTTPError", "InvalidURLError", "UnavailableError"]


class UrlhashError(Exception):
    """Base class of the errors this package raises."""


class HTTPError(UrlhashError):
    """The server answered with an error status.

    ``status`` is the HTTP status, ``kind`` the server's error kind
    ("bad_request", "read_only", "key_reused", ...) and ``message`` its text.
    """

    def __init__(self, status, kind, message):
        super().__init__(f"urlhash: HTTP {status} {kind}: {message}")
        self.status = status
        self.kind = kind
        self.message = message


class UnavailableError(UrlhashError):
    """The server could not be reached, after every retry."""


class InvalidURLError(UrlhashError, ValueError):
    """Some URLs of a call are not URLs the server can hash.

    The call was carried out for the others: ``results`` holds every answer,
    ``None`` for an invalid URL, and ``invalid`` lists ``(position, url,
    reason)`` for each invalid one.
    """

    def __init__(self, results, invalid):
        first = invalid[0]
        more = f" (and {len(invalid) - 1} more)" if len(invalid) > 1 else ""
        super().__init__(f"urlhash: invalid url {first[1]!r} at {first[0]}: {first[2]}{more}")
        self.results = results
        self.invalid = invalid


# Errors worth a retry: the connection, or a server that is stopping or busy.
_RETRY_STATUS = {502, 503, 504}


class Client:
    """A urlhash server's seen-set.

    ``base_url`` is the server (``http://HOST:PORT``), ``token`` its bearer
    token. ``batch_size`` URLs go in one request; ``retries`` more attempts
    are made after a connection error or a 502/503/504, ``backoff`` seconds
    apart, doubling. A Client keeps one connection alive and is safe to share
    between threads (requests take turns); use one per process.
    """

    def __init__(self, base_url, token=None, *, batch_size=1000, timeout=60.0, retries=5, backoff=0.2):
        u = urllib.parse.urlsplit(base_url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError(f"urlhash: server address {base_url!r}: want http://HOST:PORT")
        if batch_size < 1:
            raise ValueError("urlhash: batch_size must be 1 or more")
        self._scheme = u.scheme
        self._host = u.hostname
        self._port = u.port
        self._prefix = u.path.rstrip("/")
        self._token = token
        self.batch_size = batch_size
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self._conn = None
        self._lock = threading.Lock()

    def __repr__(self):
        return f"urlhash.Client({self._scheme}://{self._host}:{self._port})"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Closes the kept-alive connection (a later call opens another)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def add(self, urls, *, revisit_after=None):
        """Adds the URLs' identities; returns, per URL, True when it was new.

        A URL repeated in one call is new at most once (the first). With
        ``revisit_after`` (seconds, or a Go duration string such as "24h") a
        URL is new again once it was last reported new that long ago, by the
        server's clock.
        """
        path = "/v1/urls/add"
        if revisit_after is not None:
            if not isinstance(revisit_after, str):
                revisit_after = f"{float(revisit_after)}s"
            path += "?revisit_after=" + urllib.parse.quote(revisit_after)
        return self._urls(path, urls, "new", "present", keyed=True)

    def has(self, urls):
        """Returns, per URL, True when its identity is stored."""
        return self._urls("/v1/urls/has", urls, "present", "absent", keyed=False)

    def add_hashes(self, hashes):
        """Adds 32-byte hashes (bytes) as they are; returns, per hash, True when new.

        For identities made elsewhere (scrapy's request fingerprints).
        """
        out = []
        for i in range(0, len(hashes), self.batch_size):
            chunk = hashes[i : i + self.batch_size]
            body = bytearray()
            for h in chunk:
                if len(h) != 32:
                    raise ValueError(f"urlhash: hash of {len(h)} bytes, want 32")
                body += b"\x20" + bytes(h) + b"\x00\x00"
            answer = self._post("/v1/add", bytes(body), key=secrets.token_hex(16), ctype="application/octet-stream")
            if len(answer) != len(chunk):
                raise UrlhashError(f"urlhash: {len(answer)} answers for {len(chunk)} hashes")
            out.extend(b == 1 for b in answer)
        return out

    def _urls(self, path, urls, yes, no, keyed):
        """Posts the URLs in batches to path, whose answer lines say yes,
        no or invalid; returns True for yes, False for no."""
        if isinstance(urls, str):
            raise TypeError("urlhash: pass a list of URLs, not one string")
        urls = list(urls)
        results, invalid = [], []
        for i in range(0, len(urls), self.batch_size):
            chunk = urls[i : i + self.batch_size]
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
        return results

    def _post(self, path, body, key=None, ctype="text/plain; charset=utf-8"):
        headers = {"Content-Type": ctype}
        if self._token:
            headers["Authorization"] = "Bearer " + self._token
        if key:
            # The same key on every attempt: the server answers a repeat
            # with its first answer.
            headers["Idempotency-Key"] = '"' + key + '"'
        delay = self.backoff
        last = None
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(delay)
                delay *= 2
            try:
                status, data = self._send("POST", self._prefix + path, body, headers)
            except (OSError, http.client.HTTPException) as e:
                last = e
                continue
            if status in _RETRY_STATUS:
                last = HTTPError(status, "unavailable", data[:200].decode("utf-8", "replace"))
                continue
            if status >= 300:
                try:
                    e = json.loads(data)
                    raise HTTPError(status, e.get("kind", ""), e.get("error", ""))
                except (ValueError, AttributeError):
                    raise HTTPError(status, "", data[:200].decode("utf-8", "replace")) from None
            return data
        raise UnavailableError(f"urlhash: {self._host}:{self._port}: {last}") from last

    def _send(self, method, path, body, headers):
        with self._lock:
            if self._conn is None:
                cls = http.client.HTTPSConnection if self._scheme == "https" else http.client.HTTPConnection
                self._conn = cls(self._host, self._port, timeout=self.timeout)
            try:
                self._conn.request(method, path, body=body, headers=headers)
                resp = self._conn.getresponse()
                data = resp.read()
            except BaseException:
                # The connection is in an unknown state: the next attempt
                # opens another.
                self._conn.close()
                self._conn = None
                raise
            if resp.getheader("Connection", "").lower() == "close":
                self._conn.close()
                self._conn = None
            return resp.status, data
