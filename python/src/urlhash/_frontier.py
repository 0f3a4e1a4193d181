"""The crawl frontier of a urlhash server over HTTP (standard library only).

The endpoints are /v1/frontier/{enqueue,claim,ack,release,extend,delay,
status,delete}: a crawl's queues of requests, one queue a host, each
request known once per crawl by its identity, claimed with a lease (renewed
by extend) and acked once processed.
"""

from __future__ import annotations

import base64
import json
import secrets
import ssl
import urllib.parse
from typing import Any, Dict, Iterable, List, Mapping, NamedTuple, Optional, Union

from ._client import Client, InvalidURLError, UrlhashError

__all__ = ["Frontier", "Claimed"]


class Claimed(NamedTuple):
    """A request handed out by :meth:`Frontier.claim`.

    ``id`` is the frontier's id of the request (32 hex digits), to ack or
    release it; ``data`` the bytes it was enqueued with (``b""`` without).
    """

    id: str
    url: str
    queue: str
    priority: int
    data: bytes


class Frontier:
    """A crawl on a urlhash server's frontier: queues of requests shared by
    any number of processes.

    ``crawl`` names the crawl (the server's default crawl when None); the
    other arguments are :class:`Client`'s. Every write but a claim (see
    :meth:`claim`) is sent with an Idempotency-Key, so that a retry after a
    lost connection gets the first answer. Like Client, one Frontier keeps
    one connection; its calls take turns.
    """

    def __init__(self, base_url: str, crawl: Optional[str] = None, token: Optional[str] = None, *,
                 batch_size: int = 1000, timeout: float = 60.0, retries: int = 5, backoff: float = 0.2,
                 ssl_context: Optional[ssl.SSLContext] = None, ca_file: Optional[str] = None) -> None:
        self._client = Client(base_url, token, batch_size=batch_size, timeout=timeout, retries=retries, backoff=backoff,
                              ssl_context=ssl_context, ca_file=ca_file)
        self.crawl = crawl
        self.batch_size = batch_size

    @property
    def url(self) -> str:
        """The server's address, as given."""
        return self._client.url

    def __repr__(self) -> str:
        return f"urlhash.Frontier({self.url}, crawl={self.crawl!r})"

    def __enter__(self) -> "Frontier":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the kept-alive connection (a later call opens another)."""
        self._client.close()

    def _path(self, endpoint: str, **args: Union[str, int, float, None]) -> str:
        q = {k: v for k, v in args.items() if v is not None}
        if self.crawl is not None:
            q["crawl"] = self.crawl
        path = "/v1/frontier/" + endpoint
        return path + "?" + urllib.parse.urlencode(q) if q else path

    def enqueue(self, requests: Iterable[Mapping[str, Any]]) -> List[Optional[bool]]:
        """Enqueues requests; returns, per request, True when it was new
        (enqueued) and False when the crawl already knew its identity
        (queued, in transit or completed: nothing changed).

        Each request is a dict: ``url`` (required), ``fingerprint`` (hex: the
        identity instead of the URL's), ``queue`` (default: the URL's host),
        ``priority`` (int) and ``data`` (bytes, returned by claim). A request
        the server refuses raises :class:`InvalidURLError` after the whole
        call, as :meth:`Client.add` does (``None`` in its results).
        """
        lines: List[Dict[str, Any]] = []
        for r in requests:
            line: Dict[str, Any] = {"url": r["url"]}
            for k in ("fingerprint", "queue", "priority"):
                if r.get(k) is not None:
                    line[k] = r[k]
            if r.get("data") is not None:
                line["data"] = base64.b64encode(r["data"]).decode("ascii")
            lines.append(line)
        results: List[Optional[bool]] = []
        invalid = []
        for i in range(0, len(lines), self.batch_size):
            chunk = lines[i : i + self.batch_size]
            body = "".join(json.dumps(x, separators=(",", ":")) + "\n" for x in chunk).encode("utf-8", "surrogateescape")
            answer = self._lines(self._client._post(self._path("enqueue"), body, key=secrets.token_hex(16),
                                                    ctype="application/x-ndjson"), len(chunk))
            for j, said in enumerate(answer):
                word, _, reason = said.partition("\t")
                if word == "invalid":
                    invalid.append((i + j, str(chunk[j]["url"]), reason))
                    results.append(None)
                elif word in ("new", "present"):
                    results.append(word == "new")
                else:
                    raise UrlhashError(f"urlhash: enqueue answer line {said!r}")
        if invalid:
            raise InvalidURLError(results, invalid)
        return results

    def claim(self, max: int = 100, *, lease: Optional[float] = None, per_queue: Optional[int] = None,
              consumer: Optional[str] = None, idempotent: bool = False, wait: Optional[float] = None) -> List[Claimed]:
        """Claims up to ``max`` due requests (:class:`Claimed`), at most
        ``per_queue`` a queue (server default 1). Each stays in transit for
        ``lease`` seconds (server default 60): unless acked, released or
        extended (:meth:`extend`) by then, it is due again for any claimer.

        With ``wait`` (seconds, 0..30), a claim that finds nothing due waits
        on the server until something is (enqueued, released, a lease or a
        delay ended) or ``wait`` passes, then answers what it found: a
        consumer needs no polling. It must stay under the client's
        ``timeout``.

        With ``idempotent``, the claim carries an Idempotency-Key, so that a
        retry after a lost answer gets the same requests; the server then
        keeps the answer durably (a disk sync per claim). Without, such a
        retry gets others, and the lost ones come back after their lease:
        later, never lost."""
        if wait is not None and wait >= self._client.timeout:
            raise ValueError(f"urlhash: claim wait={wait:g} s is not under the client's timeout ({self._client.timeout:g} s)")
        path = self._path("claim", max=max, lease=lease, per_queue=per_queue, consumer=consumer,
                          wait=None if wait is None else repr(float(wait)))
        data = self._client._post(path, b"", key=secrets.token_hex(16) if idempotent else None)
        out: List[Claimed] = []
        for line in data.splitlines():
            if not line.strip():
                continue
            o = json.loads(line)
            out.append(Claimed(o["id"], o["url"], o.get("queue", ""), o.get("priority", 0),
                               base64.b64decode(o["data"]) if o.get("data") else b""))
        return out

    def ack(self, ids: Iterable[str]) -> List[bool]:
        """Marks claimed requests completed (never handed out again);
        returns, per id, False when the crawl has no such request."""
        return self._ids("ack", ids, "done")

    def release(self, ids: Iterable[str]) -> List[bool]:
        """Gives claimed requests back, due at once; returns, per id, False
        when it was not in transit."""
        return self._ids("release", ids, "released")

    def extend(self, ids: Iterable[str], lease: Optional[float] = None) -> List[bool]:
        """Renews the lease of claimed requests: each stays in transit until
        ``lease`` seconds from now (server default 60). Returns, per id,
        False when it was not in transit any more (unknown, completed,
        released, or its lease had passed and it is due again for another
        claimer: this caller no longer holds it)."""
        return self._ids("extend", ids, "extended", lease=None if lease is None else repr(float(lease)))

    def delete_crawl(self) -> int:
        """Deletes the whole crawl: its queued, in-transit and completed
        requests and its delays. Returns how many requests it knew."""
        answer: Dict[str, Any] = json.loads(self._client._post(self._path("delete"), b"", key=secrets.token_hex(16)))
        return int(answer["deleted"])

    def set_delay(self, seconds: float, queue: Optional[str] = None) -> Dict[str, Any]:
        """Sets the politeness delay between two hand-outs of a queue, for
        every process of the crawl: ``queue``'s, or without it the crawl's
        default (1 s until set)."""
        data = self._client._post(self._path("delay", seconds=repr(float(seconds)), queue=queue), b"", key=secrets.token_hex(16))
        answer: Dict[str, Any] = json.loads(data)
        return answer

    def status(self) -> Dict[str, Any]:
        """The crawl's counts: ``queued`` (waiting, due now or later),
        ``due``, ``in_transit``, ``completed``, ``queues``, and
        ``recounting`` while a restarted server still recounts them."""
        answer: Dict[str, Any] = json.loads(self._client._post(self._path("status"), None, method="GET"))
        return answer

    def _ids(self, endpoint: str, ids: Iterable[str], yes: str, **args: Union[str, int, float, None]) -> List[bool]:
        ids = list(ids)
        out: List[bool] = []
        for i in range(0, len(ids), self.batch_size):
            chunk = ids[i : i + self.batch_size]
            for x in chunk:
                if "\n" in x or "\r" in x:
                    raise ValueError(f"urlhash: request id {x!r} holds a line break")
            body = ("\n".join(chunk) + "\n").encode("ascii", "replace")
            for j, said in enumerate(self._lines(self._client._post(self._path(endpoint, **args), body, key=secrets.token_hex(16)), len(chunk))):
                word, _, reason = said.partition("\t")
                if word == "invalid":
                    raise ValueError(f"urlhash: request id {chunk[j]!r}: {reason}")
                if word not in (yes, "unknown"):
                    raise UrlhashError(f"urlhash: {endpoint} answer line {said!r}")
                out.append(word == yes)
        return out

    @staticmethod
    def _lines(data: bytes, want: int) -> List[str]:
        answer = data.decode("utf-8", "replace").split("\n")
        if answer and answer[-1] == "":
            answer.pop()
        if len(answer) != want:
            raise UrlhashError(f"urlhash: {len(answer)} answer lines for {want} lines")
        return answer
