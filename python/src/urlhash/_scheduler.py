"""scrapy's scheduler over a urlhash server's crawl frontier (urlhash.scrapy.Scheduler).

Every crawler process of a crawl enqueues the requests it discovers into
the server's frontier and claims the requests it fetches from it, with a
lease; a request is acked once the engine is done with it. The HTTP calls
run on two threads of the scheduler's own, so that the reactor never
waits for the server: ``next_request`` hands out requests claimed ahead
of time, ``enqueue_request`` buffers until the next reactor turn.
"""

from __future__ import annotations

import collections
import logging
import os
import pickle
import secrets
import socket
import time
from typing import Any, Deque, Dict, List, Optional, Set, Tuple

from scrapy import Request, signals
from scrapy.utils.misc import create_instance, load_object
from scrapy.utils.request import request_from_dict
from twisted.internet import defer, task, threads
from twisted.python.threadpool import ThreadPool

from ._client import InvalidURLError, UnavailableError
from ._frontier import Claimed, Frontier
from ._settings import server_settings

__all__ = ["Scheduler"]


def _reactor() -> Any:
    # Imported when used: importing it at the module's import could install
    # Twisted's default reactor before scrapy installs TWISTED_REACTOR.
    from twisted.internet import reactor

    return reactor

logger = logging.getLogger("urlhash.scrapy")

# Requests are pickled as scrapy's disk queues do (JOBDIR), with a protocol
# every supported Python reads.
PICKLE_PROTOCOL = 4

# How often the scheduler looks for finished requests, flushes and claims
# when the engine does not call it.
TICK = 0.1
# A claim that came back empty is repeated after this long, doubling up to
# CLAIM_BACKOFF_MAX while claims stay empty.
CLAIM_BACKOFF_MIN = 0.05
CLAIM_BACKOFF_MAX = 0.5
# A process renews the lease of what it holds every lease / RENEW_PER_LEASE.
RENEW_PER_LEASE = 3
# How often a process that waits for others says so.
WAIT_LOG_EVERY = 30.0
# The identities this process sent last (at most this many): the crawl knows
# them for good, so a request with one of them is a duplicate without asking
# the server (nor pickling it). About 150 bytes each.
KNOWN_MAX = 100_000

# A request to enqueue: the request, its enqueue line and when it came.
_Pending = Tuple[Request, Dict[str, Any], float]
# What a flush learnt: per line new, known or refused (None), the refusals
# (position, URL, reason), when the enqueue was answered, per ack whether
# it was found, per release whether it was in transit.
_Flushed = Tuple[List[Optional[bool]], List[Tuple[int, str, str]], float, List[bool], List[bool]]


