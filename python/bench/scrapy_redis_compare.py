"""Compares two shared seen-sets for scrapy on one local site, crawled by two
concurrent scrapy processes each: a Redis set of scrapy's request
fingerprints (what scrapy-redis's RFPDupeFilter does: SADD of the
fingerprint, one round trip per request; scrapy-redis is not in Debian or
reachable here, so RedisRFPDupeFilter below stands in for it) and
urlhash.scrapy.RFPDupeFilter over "urlhash serve".

    /usr/bin/python3 python/bench/scrapy_redis_compare.py [--pages 2000]

Needs Debian's python3-scrapy, python3-redis and redis-server, and Go (it
builds urlhash from this repository, or takes $URLHASH_BIN). The site is on
127.0.0.1 only; its pages link to each other through the spellings of
a URL that real sites mix (see SPELLINGS). Prints, per filter, the pages
fetched (with repeats), the distinct pages, and the wall time.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
from serve import Server  # noqa: E402
import localsite  # noqa: E402
from localsite import SPIDER, crawl_cmd  # noqa: E402

# How a link to page j is written: (name, format). The site serves every
# spelling as page j, as web servers do (dot segments resolved, escapes
# decoded, the query and the fragment ignored by this site).
SPELLINGS = [
    ("plain", "{base}/page/{j}"),
    ("fragment", "{base}/page/{j}#c{k}"),
    ("dot segments", "{base}/page/x/../{j}"),
    ("upper-case scheme", "{ubase}/page/{j}"),
    ("relative with fragment", "/page/{j}#top"),
    ("tracking query, two orders", "{base}/page/{j}?a=1&b=2"),
    ("tracking query, two orders", "{base}/page/{j}?b=2&a=1"),
    ("escaped digit", "{base}/page/%3{j0}{jrest}"),
]

REDIS_FILTER = textwrap.dedent(
    """
    # A stand-in for scrapy-redis's RFPDupeFilter: SADD of scrapy's request
    # fingerprint to one Redis set shared by every crawler process.
    import redis
    from scrapy.dupefilters import BaseDupeFilter

    class RedisRFPDupeFilter(BaseDupeFilter):
        def __init__(self, server, key, fingerprinter):
            self.server, self.key, self.fingerprinter = server, key, fingerprinter

        @classmethod
        def from_crawler(cls, crawler):
            s = crawler.settings
            return cls(redis.Redis.from_url(s.get("REDIS_URL")), s.get("REDIS_KEY", "dupefilter"), crawler.request_fingerprinter)

        def request_seen(self, request):
            fp = self.fingerprinter.fingerprint(request).hex()
            return self.server.sadd(self.key, fp) == 0

        def close(self, reason):
            self.server.close()
    """
)


class Site(localsite.Site):
    """The test site, its links spelled as SPELLINGS says, in HTTP/1.1."""

    protocol_version = "HTTP/1.1"

    def __init__(self, pages, links):
        super().__init__(pages, links, delay=0)

    def hrefs(self, i):
        return [self.spell((i * 31 + k * 17) % self.pages, i + k) for k in range(self.links)]

    def spell(self, j, k):
        s = str(j)
        fmt = SPELLINGS[k % len(SPELLINGS)][1]
        return fmt.format(base=self.base, ubase=self.base.replace("http://", "HTTP://"), j=j, k=k, j0=s[0], jrest=s[1:])


def redis_server(tmp):
    """Starts redis-server (appendfsync everysec, as Redis is run for a
    durable queue) on a unix socket in tmp; returns it and the socket."""
    sock = os.path.join(tmp, "redis.sock")
    proc = subprocess.Popen(
        ["redis-server", "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "yes",
         "--appendfsync", "everysec", "--dir", tmp],
        stdout=subprocess.DEVNULL)
    for _ in range(100):
        if os.path.exists(sock):
            break
        time.sleep(0.05)
    return proc, sock


def crawl(site, tmp, settings, env):
    spider = os.path.join(tmp, "spider.py")
    cmds = [crawl_cmd(spider, site.url(start), settings) for start in (0, site.pages // 2)]
    t0 = time.monotonic()
    procs = [subprocess.Popen(c, cwd=tmp, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for c in cmds]
    errs = [p.communicate()[1] for p in procs]
    wall = time.monotonic() - t0
    for p, e in zip(procs, errs):
        if p.returncode != 0:
            raise SystemExit(f"scrapy failed: {e[-2000:]}")
    return wall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=2000)
    ap.add_argument("--links", type=int, default=8)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="urlhash-vs-redis-")
    try:
        with open(os.path.join(tmp, "spider.py"), "w") as f:
            f.write(SPIDER)
        with open(os.path.join(tmp, "redisfilter.py"), "w") as f:
            f.write(REDIS_FILTER)
        redis_proc, sock = redis_server(tmp)
        server = Server()
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(HERE, "..", "src"), tmp]))
        common = {"ROBOTSTXT_OBEY": "False", "TELNETCONSOLE_ENABLED": "False", "LOG_LEVEL": "WARNING",
                  "CONCURRENT_REQUESTS": "16", "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7"}
        filters = [
            ("Redis set of scrapy fingerprints", {"DUPEFILTER_CLASS": "redisfilter.RedisRFPDupeFilter",
                                                  "REDIS_URL": "unix://" + sock}),
            ("urlhash.scrapy.RFPDupeFilter", {"DUPEFILTER_CLASS": "urlhash.scrapy.RFPDupeFilter",
                                              "URLHASH_URL": server.url}),
        ]
        print(f"site: {args.pages} pages, {args.links} links each, spellings: "
              + ", ".join(sorted({n for n, _ in SPELLINGS})))
        print("two scrapy processes at once, CONCURRENT_REQUESTS 16 each, site and servers on 127.0.0.1")
        print(f"{'filter':36} {'fetched':>8} {'distinct':>9} {'repeats':>8} {'wall s':>7}")
        for name, s in filters:
            site = Site(args.pages, args.links)
            wall = crawl(site, tmp, dict(common, **s), env)
            fetched = sum(site.fetches.values())
            print(f"{name:36} {fetched:8d} {len(site.fetches):9d} {fetched - len(site.fetches):8d} {wall:7.1f}")
            site.stop()
        server.stop()
        redis_proc.terminate()
        redis_proc.wait()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
