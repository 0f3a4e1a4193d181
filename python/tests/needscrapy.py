"""For the tests that run scrapy: whether the Python running them has it.
Such a test is skipped where scrapy is not installed, unless
URLHASH_REQUIRE_SCRAPY=1 (CI) makes that a failure."""

import os
import sys

try:
    import scrapy  # noqa: F401

    HAVE_SCRAPY = True
except ImportError:
    HAVE_SCRAPY = False


def require(test):
    """Skips (or, under URLHASH_REQUIRE_SCRAPY=1, fails) the unittest test
    when scrapy is not importable."""
    if HAVE_SCRAPY:
        return
    if os.environ.get("URLHASH_REQUIRE_SCRAPY") == "1":
        test.fail(f"scrapy is not importable by {sys.executable}")
    test.skipTest("scrapy is not installed")
