"""A real scrapy crawl of a local site by two concurrent crawler processes
that share a urlhash server through urlhash.scrapy.RFPDupeFilter: each page
is fetched once in total. Skipped where scrapy is not installed, unless
URLHASH_REQUIRE_SCRAPY=1 (CI) makes that a failure."""

import os
import subprocess
import sys
import tempfile
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


class ScrapyTest(unittest.TestCase):
    def setUp(self):
        if not HAVE_SCRAPY:
            if os.environ.get("URLHASH_REQUIRE_SCRAPY") == "1":
                self.fail(f"scrapy is not importable by {sys.executable}")
            self.skipTest("scrapy is not installed")

    def test_two_crawlers_fetch_each_page_once(self):
        server = Server()
        self.addCleanup(server.stop)
        # Both start pages answer once both were asked: the crawlers run
        # at once, whatever their start-up times.
        site = Site(pages=60, gate=(0, 30))
        self.addCleanup(site.stop)
        tmp = tempfile.mkdtemp(prefix="urlhash-scrapy-")
        spider = os.path.join(tmp, "spider.py")
        with open(spider, "w") as f:
            f.write(SPIDER)
        settings = {
            "DUPEFILTER_CLASS": "urlhash.scrapy.RFPDupeFilter",
            "URLHASH_URL": server.url,
            "ROBOTSTXT_OBEY": "False",
            "TELNETCONSOLE_ENABLED": "False",
            "LOG_LEVEL": "INFO",
            "CONCURRENT_REQUESTS": "4",
            "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
        }
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
