"""urlhash.Frontier against a real server: enqueue, claim with a lease,
ack, release, extend, claim's wait, the politeness delay, the crawl's
counts and its deletion."""

import os
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
sys.path.insert(0, os.path.dirname(__file__))

import urlhash  # noqa: E402

from serve import Server  # noqa: E402


class FrontierTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server.for_class(cls)

    def frontier(self, crawl=None, **kw):
        """A Frontier on a crawl of this test's own (unless crawl is given)."""
        f = urlhash.Frontier(self.server.url, crawl or self.id().rsplit(".", 1)[1], **kw)
        self.addCleanup(f.close)
        return f

    def test_enqueue_claim_ack(self):
        f = self.frontier()
        f.set_delay(0)
        got = f.enqueue([
            {"url": "https://a.example/p", "data": b"\x00one\xff"},
            {"url": "https://A.EXAMPLE:443/x/../p"},  # the same URL
            {"url": "https://b.example/q", "priority": 3},
            {"url": "https://a.example/p", "fingerprint": "ab" * 20, "data": b"post"},  # another identity
        ])
        self.assertEqual(got, [True, False, True, True])
        st = f.status()
        self.assertEqual((st["queued"], st["in_transit"], st["completed"], st["queues"]), (3, 0, 0, 2))
        claimed = f.claim(10, per_queue=10, lease=60)
        self.assertEqual(sorted((c.url, c.queue, c.priority, c.data) for c in claimed), [
            ("https://a.example/p", "a.example", 0, b"\x00one\xff"),
            ("https://a.example/p", "a.example", 0, b"post"),
            ("https://b.example/q", "b.example", 3, b""),
        ])
        for c in claimed:
            self.assertRegex(c.id, "^[0-9a-f]{32}$")
        self.assertEqual(f.claim(10, per_queue=10), [])
        st = f.status()
        self.assertEqual((st["queued"], st["in_transit"]), (0, 3))
        self.assertEqual(f.ack([claimed[0].id, "0" * 32]), [True, False])
        self.assertEqual(f.release([claimed[1].id, claimed[0].id]), [True, False])
        st = f.status()
        self.assertEqual((st["queued"], st["in_transit"], st["completed"]), (1, 1, 1))
        # Released: due at once; completed: known, never again.
        again = f.claim(10, per_queue=10, idempotent=True)
        self.assertEqual([c.id for c in again], [claimed[1].id])
        self.assertEqual(f.enqueue([{"url": claimed[0].url, "fingerprint": "ab" * 20}, {"url": "https://a.example/p"}]), [False, False])
        with self.assertRaises(ValueError):
            f.ack(["not-an-id"])

    def test_invalid(self):
        f = self.frontier()
        with self.assertRaises(urlhash.InvalidURLError) as cm:
            f.enqueue([{"url": "https://ok.example/"}, {"url": "not a url"}, {"url": "https://ok.example/", "fingerprint": "xyz"}])
        e = cm.exception
        self.assertEqual(e.results, [True, None, None])
        self.assertEqual([(i, u) for i, u, _ in e.invalid], [(1, "not a url"), (2, "https://ok.example/")])
        self.assertEqual(f.status()["queued"], 1)

    def test_lease_expires(self):
        f = self.frontier()
        f.set_delay(0)
        f.enqueue([{"url": "https://lease.example/1"}])
        first = f.claim(1, lease=0.5)
        self.assertEqual(len(first), 1)
        self.assertEqual(f.claim(1), [])
        time.sleep(0.7)
        st = f.status()
        self.assertEqual((st["queued"], st["in_transit"]), (1, 0))
        second = f.claim(1)
        self.assertEqual([c.id for c in second], [first[0].id])
        # The first claimer's late ack still completes it.
        self.assertEqual(f.ack([first[0].id]), [True])
        self.assertEqual(f.status()["completed"], 1)

    def test_extend(self):
        f = self.frontier()
        f.set_delay(0)
        f.enqueue([{"url": f"https://extend.example/{i}"} for i in range(3)])
        first, done, lapsed = f.claim(3, lease=0.5, per_queue=3)
        self.assertEqual(f.ack([done.id]), [True])
        time.sleep(0.7)  # the leases pass: due again, no longer held
        self.assertEqual(f.extend([first.id, done.id, lapsed.id, "0" * 32], lease=0.4), [False, False, False, False])
        held, = f.claim(1, lease=0.5)
        self.assertEqual(held.id, first.id)
        self.assertEqual(f.extend([held.id], lease=60), [True])
        time.sleep(0.7)  # past the claim's lease, within the renewed one
        st = f.status()
        self.assertEqual((st["queued"], st["in_transit"], st["completed"]), (1, 1, 1))
        self.assertEqual([c.url for c in f.claim(10, per_queue=10)], [lapsed.url])
        with self.assertRaises(ValueError):
            f.extend(["not-an-id"])

    def test_claim_wait(self):
        f = self.frontier()
        f.set_delay(0)
        t0 = time.monotonic()
        self.assertEqual(f.claim(1, wait=0.3), [])
        self.assertGreaterEqual(time.monotonic() - t0, 0.25)
        # A claim waiting on an empty crawl gets what another client
        # enqueues meanwhile, long before its wait ends.
        enqueuer = self.frontier(f.crawl)
        timer = threading.Timer(0.3, enqueuer.enqueue, [[{"url": "https://wait.example/1"}]])
        timer.start()
        self.addCleanup(timer.cancel)
        t0 = time.monotonic()
        got = f.claim(1, wait=20)
        self.assertEqual([c.url for c in got], ["https://wait.example/1"])
        self.assertLess(time.monotonic() - t0, 10)
        with self.assertRaises(ValueError):
            f.claim(1, wait=f._client.timeout)

    def test_delete_crawl(self):
        f, other = self.frontier(), self.frontier("delete-other")
        f.set_delay(0)
        f.enqueue([{"url": f"https://delete.example/{i}"} for i in range(3)])
        other.enqueue([{"url": "https://delete.example/0"}])
        a, b = f.claim(2, per_queue=2)
        f.ack([a.id])
        self.assertEqual(f.delete_crawl(), 3)
        st = f.status()
        self.assertEqual((st["queued"], st["in_transit"], st["completed"], st["queues"]), (0, 0, 0, 0))
        self.assertEqual(f.ack([b.id]), [False])
        # Forgotten: known again as new. Another crawl keeps its own.
        self.assertEqual(f.enqueue([{"url": "https://delete.example/0"}]), [True])
        self.assertEqual(other.status()["queued"], 1)

    def test_delay_and_per_queue(self):
        f = self.frontier()
        f.set_delay(60)  # the crawl's default: a minute between hand-outs of a host
        f.enqueue([{"url": f"https://slow.example/{i}"} for i in range(3)] + [{"url": "https://other.example/"}])
        got = f.claim(10, per_queue=2)
        self.assertEqual(sorted(c.url for c in got), ["https://other.example/", "https://slow.example/0", "https://slow.example/1"])
        f.ack([c.id for c in got])
        self.assertEqual(f.claim(10, per_queue=2), [], "slow.example handed out again within its delay")
        st = f.status()
        self.assertEqual((st["queued"], st["due"]), (1, 0))
        self.assertEqual(f.set_delay(0, queue="slow.example")["seconds"], 0)
        self.assertEqual([c.url for c in f.claim(10, per_queue=2)], ["https://slow.example/2"])

    def test_crawls_apart(self):
        a, b = self.frontier("apart-a"), self.frontier("apart-b")
        self.assertEqual(a.enqueue([{"url": "https://same.example/"}]), [True])
        self.assertEqual(b.enqueue([{"url": "https://same.example/"}]), [True])
        self.assertEqual(b.status()["crawl"], "apart-b")

    def test_large_body(self):
        # Bodies of many lines with data (a page's outlinks, pickled), and
        # as many ids: every line read whole.
        f = self.frontier()
        f.set_delay(0)
        reqs = [{"url": f"https://large.example/{i}", "data": bytes([i % 256]) * 600} for i in range(300)]
        self.assertEqual(f.enqueue(reqs), [True] * 300)
        claimed = f.claim(1000, per_queue=1000)
        self.assertEqual(sorted((c.url, c.data) for c in claimed), sorted((r["url"], r["data"]) for r in reqs))
        self.assertEqual(f.ack([c.id for c in claimed]), [True] * 300)

    def test_batches(self):
        f = self.frontier(batch_size=7)
        urls = [f"https://batch.example/{i}" for i in range(30)]
        self.assertEqual(f.enqueue([{"url": u} for u in urls + urls[:2]]), [True] * 30 + [False] * 2)


if __name__ == "__main__":
    unittest.main()
