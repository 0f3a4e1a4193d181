"""Client of a urlhash server: a seen-set of URLs shared by many processes.

The server (``urlhash serve``) canonicalises URLs and keeps their identities;
:class:`Client` sends them in batches over a kept-alive connection and
retries a batch with its Idempotency-Key, so that a retried batch gets the
server's first answer. :class:`Frontier` is the server's crawl frontier:
queues of requests that processes claim with a lease and ack.
"""

from ._client import (
    TOKEN_ENV,
    Client,
    HTTPError,
    InvalidURLError,
    TLSError,
    UnavailableError,
    UrlhashError,
)
from ._frontier import Claimed, Frontier

__all__ = ["Client", "Frontier", "Claimed", "UrlhashError", "HTTPError", "InvalidURLError", "UnavailableError", "TLSError", "TOKEN_ENV"]
__version__ = "0.1.0"
