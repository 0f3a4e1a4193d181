"""urlhash.scrapy.Scheduler against a real server, driven as scrapy's engine
drives it (next_request, the engine's requests in progress, close), with
Twisted's reactor in a thread of this process. Skipped where scrapy is not
installed, unless URLHASH_REQUIRE_SCRAPY=1 (CI) makes that a failure."""

import os
import sys
import threading
import time
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "src"))
sys.path.insert(0, HERE)

import needscrapy  # noqa: E402
import urlhash  # noqa: E402
from needscrapy import HAVE_SCRAPY  # noqa: E402
from serve import Server  # noqa: E402

if HAVE_SCRAPY:
    import scrapy
    from scrapy import signals
    from scrapy.utils.test import get_crawler
    from twisted.internet import reactor, threads

    import urlhash.scrapy


def setUpModule():
    if not HAVE_SCRAPY:
        return
    threading.Thread(target=reactor.run, kwargs={"installSignalHandlers": False}, daemon=True).start()


def tearDownModule():
    if HAVE_SCRAPY:
        reactor.callFromThread(reactor.stop)


def call(fn, *args):
    """Runs fn in the reactor's thread; waits for its result (or its Deferred's)."""
    return threads.blockingCallFromThread(reactor, fn, *args)


def wait_until(cond, timeout=20.0, what="the condition"):
    """Polls cond (run in the reactor's thread) until it returns a true value."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = call(cond)
        if v:
            return v
        time.sleep(0.02)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


if HAVE_SCRAPY:

    class Spider(scrapy.Spider):
        name = "sched"

        def parse(self, response):
            pass

        def parse_item(self, response, x=None):
            pass

        def on_error(self, failure):
            pass


class Slot:
    """The engine's slot as the Scheduler sees it: the requests the engine
    is working on, and the call that makes it ask for more."""

    def __init__(self):
        self.inprogress = set()
        self.nextcall = self
        self.woken = 0

    def schedule(self):
        self.woken += 1


class Engine:
    def __init__(self):
        self.slot = Slot()
        self.closed = None

    def close_spider(self, spider, reason):
        self.closed = reason


class SchedulerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if HAVE_SCRAPY:
            cls.server = Server.for_class(cls)

    def setUp(self):
        needscrapy.require(self)

    def crawl_id(self):
        return self.id().rsplit(".", 1)[1]

    def scheduler(self, server=None, close=True, **settings):
        """An open Scheduler on this test's crawl, its engine an Engine."""
        s = {
            "URLHASH_URL": (server or self.server).url,
            "URLHASH_CRAWL": self.crawl_id(),
            "DUPEFILTER_CLASS": "urlhash.scrapy.RFPDupeFilter",
            "URLHASH_DELAY": 0,
            "URLHASH_IDLE_TIMEOUT": 1,
            "CONCURRENT_REQUESTS": 8,
        }
        s.update(settings)
        crawler = get_crawler(Spider, s)
        crawler.engine = Engine()
        spider = Spider.from_crawler(crawler)
        sched = urlhash.scrapy.Scheduler.from_crawler(crawler)
        sched.dropped = []
        crawler.signals.connect(lambda request, spider: sched.dropped.append(request), signals.request_dropped, weak=False)
        call(sched.open, spider)
        call(lambda: crawler.signals.send_catch_log(signal=signals.spider_opened, spider=spider))  # as the engine does
        if close:
            self.addCleanup(lambda: sched._closing or call(sched.close, "finished"))
        return sched

    def frontier(self):
        f = urlhash.Frontier(self.server.url, self.crawl_id())
        self.addCleanup(f.close)
        return f

    def enqueue(self, sched, *requests):
        """Enqueues requests; waits until the frontier answered them all."""
        got = [call(sched.enqueue_request, r) for r in requests]
        wait_until(lambda: not sched._pending and not sched._flushing, what="the flush")
        return got

    def hand(self, sched, timeout=20.0):
        """The engine's next request: asks until one comes, and holds it in
        progress as the engine does."""

        def take():
            r = sched.next_request()
            if r is not None:
                sched.crawler.engine.slot.inprogress.add(r)
            return r

        return wait_until(take, timeout, "a request")

    def finish(self, sched, request):
        """The engine is done with request."""
        call(sched.crawler.engine.slot.inprogress.discard, request)

    def stat(self, sched, key):
        return sched.stats.get_value(key)

    def test_server_settings(self):
        # Read alike by the scheduler and the dupefilter: URLHASH_URL is
        # required; an empty URLHASH_TOKEN is none, and the environment's
        # is sent; the log names the server without the password of its
        # address.
        for component, make in (("Scheduler", urlhash.scrapy.Scheduler.from_crawler),
                                ("RFPDupeFilter", urlhash.scrapy.RFPDupeFilter.from_crawler)):
            crawler = get_crawler(Spider, {"DUPEFILTER_CLASS": "urlhash.scrapy.RFPDupeFilter"})
            with self.assertRaisesRegex(ValueError, f"^urlhash.scrapy.{component} needs the setting URLHASH_URL "):
                make(crawler)
        host = self.server.url.split("://", 1)[1]
        with mock.patch.dict(os.environ, {"URLHASH_TOKEN": "from-env"}), \
                self.assertLogs("urlhash.scrapy", "INFO") as logs:
            sched = self.scheduler(URLHASH_URL=f"http://user:secret@{host}", URLHASH_TOKEN="")
        self.assertEqual((sched._frontier._client._token, sched._claimer._client._token), ("from-env", "from-env"))
        self.assertTrue(any(f"on http://{host}: " in m for m in logs.output), logs.output)
        self.assertFalse(any("secret" in m for m in logs.output), logs.output)

    def test_request_round_trip(self):
        sched = self.scheduler()
        spider = sched.spider
        post = scrapy.Request("https://rt.example/form#frag", method="POST", body=b"a=1\x00\xff", callback=spider.parse_item,
                              errback=spider.on_error, priority=5, meta={"k": [1, {"deep": b"x"}]}, cb_kwargs={"x": 7},
                              headers={"X-Test": "yes"}, cookies={"c": "1"}, flags=["f"])
        get = scrapy.FormRequest("https://rt.example/get", formdata={"q": "1"}, method="GET")
        self.assertEqual(self.enqueue(sched, post, get), [True, True])
        seen = {}
        for _ in range(2):
            r = self.hand(sched)
            seen[r.method] = r
        r = seen["POST"]
        self.assertEqual((r.url, r.body, r.priority, r.meta, r.cb_kwargs, r.flags),
                         (post.url, post.body, 5, post.meta, {"x": 7}, ["f"]))
        self.assertEqual(r.callback, spider.parse_item)
        self.assertEqual(r.errback, spider.on_error)
        self.assertEqual(r.headers.get("X-Test"), b"yes")
        self.assertEqual(r.cookies, {"c": "1"})
        self.assertIs(type(seen["GET"]), scrapy.FormRequest)
        self.assertEqual(seen["GET"].url, "https://rt.example/get?q=1")
        self.assertEqual(self.stat(sched, "scheduler/enqueued/urlhash"), 2)
        self.assertEqual(self.stat(sched, "scheduler/dequeued/urlhash"), 2)

    def test_url_without_data(self):
        # Put from elsewhere (a seed list, another language): a GET for parse.
        sched = self.scheduler()
        self.frontier().enqueue([{"url": "https://seed.example/a"}])
        r = self.hand(sched)
        self.assertEqual((type(r), r.method, r.url, r.callback), (scrapy.Request, "GET", "https://seed.example/a", None))

    def test_duplicates(self):
        sched = self.scheduler()
        a = scrapy.Request("https://dup.example/a")
        spellings = [scrapy.Request(u) for u in ("https://dup.example/a#top", "HTTPS://DUP.example:443/x/../a")]
        again = scrapy.Request("https://dup.example/a", dont_filter=True)
        post1 = scrapy.Request("https://dup.example/a", method="POST", body=b"1")
        post1b = scrapy.Request("https://dup.example/a", method="POST", body=b"1")
        post2 = scrapy.Request("https://dup.example/a", method="POST", body=b"2")
        # What this process sent before (the same URL without its fragment,
        # the same fingerprint) is refused at once, unsent (the engine then
        # fires request_dropped); the rest is accepted (buffered), and the
        # frontier's answer comes after.
        got = self.enqueue(sched, a, *spellings, again, post1, post1b, post2)
        self.assertEqual(got, [True, False, True, True, True, False, True])
        self.assertEqual(self.stat(sched, "urlhash/known_here"), 2)
        self.assertEqual(sched.dropped, spellings[1:])
        self.assertEqual(self.stat(sched, "dupefilter/filtered"), 3)
        self.assertEqual(self.stat(sched, "scheduler/enqueued/urlhash"), 4)
        self.assertEqual(self.stat(sched, "urlhash/enqueue_lines"), 5)
        st = self.frontier().status()  # queued, or claimed ahead already
        self.assertEqual(st["queued"] + st["in_transit"], 4)
        # Known to the crawl from another process: the frontier answers.
        other = self.scheduler()
        self.assertEqual(self.enqueue(other, scrapy.Request("https://dup.example/a")), [True])
        self.assertEqual(len(other.dropped), 1)

    def test_other_dupefilter_asked_first(self):
        # scrapy's own dupefilter (per process) filters before the frontier.
        sched = self.scheduler(DUPEFILTER_CLASS="scrapy.dupefilters.RFPDupeFilter")
        self.assertEqual(self.enqueue(sched, scrapy.Request("https://df.example/"), scrapy.Request("https://df.example/")),
                         [True, False])
        st = self.frontier().status()
        self.assertEqual(st["queued"] + st["in_transit"], 1)

    def test_unserializable(self):
        sched = self.scheduler()
        bad = scrapy.Request("https://bad.example/", meta={"f": lambda: 1})
        self.assertEqual(self.enqueue(sched, bad), [False])
        self.assertEqual(self.stat(sched, "urlhash/unserializable"), 1)

    def test_ack_after_what_the_page_yielded(self):
        sched = self.scheduler()
        calls = []
        f = sched._frontier
        for name in ("enqueue", "ack"):
            def record(items, _fn=getattr(f, name), _name=name):
                calls.append((_name, len(items)))
                return _fn(items)
            setattr(f, name, record)
        self.enqueue(sched, scrapy.Request("https://ack.example/parent"))
        parent = self.hand(sched)
        time.sleep(5 * urlhash._scheduler.TICK)  # the page is being fetched: nothing to send
        # The page yields two requests, and the engine is done with it: the
        # two are on the server before the page's ack is sent.

        def page():
            sched.enqueue_request(scrapy.Request("https://ack.example/child1"))
            sched.enqueue_request(scrapy.Request("https://ack.example/child2"))
            sched.crawler.engine.slot.inprogress.discard(parent)
            sched.next_request()  # as the engine does once a request is done

        call(page)
        wait_until(lambda: self.stat(sched, "urlhash/acked"), what="the ack")
        self.assertEqual(calls, [("enqueue", 1), ("enqueue", 2), ("ack", 1)])
        st = self.frontier().status()
        self.assertEqual((st["completed"], st["queued"] + st["in_transit"]), (1, 2))

    def test_idle_waits_for_requests_in_transit(self):
        a = self.scheduler(URLHASH_IDLE_TIMEOUT=0.5)
        b = self.scheduler(URLHASH_IDLE_TIMEOUT=0.5)
        self.enqueue(a, scrapy.Request("https://idle.example/"))
        held = self.hand(a)
        # b sees nothing due, and a request in transit: it waits, well past
        # its idle timeout.
        time.sleep(2.0)
        self.assertIsNone(call(b.next_request))
        self.assertTrue(call(b.has_pending_requests))
        self.assertTrue(call(a.has_pending_requests))
        self.finish(a, held)
        # Once a's request is done, both close after their idle timeout.
        for s in (a, b):
            wait_until(lambda s=s: not s.has_pending_requests(), what="idle")
        self.assertEqual(self.frontier().status()["completed"], 1)

    def test_lease_returns_a_killed_crawlers_requests(self):
        killed = self.scheduler(close=False, URLHASH_LEASE=1)
        self.enqueue(killed, scrapy.Request("https://lease.example/1"))
        r = self.hand(killed)
        # Killed: it neither acks nor releases.
        call(killed._loop.stop)
        killed._pool.stop()
        # Its pool is gone: the reactor's shutdown must not stop it again.
        call(reactor.removeSystemEventTrigger, killed._stop_pool)
        other = self.scheduler()
        t0 = time.monotonic()
        again = self.hand(other)
        self.assertEqual(again.url, r.url)
        self.assertGreaterEqual(time.monotonic() - t0, 0.5)
        self.finish(other, again)
        wait_until(lambda: self.stat(other, "urlhash/acked"), what="the ack")
        self.assertEqual(self.frontier().status()["completed"], 1)

    def test_lease_renewed_while_held(self):
        # A request the engine works on for several leases stays this
        # process's: renewed every third of its lease, never handed to
        # another process, acked once done.
        a = self.scheduler(URLHASH_LEASE=1)
        self.enqueue(a, scrapy.Request("https://renew.example/slow"))
        r = self.hand(a)
        # The other process opens once a holds it: open before, it could
        # claim the request first (its prefetch), and a would wait for it.
        b = self.scheduler(URLHASH_LEASE=1)
        time.sleep(3.0)
        self.assertIsNone(call(b.next_request), "a request held and renewed was handed to another process")
        self.assertEqual(self.frontier().status()["in_transit"], 1)
        self.assertGreaterEqual(self.stat(a, "urlhash/extended"), 3)
        self.assertIsNone(self.stat(a, "urlhash/lease_lost"))
        self.finish(a, r)
        wait_until(lambda: self.stat(a, "urlhash/acked"), what="the ack")
        self.assertEqual(self.frontier().status()["completed"], 1)
        self.assertIsNone(self.stat(b, "urlhash/claimed"))

    def test_lapsed_lease_not_fetched(self):
        # A claimed request whose lease passed before its renewal (a reactor
        # that stalled) is dropped from the prefetch: due again, it is for
        # any claimer.
        a = self.scheduler(close=False, URLHASH_LEASE=0.5)
        self.enqueue(a, scrapy.Request("https://lapse.example/1"))
        wait_until(lambda: len(a) == 1, what="the prefetch")
        call(a._loop.stop)
        time.sleep(1.0)  # no tick: no renewal, the lease passes
        call(lambda: setattr(a, "_renewed", 0.0) or a._renew())
        wait_until(lambda: self.stat(a, "urlhash/lease_lost"), what="the lost lease")
        self.assertEqual(len(a), 0)
        self.assertEqual([c.url for c in self.frontier().claim(10, per_queue=10)], ["https://lapse.example/1"])
        call(a.close, "finished")

    def test_close_releases_what_was_not_handed_out(self):
        a = self.scheduler(close=False, CONCURRENT_REQUESTS=8)
        self.enqueue(a, *[scrapy.Request(f"https://release.example/{i}") for i in range(5)])
        # Claimed ahead of the engine, never handed to it.
        wait_until(lambda: len(a) == 5, what="the prefetch")
        st = self.frontier().status()
        self.assertEqual((st["queued"], st["in_transit"]), (0, 5))
        call(a.close, "shutdown")
        st = self.frontier().status()
        self.assertEqual((st["queued"], st["in_transit"]), (5, 0))
        b = self.scheduler()
        self.assertEqual(len({self.hand(b).url for _ in range(5)}), 5)

    def test_delay_is_shared(self):
        a = self.scheduler(URLHASH_DELAY=60, URLHASH_PER_HOST=1)
        self.enqueue(a, scrapy.Request("https://polite.example/1"), scrapy.Request("https://polite.example/2"))
        first = self.hand(a)
        # b opens once a holds the first request: opened before, its prefetch
        # could claim it first and a would wait the minute for the second.
        b = self.scheduler(URLHASH_DELAY=None)  # sets none: the crawl's stands
        self.finish(a, first)
        wait_until(lambda: self.stat(a, "urlhash/acked"), what="the ack")
        # The host's next request waits a minute, in either process.
        time.sleep(1.5)
        self.assertIsNone(call(b.next_request))
        self.assertIsNone(call(a.next_request))
        st = self.frontier().status()
        self.assertEqual((st["queued"], st["due"]), (1, 0))
        self.assertTrue(call(b.has_pending_requests))
        self.frontier().set_delay(0)
        # Due now, for whichever asks first.
        got = wait_until(lambda: a.next_request() or b.next_request(), what="the second request")
        self.assertEqual(got.url, "https://polite.example/2")

    def test_server_down_closes_the_spider(self):
        server = Server.for_test(self)
        sched = self.scheduler(server=server, close=False)
        server.stop()
        call(sched.enqueue_request, scrapy.Request("https://down.example/"))
        wait_until(lambda: sched.crawler.engine.closed, timeout=30, what="the spider's close")
        self.assertEqual(sched.crawler.engine.closed, "urlhash_unavailable")
        self.assertFalse(call(sched.has_pending_requests))
        call(sched.close, "urlhash_unavailable")


if __name__ == "__main__":
    unittest.main()
