"""A scrapy dupefilter and scheduler over a urlhash server.

In the project's settings::

    SCHEDULER = "urlhash.scrapy.Scheduler"      # the crawl's queue on the server
    DUPEFILTER_CLASS = "urlhash.scrapy.RFPDupeFilter"
    URLHASH_URL = "http://127.0.0.1:7411"
    URLHASH_TOKEN = "..."          # when the server wants one (else $URLHASH_TOKEN)
    URLHASH_CA_FILE = "ca.pem"     # an https:// server with a private CA

With the Scheduler, every crawler process of the crawl shares one queue of
requests (the server's crawl frontier): see :class:`Scheduler`.

With the dupefilter alone, any number of crawler processes share one
seen-set: a GET request is seen when its URL's urlhash identity (the URL
Standard's canonical form, the fragment dropped first, whatever the index's
profile) is stored; any other request is keyed by scrapy's own request
fingerprint, stored as a hash, so that it is never merged with a GET of the
same URL.

The filter never blocks scrapy's reactor on the network. scrapy asks
``request_seen`` synchronously, and only the server knows whether another
process has the URL, so a request new to this call is held: ``request_seen``
answers "seen" for now (not logged or counted as a duplicate), the request
joins a batch that a worker thread sends to the server (at most two batches
in flight, each on a connection of its own), and when the server answers
"new" the request is scheduled again, marked so that it passes; when it
answers "present" it is counted and logged as a filtered duplicate. While
requests wait for an answer the spider is kept open (``spider_idle``).

When the server cannot be reached (after the client's retries) or refuses
the requests, the crawl fails loudly: an ERROR names the server, the spider
is closed with the reason ``urlhash_unavailable`` (or ``urlhash_error``),
and the process exits non-zero, so that a scheduler (cron, CI, Airflow)
sees the failure; no request is fetched without the server's answer.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any, List, Optional, Tuple

from scrapy import signals
from scrapy.dupefilters import BaseDupeFilter
from scrapy.exceptions import DontCloseSpider
from scrapy.http import Request

from ._client import Client, InvalidURLError, UnavailableError
from ._scheduler import Scheduler
from ._settings import server_settings

__all__ = ["RFPDupeFilter", "Scheduler", "REASON_UNAVAILABLE", "REASON_ERROR"]

logger = logging.getLogger(__name__)

#: The spider's close reason when the server cannot be reached.
REASON_UNAVAILABLE = "urlhash_unavailable"
#: The spider's close reason when the server refuses the filter's requests
#: (a wrong token, a read-only server, TLS trust...).
REASON_ERROR = "urlhash_error"

# The meta key that marks a request the server answered "new": the URL it
# was approved with (a redirect's copy of the meta has another URL).
_APPROVED = "urlhash_approved"

# Batches sent at once, each on a client (a connection) of its own.
_IN_FLIGHT = 2

# A key: ("url", URL without its fragment) for a GET, ("fp", 32 bytes) for
# another request.
_Key = Tuple[str, Any]


class RFPDupeFilter(BaseDupeFilter):
    """Request dupefilter whose seen-set is a urlhash server's index.

    Made by scrapy with ``from_crawler`` (or ``from_spider``), it holds
    requests and asks the server in batches off the reactor (see the module's
    documentation). Made without a crawler (``from_settings``, or the
    constructor without ``crawler``), ``request_seen`` asks the server at
    once and blocks until it answers.
    """

    def __init__(
        self,
        client: Client,
        debug: bool = False,
        fingerprinter: Any = None,
        *,
        crawler: Any = None,
        clients: Optional[List[Client]] = None,
    ) -> None:
        self.client = client
        self.debug = debug
        self.fingerprinter = fingerprinter
        self.logdupes = True
        self.crawler = crawler
        self._idle_clients: List[Client] = list(clients) if clients else [client]
        self._clients = list(self._idle_clients)
        self._waiting: List[Tuple[_Key, Request]] = []  # not sent yet
        self._in_flight = 0
        self._held: Optional[Request] = None  # the request request_seen just held
        self._flush_call: Any = None
        self._failed: Optional[BaseException] = None
        self._closed = False

    @classmethod
    def from_settings(cls, settings: Any, *, fingerprinter: Any = None, crawler: Any = None) -> "RFPDupeFilter":
        server = server_settings(settings, "RFPDupeFilter")
        clients = [server.client() for _ in range(_IN_FLIGHT if crawler is not None else 1)]
        return cls(clients[0], debug=settings.getbool("DUPEFILTER_DEBUG"), fingerprinter=fingerprinter, crawler=crawler, clients=clients)

    @classmethod
    def from_crawler(cls, crawler: Any) -> "RFPDupeFilter":
        df = cls.from_settings(crawler.settings, fingerprinter=getattr(crawler, "request_fingerprinter", None), crawler=crawler)
        crawler.signals.connect(df._spider_idle, signal=signals.spider_idle)
        crawler.signals.connect(df._engine_stopped, signal=signals.engine_stopped)
        return df

    @classmethod
    def from_spider(cls, spider: Any) -> "RFPDupeFilter":
        """For schedulers that make their dupefilter from the spider
        (scrapy-redis's, through SCHEDULER_DUPEFILTER_CLASS)."""
        return cls.from_crawler(spider.crawler)

    def request_seen(self, request: Request) -> bool:
        """Reports whether the request was seen, by any process, and records
        it: with a crawler, True for a request held for the server's answer
        (scheduled again if it is new)."""
        if request.meta.get(_APPROVED) == request.url:
            del request.meta[_APPROVED]
            return False  # the server answered "new"
        key = self._key(request)
        if self.crawler is None:
            new = self._ask([key])[0]
            if new is None:  # a URL the server cannot hash: scrapy's fingerprint decides
                new = self._ask([("fp", self._fingerprint_hash(request))])[0]
            return not new
        if self._failed is None and not self._closed:
            self._waiting.append((key, request))
            self._schedule_flush()
        self._held = request
        return True

    def _key(self, request: Request) -> _Key:
        if request.method == "GET":
            return ("url", request.url.split("#", 1)[0])
        return ("fp", self._fingerprint_hash(request))

    def _ask(self, keys: List[_Key], client: Optional[Client] = None) -> List[Optional[bool]]:
        """Adds the keys' identities on the server; per key, True when it
        was new, None for a URL the server cannot hash."""
        c = client or self.client
        out: List[Optional[bool]] = [None] * len(keys)
        urls = [(i, k[1]) for i, k in enumerate(keys) if k[0] == "url"]
        hashes = [(i, k[1]) for i, k in enumerate(keys) if k[0] == "fp"]
        if urls:
            try:
                answers: List[Optional[bool]] = list(c.add([u for _, u in urls]))
            except InvalidURLError as e:
                answers = e.results
            for (i, _), a in zip(urls, answers):
                out[i] = a
        if hashes:
            for (i, _), a in zip(hashes, c.add_hashes([h for _, h in hashes])):
                out[i] = a
        return out

    def _schedule_flush(self) -> None:
        if self._flush_call is None:
            from twisted.internet import reactor

            # Once this turn of the reactor is over: the links of one page
            # go in one batch.
            self._flush_call = reactor.callLater(0, self._flush)  # type: ignore[attr-defined]

    def _flush(self) -> None:
        """Sends waiting requests' keys, a batch on each idle client."""
        from twisted.internet import threads

        self._flush_call = None
        while self._waiting and self._idle_clients and self._failed is None and not self._closed:
            n = self.client.batch_size
            batch, self._waiting = self._waiting[:n], self._waiting[n:]
            client = self._idle_clients.pop()
            self._in_flight += 1
            d = threads.deferToThread(self._ask, [k for k, _ in batch], client)
            d.addCallbacks(self._answered, self._ask_failed, callbackArgs=(client, batch), errbackArgs=(client,))

    def _answered(self, answers: List[Optional[bool]], client: Client, batch: List[Tuple[_Key, Request]]) -> None:
        self._idle_clients.append(client)
        self._in_flight -= 1
        if self._closed or self._failed is not None:
            return
        engine = self.crawler.engine
        for (key, request), new in zip(batch, answers):
            if new is None:
                # A URL the server cannot hash: scrapy's own fingerprint
                # decides, as for a request of another method.
                self._waiting.append((("fp", self._fingerprint_hash(request)), request))
            elif new:
                request.meta[_APPROVED] = request.url
                engine.crawl(request)
            else:
                self.log(request, engine.spider)
        if self._waiting:
            self._schedule_flush()
        elif self._in_flight == 0:
            # Nothing more to wait for: let the engine see at once whether
            # the spider is done (else its next heartbeat, within 5 s).
            nextcall = getattr(getattr(engine, "slot", None), "nextcall", None)
            if nextcall is not None:
                nextcall.schedule()

    def _ask_failed(self, failure: Any, client: Client) -> None:
        self._idle_clients.append(client)
        self._in_flight -= 1
        if self._failed is not None or self._closed:
            return
        err = failure.value
        self._failed = err
        self._waiting.clear()
        reason = REASON_UNAVAILABLE if isinstance(err, (UnavailableError, OSError)) else REASON_ERROR
        logger.error(
            "urlhash: the seen-set server %s failed: %s; closing the spider (%s): "
            "no request is fetched without its answer",
            self.client.url,
            err,
            reason,
        )
        engine = self.crawler.engine
        self.crawler.stats.set_value("urlhash/error", f"{type(err).__name__}: {err}")
        engine.close_spider(engine.spider, reason)

    def _spider_idle(self, spider: Any) -> None:
        if (self._waiting or self._in_flight) and self._failed is None:
            raise DontCloseSpider

    def _engine_stopped(self) -> None:
        if self._failed is not None:
            # scrapy (2.8, Debian 12's) sets no exit status from a close
            # reason; its crawl and runspider commands exit 1 when a
            # crawler ends without a spider (CrawlerRunner.bootstrap_failed,
            # read once the crawl has ended). A crawl that lost its
            # seen-set failed: it takes that exit.
            self.crawler.spider = None

    def _fingerprint_hash(self, request: Request) -> bytes:
        if self.fingerprinter is not None:
            fp = self.fingerprinter.fingerprint(request)
        else:
            from scrapy.utils.request import fingerprint

            fp = fingerprint(request)
        if isinstance(fp, str):  # scrapy before 2.7: hex
            fp = fp.encode()
        # 32 bytes in a space of their own: never a URL's identity.
        return hashlib.sha256(b"scrapy-request-fingerprint\x00" + fp).digest()

    def close(self, reason: str) -> None:
        self._closed = True
        if self._flush_call is not None and self._flush_call.active():
            self._flush_call.cancel()
        self._flush_call = None
        for c in self._clients:
            c.close()

    def log(self, request: Request, spider: Any) -> None:
        if request is self._held:
            self._held = None  # held for the server's answer, not a duplicate
            return
        if self.debug:
            logger.debug("Filtered duplicate request: %(request)s", {"request": request}, extra={"spider": spider})
        elif self.logdupes:
            logger.debug(
                "Filtered duplicate request: %(request)s - no more duplicates will be shown"
                " (see DUPEFILTER_DEBUG to show all duplicates)",
                {"request": request},
                extra={"spider": spider},
            )
            self.logdupes = False
        spider.crawler.stats.inc_value("dupefilter/filtered", spider=spider)
