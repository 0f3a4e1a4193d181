"""A scrapy dupefilter over a urlhash server.

In the project's settings::

    DUPEFILTER_CLASS = "urlhash.scrapy.RFPDupeFilter"
    URLHASH_URL = "http://127.0.0.1:7411"
    URLHASH_TOKEN = "..."          # when the server wants one

Any number of crawler processes then share one seen-set: a GET request is
seen when its URL's urlhash identity (the URL Standard's canonical form,
the fragment dropped first, whatever the index's profile) is stored; any
other request is keyed by scrapy's own request fingerprint, stored as a hash,
so that it is never merged with a GET of the same URL.
"""

import hashlib
import logging

from scrapy.dupefilters import BaseDupeFilter

from ._client import Client

__all__ = ["RFPDupeFilter"]

logger = logging.getLogger(__name__)


class RFPDupeFilter(BaseDupeFilter):
    """Request dupefilter whose seen-set is a urlhash server's index."""

    def __init__(self, client, debug=False, fingerprinter=None):
        self.client = client
        self.debug = debug
        self.fingerprinter = fingerprinter
        self.logdupes = True

    @classmethod
    def from_settings(cls, settings, *, fingerprinter=None):
        url = settings.get("URLHASH_URL")
        if not url:
            raise ValueError("urlhash.scrapy.RFPDupeFilter needs the setting URLHASH_URL (http://HOST:PORT of urlhash serve)")
        client = Client(url, token=settings.get("URLHASH_TOKEN") or None)
        return cls(client, debug=settings.getbool("DUPEFILTER_DEBUG"), fingerprinter=fingerprinter)

    @classmethod
    def from_crawler(cls, crawler):
        return cls.from_settings(crawler.settings, fingerprinter=getattr(crawler, "request_fingerprinter", None))

    @classmethod
    def from_spider(cls, spider):
        """For schedulers that make their dupefilter from the spider
        (scrapy-redis's, through SCHEDULER_DUPEFILTER_CLASS)."""
        return cls.from_crawler(spider.crawler)

    def request_seen(self, request):
        """Reports whether the request was seen, by any process; records it."""
        if request.method == "GET":
            url = request.url.split("#", 1)[0]
            return not self.client.add([url])[0]
        return not self.client.add_hashes([self._fingerprint_hash(request)])[0]

    def _fingerprint_hash(self, request):
        if self.fingerprinter is not None:
            fp = self.fingerprinter.fingerprint(request)
        else:
            from scrapy.utils.request import fingerprint

            fp = fingerprint(request)
        if isinstance(fp, str):  # scrapy before 2.7: hex
            fp = fp.encode()
        # 32 bytes in a space of their own: never a URL's identity.
        return hashlib.sha256(b"scrapy-request-fingerprint\x00" + fp).digest()

    def close(self, reason):
        self.client.close()

    def log(self, request, spider):
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
