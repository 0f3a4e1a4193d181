"""Where a crawl's urlhash server is, as scrapy's settings say it: read
alike by the dupefilter and the scheduler (urlhash.scrapy)."""

from __future__ import annotations

from typing import Any, NamedTuple, Optional

from ._client import Client


class ServerSettings(NamedTuple):
    """The server of a crawl: :class:`Client`'s (and :class:`Frontier`'s)
    base_url, token and ca_file."""

    url: str
    token: Optional[str]
    ca_file: Optional[str]

    def client(self) -> Client:
        """A Client of the server (its own connection)."""
        return Client(self.url, self.token, ca_file=self.ca_file)


def server_settings(settings: Any, component: str) -> ServerSettings:
    """Reads URLHASH_URL (required: without it a ValueError names the
    component, such as "Scheduler"), URLHASH_TOKEN (unset or empty: None,
    and the client reads $URLHASH_TOKEN, as every urlhash command does) and
    URLHASH_CA_FILE from scrapy's settings."""
    url = settings.get("URLHASH_URL")
    if not url:
        raise ValueError(f"urlhash.scrapy.{component} needs the setting URLHASH_URL (http://HOST:PORT of urlhash serve)")
    return ServerSettings(url, settings.get("URLHASH_TOKEN") or None, settings.get("URLHASH_CA_FILE") or None)
