"""Real scrapy crawls of a local site through urlhash.scrapy.RFPDupeFilter:
two concurrent crawler processes sharing a urlhash server fetch each page
once in total; a crawl whose server is down fails (exit status, close
reason, an ERROR naming the server); a slow server does not stall scrapy's
reactor. Skipped where scrapy is not installed, unless
URLHASH_REQUIRE_SCRAPY=1 (CI) makes that a failure."""

import os
import re
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "src")
sys.path.insert(0, SRC)
sys.path.insert(0, HERE)

from serve import Server  # noqa: E402
from localsite import SPIDER, Site, crawl_cmd  # noqa: E402

try:
    import scrapy  # noqa: F401

    HAVE_SCRAPY = True
except ImportError:
    HAVE_SCRAPY = False


# A spider that measures how long scrapy's reactor goes without running a
# callback (a LoopingCall every 50 ms): a blocking call inside the reactor
# shows as a gap that long.
GAP_SPIDER = SPIDER + textwrap.dedent(
    """
    import time
    from twisted.internet import task

    class GapSpider(SiteSpider):
        name = "gap"

        def start_requests(self):
            self.last, self.gap = time.monotonic(), 0.0
            self.ticks = task.LoopingCall(self.tick)
            self.ticks.start(0.05)
            yield from super().start_requests()

        def tick(self):
            now = time.monotonic()
            self.gap, self.last = max(self.gap, now - self.last), now

        def closed(self, reason):
            self.tick()
            self.ticks.stop()
            self.logger.info("max reactor gap: %.3f s", self.gap)
    """
)


class DelayProxy:
    """A TCP proxy to a local port that holds every chunk a client sends
    for delay seconds before passing it on: a slow server."""

    def __init__(self, port, delay):
        self.port, self.delay = port, delay
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.conns = []
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            u = socket.create_connection(("127.0.0.1", self.port))
            self.conns += [c, u]
            threading.Thread(target=self._pump, args=(c, u, self.delay), daemon=True).start()
            threading.Thread(target=self._pump, args=(u, c, 0), daemon=True).start()

    @staticmethod
    def _pump(src, dst, delay):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    dst.shutdown(socket.SHUT_WR)
                    return
                time.sleep(delay)
                dst.sendall(data)
        except OSError:
            pass

    def stop(self):
        self.sock.close()
        for c in self.conns:
            c.close()


def crawl_settings(url, **extra):
    """The crawls' scrapy settings, with the dupefilter on the server at url."""
    return {
        "DUPEFILTER_CLASS": "urlhash.scrapy.RFPDupeFilter",
        "URLHASH_URL": url,
        "ROBOTSTXT_OBEY": "False",
        "TELNETCONSOLE_ENABLED": "False",
        "LOG_LEVEL": "INFO",
        "CONCURRENT_REQUESTS": "4",
        "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
        **extra,
    }


def check_reactor_gap(test, crawl):
    """Runs crawl(GAP_SPIDER, URL, site) on a server behind a DelayProxy of
    1 s; checks that it ended well, fetched each page once, and that scrapy's
    reactor never waited 0.5 s."""
    server = Server.for_test(test)
    proxy = DelayProxy(int(server.url.rsplit(":", 1)[1]), delay=1.0)
    test.addCleanup(proxy.stop)
    site = Site(pages=12, links=3)
    test.addCleanup(site.stop)
    p, log = crawl(GAP_SPIDER, proxy.url, site)
    test.assertEqual(p.returncode, 0, log[-3000:])
    gap = re.search(r"max reactor gap: ([0-9.]+) s", log)
    test.assertIsNotNone(gap, log[-3000:])
    # Each call to the server takes at least 1 s here.
    test.assertLess(float(gap.group(1)), 0.5, "the reactor waited for the server")
    test.assertEqual(sorted(site.fetches.values()), [1] * site.pages, f"fetches {dict(site.fetches)}")


def free_port():
    """A loopback port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ScrapyTest(unittest.TestCase):
    def crawl(self, spider_src, url, site, start, **settings):
        """Runs one crawl of site from page start with the dupefilter on
        url; returns the process and its log."""
        tmp = tempfile.mkdtemp(prefix="urlhash-scrapy-")
        spider = os.path.join(tmp, "spider.py")
        with open(spider, "w") as f:
            f.write(spider_src)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]))
        p = subprocess.run(crawl_cmd(spider, site.url(start), crawl_settings(url, **settings)), cwd=tmp, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
        return p, p.stdout

    def test_server_down_fails_the_crawl(self):
        # Issue 37, item 6: the crawl used to end with finish_reason
        # 'finished' and exit 0 after 1 request.
        site = Site(pages=10)
        self.addCleanup(site.stop)
        url = f"http://127.0.0.1:{free_port()}"
        p, log = self.crawl(SPIDER, url, site, 0)
        self.assertNotEqual(p.returncode, 0, log[-3000:])
        self.assertIn("'finish_reason': 'urlhash_unavailable'", log, log[-3000:])
        self.assertRegex(log, r"ERROR: urlhash: the seen-set server " + re.escape(url) + " failed")
        self.assertEqual(sum(site.fetches.values()), 0, "a page was fetched without the seen-set's answer")

    def test_slow_server_does_not_block_the_reactor(self):
        check_reactor_gap(self, lambda spider, url, site: self.crawl(spider, url, site, 0))

    def setUp(self):
        if not HAVE_SCRAPY:
            if os.environ.get("URLHASH_REQUIRE_SCRAPY") == "1":
                self.fail(f"scrapy is not importable by {sys.executable}")
            self.skipTest("scrapy is not installed")

    def test_two_crawlers_fetch_each_page_once(self):
        server = Server.for_test(self)
        # Both start pages answer once both were asked: the crawlers run
        # at once, whatever their start-up times.
        site = Site(pages=60, gate=(0, 30))
        self.addCleanup(site.stop)
        tmp = tempfile.mkdtemp(prefix="urlhash-scrapy-")
        spider = os.path.join(tmp, "spider.py")
        with open(spider, "w") as f:
            f.write(SPIDER)
        settings = crawl_settings(server.url)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]))
        # Two crawlers at once, from opposite ends of the site.
        procs = [
            subprocess.Popen(crawl_cmd(spider, site.url(i), settings), cwd=tmp, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            for i in (0, 30)
        ]
        logs = [p.communicate(timeout=300)[0] for p in procs]
        for p, log in zip(procs, logs):
            self.assertEqual(p.returncode, 0, log[-3000:])
        fetched = sorted(site.fetches)
        self.assertEqual(len(fetched), site.pages, f"pages fetched: {fetched}, other paths: {dict(site.other)}")
        twice = {p: n for p, n in site.fetches.items() if n != 1}
        self.assertEqual(twice, {}, "pages fetched more than once")
        # Both crawled: neither found everything seen at its start.
        for log in logs:
            self.assertIn("'downloader/response_count'", log)


if __name__ == "__main__":
    unittest.main()
