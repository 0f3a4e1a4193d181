"""A small local web site for crawl tests: pages that link to each other
through many spellings of one URL, and a count of the fetches of each page."""

import collections
import http.server
import posixpath
import threading
import time


class Site:
    """``pages`` pages on 127.0.0.1, page i linking to ``links`` others, each
    link spelled one of several ways that name the same page (a fragment,
    dot segments, the default port's absence...)."""

    def __init__(self, pages=40, links=6, delay=0.01, gate=()):
        """gate: pages whose answers wait until every one of them was asked
        (at most 30 s), so that crawlers started from them run at once."""
        self.pages = pages
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
            def do_GET(self):
                # Dot segments resolved, as web servers do (scrapy sends
                # them as written).
                path = posixpath.normpath(self.path.split("?", 1)[0])
                with lock:
                    if path.startswith("/page/") and path[6:].isdigit() and int(path[6:]) < site.pages:
                        site.fetches[path] += 1
                    else:
                        site.other[path] += 1
                if not (path.startswith("/page/") and path[6:].isdigit()):
                    self.send_error(404)
                    return
                time.sleep(delay)
                with lock:
                    waiting.discard(path)
                    if not waiting:
                        opened.set()
                if path in gated:
                    opened.wait(timeout=30)
                i = int(path[6:])
                body = "<html><body>" + "".join(
                    f'<a href="{site.spell(i * 7 + k, k)}">p</a>' for k in range(1, links + 1)
                ) + "</body></html>"
                b = body.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(b)))
                self.end_headers()
                self.wfile.write(b)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

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

    def url(self, i):
        return f"{self.base}/page/{i}"

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()
