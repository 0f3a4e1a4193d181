"""A small local web site for crawl tests: pages that link to each other
through many spellings of one URL, and a count of the fetches of each page;
and the scrapy spider that crawls it."""

import collections
import http.server
import posixpath
import sys
import textwrap
import threading
import time
import urllib.parse

SPIDER = textwrap.dedent(
    """
    import scrapy

    class SiteSpider(scrapy.Spider):
        name = "site"

        def __init__(self, start=None, **kw):
            super().__init__(**kw)
            self.start = start

        def start_requests(self):
            # Filtered like every other request: the other crawler may
            # have fetched it.
            yield scrapy.Request(self.start, dont_filter=False)

        def parse(self, response):
            for href in response.css("a::attr(href)").getall():
                yield response.follow(href, self.parse)
    """
)

# SPIDER, recording each page once its callback is through (what it yielded
# handed to the scheduler): a line a page (its path as the site counts it) in
# the file -a record=FILE, written at once, so that a process killed with
# SIGKILL keeps what it wrote.
RECORDING_SPIDER = textwrap.dedent(
    """
    import posixpath
    import urllib.parse
    import scrapy

    class SiteSpider(scrapy.Spider):
        name = "site"

        def __init__(self, start=None, record=None, **kw):
            super().__init__(**kw)
            self.start = start
            self.record = open(record, "a", buffering=1)

        def start_requests(self):
            yield scrapy.Request(self.start, dont_filter=False)

        def parse(self, response):
            for href in response.css("a::attr(href)").getall():
                yield response.follow(href, self.parse)
            # The page as the site counts it (dot segments resolved).
            path = posixpath.normpath(urllib.parse.unquote(urllib.parse.urlsplit(response.url).path))
            self.record.write(path + "\\n")
    """
)


def crawl_cmd(spider, start, settings):
    """The command that runs the spider file from start with scrapy's
    settings."""
    cmd = [sys.executable, "-m", "scrapy", "runspider", spider, "-a", f"start={start}"]
    for k, v in settings.items():
        cmd += ["-s", f"{k}={v}"]
    return cmd


class Site:
    """``pages`` pages on 127.0.0.1, page i linking to ``links`` others, each
    link spelled one of several ways that name the same page (a fragment,
    dot segments, the default port's absence...). A subclass may link and
    spell otherwise (hrefs, spell) and answer in HTTP/1.1."""

    protocol_version = "HTTP/1.0"

    def __init__(self, pages=40, links=6, delay=0.01, gate=(), hold=False):
        """gate: pages whose answers wait until every one of them was asked
        (at most 30 s), so that crawlers started from them run at once;
        hold: every answer waits for release() (at most 120 s)."""
        self.pages = pages
        self.links = links
        self.held = threading.Event()
        if not hold:
            self.held.set()
        self.last = None  # time.monotonic() of the last page fetch
        # Fetches of each page by User-Agent (a crawler process's name).
        self.by_agent = collections.defaultdict(collections.Counter)
        waiting = set(f"/page/{i}" for i in gate)
        opened = threading.Event()
        if not waiting:
            opened.set()
        self.fetches = collections.Counter()
        self.other = collections.Counter()
        lock = threading.Lock()
        gated = set(waiting)
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = site.protocol_version

            def do_GET(self):
                # Dot segments resolved and escapes decoded, as web
                # servers do (scrapy sends them as written).
                path = posixpath.normpath(urllib.parse.unquote(self.path.split("?", 1)[0]))
                with lock:
                    if path.startswith("/page/") and path[6:].isdigit() and int(path[6:]) < site.pages:
                        site.fetches[path] += 1
                        site.last = time.monotonic()
                        site.by_agent[self.headers.get("User-Agent", "")][path] += 1
                    else:
                        site.other[path] += 1
                if not (path.startswith("/page/") and path[6:].isdigit()):
                    self.send_error(404)
                    return
                site.held.wait(timeout=120)
                time.sleep(delay)
                with lock:
                    waiting.discard(path)
                    if not waiting:
                        opened.set()
                if path in gated:
                    opened.wait(timeout=30)
                i = int(path[6:])
                body = "<html><body>" + "".join(f'<a href="{h}">p</a>' for h in site.hrefs(i)) + "</body></html>"
                b = body.encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html")
                    self.send_header("Content-Length", str(len(b)))
                    self.end_headers()
                    self.wfile.write(b)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # a crawler killed while it waited

            def log_message(self, *args):
                pass

        class Server(http.server.ThreadingHTTPServer):
            def handle_error(self, request, client_address):
                if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
                    super().handle_error(request, client_address)  # a crawler killed mid-request is not one

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def hrefs(self, i):
        """The links of page i."""
        return [self.spell(i * 7 + k, k) for k in range(1, self.links + 1)]

    def spell(self, j, k):
        """Link k to page j, in one of the spellings of its URL."""
        j %= self.pages
        spellings = [
            f"{self.base}/page/{j}",
            f"{self.base}/page/{j}#section-{k}",
            f"{self.base}/page/./{j}",
            f"{self.base}/page/x/../{j}",
            f"/page/{j}#top",
            f"{self.base.replace('http://', 'HTTP://')}/page/{j}",
        ]
        return spellings[(j + k) % len(spellings)]

    def release(self):
        """Lets the answers held since the start go."""
        self.held.set()

    def url(self, i):
        return f"{self.base}/page/{i}"

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()