class Scheduler:
    """scrapy's scheduler over a urlhash server's crawl frontier.

    Settings: ``SCHEDULER = "urlhash.scrapy.Scheduler"`` and
    ``URLHASH_URL`` (with ``DUPEFILTER_CLASS =
    "urlhash.scrapy.RFPDupeFilter"``); optional ``URLHASH_TOKEN``,
    ``URLHASH_CRAWL`` (the crawl, default the spider's name),
    ``URLHASH_DELAY`` (seconds between two requests handed out of one
    host, for every process of the crawl; unset: the crawl keeps its delay,
    1 s until set), ``URLHASH_PER_HOST`` (requests of one host in transit
    at once, for every process; default CONCURRENT_REQUESTS_PER_DOMAIN),
    ``URLHASH_LEASE`` (seconds a claimed request stays this process's
    unless renewed; default 30: the process renews what it holds every
    third of it, so that a killed process's requests come back after at
    most a lease, and a slow one keeps its own) and
    ``URLHASH_IDLE_TIMEOUT`` (seconds the crawl must have nothing queued
    and nothing in transit before the spider closes; default 10).

    A request is done, and acked, when the engine is done with it: its
    response (or failure) went through the spider's callback (or errback)
    and every request that yielded was passed to the scheduler. Those are
    on the server before the ack is sent, so a crawler killed at any point
    loses nothing a claimed page yielded: the page comes back after its
    lease. What a kill can lose is a request no claimed page yielded (a
    start request) in the moment between ``enqueue_request`` and the
    server's answer (the stats ``urlhash/enqueue_wait_*`` say how long).
    """

    def __init__(self, crawler: Any, dupefilter: Any, *, url: str, token: Optional[str], crawl: Optional[str],
                 delay: Optional[float], per_host: int, lease: float, idle_timeout: float, capacity: int,
                 ca_file: Optional[str] = None) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.df = dupefilter
        # The urlhash dupefilter's seen-set is the frontier's answer itself
        # (known or enqueued, in one write): asking it first would let a kill
        # between the two leave a URL seen and never queued. Another
        # dupefilter (scrapy's, per process) is asked first, as scrapy does.
        from .scrapy import RFPDupeFilter

        self._ask_df = not isinstance(dupefilter, RFPDupeFilter)
        self.crawl = crawl
        self.delay = delay
        self.per_host = per_host
        self.lease = lease
        self.idle_timeout = idle_timeout
        self.capacity = capacity
        self.spider: Any = None
        self._fingerprinter = getattr(crawler, "request_fingerprinter", None)
        self._buffer: Deque[Tuple[Request, str]] = collections.deque()  # claimed, not handed to the engine
        self._handed: Dict[Request, str] = {}  # handed to the engine, not done
        self._pending: List[_Pending] = []  # to enqueue
        self._acks: List[str] = []  # ids done, acked after every pending enqueue
        self._jobs: Set[Any] = set()  # Deferreds of the HTTP calls in flight
        self._flushing = False
        self._flush_call: Any = None
        self._claiming = False
        self._renewing = False
        self._renewed = 0.0  # when the last renewal of leases was sent
        self._claim_after = 0.0
        self._claim_backoff = CLAIM_BACKOFF_MIN
        self._enqueued = 0  # enqueue_request calls: an idle answer asked before one is stale
        self._known: "collections.OrderedDict[str, None]" = collections.OrderedDict()  # the last identities sent
        self._idle_since: Optional[float] = None
        self._woken_idle = False
        self._waiting_logged = 0.0
        self._failed: Optional[str] = None
        self._closing = False
        self._loop: Any = None
        self._pool: Any = None
        self._opened = False  # the engine has opened the spider (spider_opened)
        crawler.signals.connect(self._spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self._engine_stopped, signal=signals.engine_stopped)
        # One client (one connection) a thread: flushes (enqueue, then
        # ack), and claims; their crawl is known at open.
        self._frontier = Frontier(url, crawl, token, ca_file=ca_file)
        self._claimer = Frontier(url, crawl, token, ca_file=ca_file)

    @classmethod
    def from_crawler(cls, crawler: Any) -> "Scheduler":
        s = crawler.settings
        server = server_settings(s, "Scheduler")
        delay = s.get("URLHASH_DELAY")
        dupefilter = create_instance(load_object(s["DUPEFILTER_CLASS"]), s, crawler)
        return cls(
            crawler,
            dupefilter,
            url=server.url,
            token=server.token,
            crawl=s.get("URLHASH_CRAWL") or None,
            delay=None if delay in (None, "") else s.getfloat("URLHASH_DELAY"),
            per_host=s.getint("URLHASH_PER_HOST", s.getint("CONCURRENT_REQUESTS_PER_DOMAIN", 8)),
            lease=s.getfloat("URLHASH_LEASE", 30),
            idle_timeout=s.getfloat("URLHASH_IDLE_TIMEOUT", 10),
            capacity=max(1, s.getint("CONCURRENT_REQUESTS", 16)),
            ca_file=server.ca_file,
        )

    def __len__(self) -> int:
        """Requests claimed by this process and not yet handed to the engine."""
        return len(self._buffer)

    # The engine's side.

    def open(self, spider: Any) -> Any:
        self.spider = spider
        self.crawl = self.crawl or spider.name
        self._frontier.crawl = self._claimer.crawl = self.crawl
        self._consumer = f"{socket.gethostname()}:{os.getpid()}"
        self._pool = ThreadPool(minthreads=2, maxthreads=2, name="urlhash-scheduler")
        self._pool.start()
        self._stop_pool = _reactor().addSystemEventTrigger("during", "shutdown", self._pool.stop)
        if hasattr(self.df, "open"):
            self.df.open()

        def start(st: Dict[str, Any]) -> None:
            logger.info(
                "urlhash: crawl %r on %s: %d queued, %d in transit, %d completed (lease %g s, idle timeout %g s, %d per host%s)",
                self.crawl, self._frontier.url, st["queued"], st["in_transit"], st["completed"], self.lease, self.idle_timeout,
                self.per_host, "" if self.delay is None else f", delay {self.delay:g} s", extra={"spider": spider})
            self._loop = task.LoopingCall(self._tick)
            self._loop.start(TICK)

        # A server out of reach at the start fails the crawl as later does
        # (_fail), once the engine has opened the spider.
        return self._run(self._open_job).addCallbacks(start, self._fail, errbackArgs=("open", [], []))

    def _open_job(self) -> Dict[str, Any]:
        if self.delay is not None:
            self._frontier.set_delay(self.delay)
        return self._frontier.status()

    def close(self, reason: str) -> Any:
        """Flushes what is buffered, acks what is done and releases what
        was claimed and not handed to the engine (due again at once)."""
        self._closing = True
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        if self._flush_call is not None and self._flush_call.active():
            self._flush_call.cancel()

        def final(_: Any) -> Any:
            self._reap()
            release = [rid for _, rid in self._buffer]
            self._buffer.clear()
            pending, self._pending = self._pending, []
            acks, self._acks = self._acks, []
            d = self._run(self._flush_job, [line for _, line, _ in pending], acks, release)
            d.addCallback(self._flushed, pending, acks)
            if release:
                d.addCallback(lambda _: logger.info(
                    "urlhash: released %d requests claimed and not fetched", len(release), extra={"spider": self.spider}))
            d.addErrback(lambda f: logger.error(
                "urlhash: closing: %d requests not enqueued, %d not acked, %d not released (they come back after their lease): %s",
                len(pending), len(acks), len(release), f.getErrorMessage(), extra={"spider": self.spider}))
            return d

        def shut(_: Any) -> Any:
            self._pool.stop()
            _reactor().removeSystemEventTrigger(self._stop_pool)
            self._frontier.close()
            self._claimer.close()
            return self.df.close(reason)

        d = defer.DeferredList(list(self._jobs))
        d.addCallback(final)
        d.addBoth(shut)
        return d

    def has_pending_requests(self) -> bool:
        """False once the crawl's frontier had nothing queued and nothing
        in transit, and this process nothing buffered, for URLHASH_IDLE_TIMEOUT
        (or after a failure of the server)."""
        self._reap()
        return self._failed is None and not self._finished()

    def enqueue_request(self, request: Request) -> bool:
        """Buffers the request for the frontier; False when it is a
        duplicate of one this process sent, another dupefilter filtered it
        or it cannot be serialised. A request the frontier already knows
        from elsewhere is reported afterwards, as scrapy's request_dropped
        signal and the dupefilter's log."""
        if self._ask_df and not request.dont_filter and self.df.request_seen(request):
            self.df.log(request, self.spider)
            return False
        try:
            fingerprint = None if request.method == "GET" and not request.dont_filter else self._fingerprint(request)
            if not request.dont_filter:
                known = fingerprint or request.url.split("#", 1)[0]
                if known in self._known:
                    self._known.move_to_end(known)
                    self.df.log(request, self.spider)
                    self.stats.inc_value("urlhash/known_here", spider=self.spider)
                    return False
                self._known[known] = None
                if len(self._known) > KNOWN_MAX:
                    self._known.popitem(last=False)
            line = self._line(request, fingerprint)
        except Exception as e:
            logger.error("urlhash: cannot serialise %(request)s: %(error)s", {"request": request, "error": e},
                         extra={"spider": self.spider})
            self.stats.inc_value("urlhash/unserializable", spider=self.spider)
            return False
        self._pending.append((request, line, time.monotonic()))
        self._enqueued += 1
        self._idle_since = None
        if self._flush_call is None and not self._closing:
            # The next reactor turn: the other requests of this callback go
            # in the same batch.
            self._flush_call = _reactor().callLater(0, self._flush)
        return True

    def next_request(self) -> Optional[Request]:
        self._reap()
        if not self._buffer:
            self._claim()
            return None
        request, rid = self._buffer.popleft()
        self._handed[request] = rid
        self.stats.inc_value("scheduler/dequeued/urlhash", spider=self.spider)
        self._claim()
        return request

    # Requests and lines.

    def _line(self, request: Request, fingerprint: Optional[str]) -> Dict[str, Any]:
        """The enqueue line of a request: its URL (the fragment dropped),
        priority, pickled dict and fingerprint (its identity when not None)."""
        data = pickle.dumps(request.to_dict(spider=self.spider), protocol=PICKLE_PROTOCOL)
        line: Dict[str, Any] = {"url": request.url.split("#", 1)[0], "priority": request.priority, "data": data}
        if fingerprint is not None:
            line["fingerprint"] = fingerprint
        return line

    def _fingerprint(self, request: Request) -> str:
        """The identity of a request that is not known by its URL: scrapy's
        fingerprint of one that is not a GET, a fresh one for dont_filter
        (always enqueued, as scrapy has it)."""
        if request.dont_filter:
            return secrets.token_hex(16)
        if self._fingerprinter is not None:
            fp = self._fingerprinter.fingerprint(request)
        else:  # scrapy 2.6
            from scrapy.utils.request import request_fingerprint

            fp = request_fingerprint(request)
        return fp.hex() if isinstance(fp, bytes) else str(fp)

    # Background work, in the reactor's thread; HTTP calls in the pool's.

    def _run(self, fn: Any, *args: Any) -> Any:
        d = threads.deferToThreadPool(_reactor(), self._pool, fn, *args)
        self._jobs.add(d)

        def done(result: Any) -> Any:
            self._jobs.discard(d)
            return result

        return d.addBoth(done)

    def _tick(self) -> None:
        self._reap()
        self._flush()
        self._claim()
        self._renew()
        if not self._woken_idle and self._finished():
            # The engine checks again at once, not at its next heartbeat.
            self._woken_idle = True
            self._wake()

    def _in_progress(self) -> Any:
        engine = self.crawler.engine
        slot = getattr(engine, "slot", None) or getattr(engine, "_slot", None)
        return slot.inprogress if slot is not None else ()

    def _wake(self) -> None:
        engine = self.crawler.engine
        slot = getattr(engine, "slot", None) or getattr(engine, "_slot", None)
        if slot is not None:
            slot.nextcall.schedule()

    def _reap(self) -> None:
        """Moves the requests the engine is done with to the acks."""
        if not self._handed:
            return
        busy = self._in_progress()
        done = [r for r in self._handed if r not in busy]
        for r in done:
            self._acks.append(self._handed.pop(r))
        if done and self._flush_call is None and not self._closing:
            self._flush_call = _reactor().callLater(0, self._flush)

    def _flush(self) -> None:
        """Sends the buffered requests, then the acks, in one job: an ack is
        sent only once every request its page yielded is on the server."""
        self._flush_call = None
        if self._flushing or self._closing or self._failed or not (self._pending or self._acks):
            return
        pending, self._pending = self._pending, []
        acks, self._acks = self._acks, []
        self._flushing = True

        def again(result: Any) -> Any:
            self._flushing = False
            if self._pending or self._acks:
                self._flush()
            return result

        d = self._run(self._flush_job, [line for _, line, _ in pending], acks, [])
        d.addCallback(self._flushed, pending, acks)
        d.addErrback(self._fail, "enqueue or ack", pending, acks)
        d.addBoth(again)

    def _flush_job(self, lines: List[Dict[str, Any]], acks: List[str], release: List[str]) -> _Flushed:
        results: List[Optional[bool]] = []
        invalid: List[Tuple[int, str, str]] = []
        if lines:
            try:
                results = self._frontier.enqueue(lines)
            except InvalidURLError as e:
                results, invalid = e.results, e.invalid
        answered = time.monotonic()
        acked = self._frontier.ack(acks) if acks else []
        released = self._frontier.release(release) if release else []
        return results, invalid, answered, acked, released

    def _flushed(self, answer: _Flushed, pending: List[_Pending], acks: List[str]) -> _Flushed:
        results, invalid, now, acked, _ = answer
        spider = self.spider
        if pending:
            # How long requests waited to be on the server: the window in
            # which a kill loses them (see Scheduler's doc).
            self.stats.inc_value("urlhash/enqueue_batches", spider=spider)
            self.stats.inc_value("urlhash/enqueue_lines", len(pending), spider=spider)
            self.stats.inc_value("urlhash/enqueue_wait_sum", round(sum(now - t for _, _, t in pending), 4), spider=spider)
            self.stats.max_value("urlhash/enqueue_wait_max", round(now - min(t for _, _, t in pending), 4), spider=spider)
        reasons = {i: reason for i, _, reason in invalid}
        new = False
        for i, (request, _, _) in enumerate(pending):
            if results[i]:
                new = True
                self.stats.inc_value("scheduler/enqueued/urlhash", spider=spider)
                continue
            if results[i] is None:
                logger.warning("urlhash: the frontier refused %(request)s: %(reason)s",
                               {"request": request, "reason": reasons.get(i, "")}, extra={"spider": spider})
                self.stats.inc_value("urlhash/invalid", spider=spider)
            else:
                self.df.log(request, spider)
            self.crawler.signals.send_catch_log(signals.request_dropped, request=request, spider=spider)
        if acked:
            self.stats.inc_value("urlhash/acked", sum(acked), spider=spider)
        if len(acked) - sum(acked):
            self.stats.inc_value("urlhash/ack_unknown", len(acked) - sum(acked), spider=spider)
        if new:
            # Something may be due now.
            self._claim_after = 0.0
            self._claim_backoff = CLAIM_BACKOFF_MIN
            self._idle_since = None
            self._claim()
        return answer

    def _renew(self) -> None:
        """Renews the lease of the requests this process holds (claimed, or
        handed to the engine and not acked), every third of a lease."""
        now = time.monotonic()
        if self._renewing or self._closing or self._failed or now - self._renewed < self.lease / RENEW_PER_LEASE:
            return
        self._renewed = now
        ids = [rid for _, rid in self._buffer] + list(self._handed.values())
        if not ids:
            return
        self._renewing = True
        d = self._run(self._frontier.extend, ids, self.lease)
        d.addCallback(self._renewed_leases, ids)
        d.addErrback(self._fail, "extend", [], [])

        def done(result: Any) -> Any:
            self._renewing = False
            return result

        d.addBoth(done)

    def _renewed_leases(self, extended: List[bool], ids: List[str]) -> None:
        """A request whose lease had passed is not this process's any more:
        one not handed to the engine yet is dropped (another process gets
        it); one the engine works on is still acked when done (an ack after
        the lease completes it)."""
        lost = {rid for rid, ok in zip(ids, extended) if not ok}
        self.stats.inc_value("urlhash/extended", len(ids) - len(lost), spider=self.spider)
        # Acked or released meanwhile is not lost: only what is still held.
        lost &= {rid for _, rid in self._buffer} | set(self._handed.values())
        if not lost:
            return
        self.stats.inc_value("urlhash/lease_lost", len(lost), spider=self.spider)
        logger.warning("urlhash: the lease of %d requests passed before it was renewed (URLHASH_LEASE %g s): "
                       "they may be fetched twice", len(lost), self.lease, extra={"spider": self.spider})
        self._buffer = collections.deque(x for x in self._buffer if x[1] not in lost)

    def _claim(self) -> None:
        """Claims requests ahead of the engine."""
        if self._claiming or self._closing or self._failed or self.spider is None:
            return
        # Up to CONCURRENT_REQUESTS ahead of the engine, refilled at half:
        # a claim takes a round trip, and the engine must not wait for it.
        want = self.capacity - len(self._buffer)
        if want <= 0 or len(self._buffer) >= max(1, self.capacity // 2):
            return
        now = time.monotonic()
        if now < self._claim_after:
            return
        self._claiming = True
        idle = self._local_idle()
        enqueued = self._enqueued
        d = self._run(self._claim_job, want, idle)
        d.addCallback(self._claimed, now, enqueued)
        d.addErrback(self._fail, "claim", [], [])

        def done(result: Any) -> Any:
            self._claiming = False
            return result

        d.addBoth(done)

    def _claim_job(self, want: int, idle: bool) -> Tuple[List[Claimed], Optional[Dict[str, Any]]]:
        got = self._claimer.claim(want, lease=self.lease, per_queue=self.per_host, consumer=self._consumer)
        return got, (self._claimer.status() if idle and not got else None)

    def _claimed(self, answer: Tuple[List[Claimed], Optional[Dict[str, Any]]], asked: float, enqueued: int) -> None:
        got, status = answer
        spider = self.spider
        for c in got:
            try:
                # A URL put without data (urlhash frontier put, gRPC's
                # PutURLs, a plain enqueue) is a GET for the spider's parse.
                request = request_from_dict(pickle.loads(c.data), spider=spider) if c.data else Request(c.url)
            except Exception as e:
                # Never fetchable by this spider: completed, loudly, so that
                # the crawl can end.
                logger.error("urlhash: cannot read the request of %s (id %s), completing it unfetched: %r",
                             c.url, c.id, e, extra={"spider": spider})
                self.stats.inc_value("urlhash/unreadable", spider=spider)
                self._acks.append(c.id)
                continue
            self._buffer.append((request, c.id))
        if got:
            self.stats.inc_value("urlhash/claimed", len(got), spider=spider)
            self._claim_after = 0.0
            self._claim_backoff = CLAIM_BACKOFF_MIN
            self._idle_since = None
            self._wake()
            return
        self._claim_after = time.monotonic() + self._claim_backoff
        self._claim_backoff = min(CLAIM_BACKOFF_MAX, self._claim_backoff * 2)
        if status is None:
            return
        idle = status["queued"] == 0 and status["in_transit"] == 0 and not status.get("recounting")
        if idle and self._enqueued == enqueued and self._local_idle():
            if self._idle_since is None:
                self._idle_since = asked
        else:
            self._idle_since = None
            self._woken_idle = False
            now = time.monotonic()
            if not idle and now - self._waiting_logged >= WAIT_LOG_EVERY:
                self._waiting_logged = now
                logger.info("urlhash: waiting for the crawl: %d queued (%d due), %d in transit",
                            status["queued"], status["due"], status["in_transit"], extra={"spider": spider})

    def _local_idle(self) -> bool:
        return not (self._buffer or self._handed or self._pending or self._acks or self._flushing)

    def _finished(self) -> bool:
        return (self._local_idle() and self._idle_since is not None
                and time.monotonic() - self._idle_since >= self.idle_timeout)

    def _fail(self, failure: Any, what: str, pending: List[_Pending], acks: List[str]) -> None:
        """A call that failed after the client's retries fails the crawl, as
        the dupefilter does: an ERROR naming the server, the spider closed
        (urlhash_unavailable or urlhash_error), the process's exit status 1.
        What it held comes back after its lease, and the requests it had not
        enqueued are found again when their pages are."""
        from .scrapy import REASON_ERROR, REASON_UNAVAILABLE

        self._pending[:0] = pending
        self._acks[:0] = acks
        if self._failed is None and not self._closing:
            err = failure.value
            reason = REASON_UNAVAILABLE if isinstance(err, (UnavailableError, OSError)) else REASON_ERROR
            self._failed = reason
            logger.error("urlhash: the frontier's server %s failed (%s): %s; closing the spider (%s)",
                         self._frontier.url, what, err, reason, extra={"spider": self.spider})
            self.stats.set_value("urlhash/error", f"{type(err).__name__}: {err}", spider=self.spider)
            if self._opened:
                self.crawler.engine.close_spider(self.spider, reason)

    def _spider_opened(self, spider: Any) -> None:
        self._opened = True
        if self._failed is not None:
            self.crawler.engine.close_spider(spider, self._failed)

    def _engine_stopped(self) -> None:
        if self._failed is not None:
            # As the dupefilter does (see its _engine_stopped): scrapy 2.8's
            # crawl and runspider commands exit 1 when a crawler ends
            # without a spider.
            self.crawler.spider = None
