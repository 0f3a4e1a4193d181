"""Real scrapy crawls of a local site through urlhash.scrapy.Scheduler:
three crawler processes sharing one frontier, one of them killed (SIGKILL)
midway, fetch every page, and each once but for the requests the killed
process held (fetched again by another after their lease); a crawl whose
server is down fails; a slow server does not stall scrapy's reactor.
Skipped where scrapy is not installed, unless URLHASH_REQUIRE_SCRAPY=1 (CI)
makes that a failure."""

import collections
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "src")
sys.path.insert(0, SRC)
sys.path.insert(0, HERE)

import urlhash  # noqa: E402
import needscrapy  # noqa: E402
from serve import Server  # noqa: E402
from localsite import RECORDING_SPIDER, SPIDER, Site, crawl_cmd  # noqa: E402
from test_scrapy import check_reactor_gap, crawl_settings, free_port  # noqa: E402

SCHEDULER = {"SCHEDULER": "urlhash.scrapy.Scheduler", "URLHASH_DELAY": "0"}


# Each process's CONCURRENT_REQUESTS: it holds at most as many in its
# engine, and as many claimed ahead.
CONCURRENT = 4
LEASE = 15


class SchedulerCrawlTest(unittest.TestCase):
    def setUp(self):
        needscrapy.require(self)

    def crawl(self, spider_src, url, site, **settings):
        """Runs one crawl of site from its page 0 with the scheduler on url;
        returns the process and its log."""
        tmp = tempfile.mkdtemp(prefix="urlhash-scheduler-")
        spider = os.path.join(tmp, "spider.py")
        with open(spider, "w") as f:
            f.write(spider_src)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]))
        p = subprocess.run(crawl_cmd(spider, site.url(0), crawl_settings(url, **SCHEDULER, **settings)), cwd=tmp,
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
        return p, p.stdout

    def test_server_down_fails_the_crawl(self):
        site = Site(pages=10)
        self.addCleanup(site.stop)
        url = f"http://127.0.0.1:{free_port()}"
        p, log = self.crawl(SPIDER, url, site)
        self.assertEqual(p.returncode, 1, log[-3000:])
        self.assertIn("'finish_reason': 'urlhash_unavailable'", log, log[-3000:])
        self.assertRegex(log, r"ERROR: urlhash: the frontier's server " + re.escape(url) + r" failed")
        self.assertNotIn("Traceback", log)
        self.assertEqual(sum(site.fetches.values()), 0)

    def test_slow_server_does_not_block_the_reactor(self):
        check_reactor_gap(self, lambda spider, url, site: self.crawl(spider, url, site, URLHASH_IDLE_TIMEOUT="1"))

    def test_three_crawlers_one_killed(self):
        server = Server.for_test(self)
        # Answers wait until the three processes are up; 0.2 s a page.
        site = Site(pages=300, links=6, delay=0.2, hold=True)
        self.addCleanup(site.stop)
        tmp = tempfile.mkdtemp(prefix="urlhash-scheduler-")
        spider = os.path.join(tmp, "spider.py")
        with open(spider, "w") as f:
            f.write(RECORDING_SPIDER)
        settings = crawl_settings(server.url, **SCHEDULER, URLHASH_PER_HOST=str(3 * CONCURRENT), URLHASH_LEASE=str(LEASE),
                                  URLHASH_IDLE_TIMEOUT="3", CONCURRENT_REQUESTS=str(CONCURRENT))
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]))
        procs, logs, records = [], [], []
        for i, start in enumerate((0, 100, 200)):
            log = os.path.join(tmp, f"crawler-{i}.log")
            logs.append(log)
            records.append(os.path.join(tmp, f"processed-{i}.txt"))
            with open(log, "w") as out:
                cmd = crawl_cmd(spider, site.url(start), dict(settings, USER_AGENT=f"crawler-{i}"))
                procs.append(subprocess.Popen(cmd + ["-a", f"record={records[i]}"],
                                              cwd=tmp, env=env, stdout=out, stderr=subprocess.STDOUT))
        self.addCleanup(lambda: [p.kill() for p in procs if p.poll() is None])

        def read(i):
            with open(logs[i]) as f:
                return f.read()

        def wait(cond, what, timeout=120):
            end = time.monotonic() + timeout
            while not cond():
                if time.monotonic() > end:
                    self.fail(f"timed out waiting for {what}; logs:\n" + "\n".join(read(i)[-2000:] for i in range(3)))
                time.sleep(0.02)

        wait(lambda: all("urlhash: crawl 'site'" in read(i) for i in range(3)), "the three schedulers to open")
        site.release()
        victim, agent = procs[1], "crawler-1"
        # Killed late enough that the others run out of work before its
        # lease passes: they must wait for what it held, not close.
        wait(lambda: sum(site.by_agent[agent].values()) >= 10 and sum(site.fetches.values()) >= site.pages * 0.6,
             "the victim's tenth fetch, 60% of the site")
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        killed_after = dict(site.by_agent[agent])
        total_at_kill = sum(site.fetches.values())
        for i in (0, 2):
            try:
                procs[i].wait(timeout=300)
            except subprocess.TimeoutExpired:
                self.fail(f"crawler-{i} did not finish:\n{read(i)[-3000:]}")
            self.assertEqual(procs[i].returncode, 0, read(i)[-3000:])
            self.assertIn("'finish_reason': 'finished'", read(i))

        self.assertLess(total_at_kill, site.pages, "killed after the crawl, not midway")
        pages = set(f"/page/{i}" for i in range(site.pages))
        missed = sorted(pages - set(site.fetches), key=lambda p: int(p[6:]))
        self.assertEqual(missed, [], f"pages never fetched; other paths: {dict(site.other)}")
        processed = []
        for r in records:
            with open(r) as f:
                processed.append(collections.Counter(f.read().split()))
        survivors = processed[0] + processed[2]
        unprocessed = sorted(pages - set(survivors) - set(processed[1]), key=lambda p: int(p[6:]))
        self.assertEqual(unprocessed, [], "pages fetched and never through a callback")
        self.assertEqual({p: n for p, n in survivors.items() if n > 1}, {}, "pages processed twice by live processes")
        again = {p: n for p, n in site.fetches.items() if n > 1}
        # Fetched again: only what the killed process held (claimed, not
        # acked): claimed ahead (at most CONCURRENT), in its engine (at most
        # CONCURRENT), or done and not yet acked; each once more, by another
        # process.
        self.assertLessEqual(len(again), 3 * CONCURRENT, again)
        for p, n in again.items():
            self.assertEqual(n, 2, p)
            self.assertIn(p, killed_after, f"{p} fetched twice, never by the killed process")
        self.assertEqual(sum(site.by_agent[agent].values()), sum(killed_after.values()), "fetched after its kill")
        for i in (0, 2):
            self.assertGreater(sum(site.by_agent[f"crawler-{i}"].values()), 0, f"crawler-{i} fetched nothing")
        with urlhash.Frontier(server.url, "site") as f:
            st = f.status()
        self.assertEqual((st["queued"], st["in_transit"], st["completed"]), (0, 0, site.pages))
        print(f"\n3 crawlers, 1 killed after {sum(killed_after.values())} fetches ({total_at_kill} in all): "
              f"{len(site.fetches)} pages, {sum(site.fetches.values())} fetches, {len(again)} fetched twice",
              file=sys.stderr)


if __name__ == "__main__":
    unittest.main()
