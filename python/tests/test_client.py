import os
import sys
import threading
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
sys.path.insert(0, os.path.dirname(__file__))

import urlhash  # noqa: E402

from serve import Server  # noqa: E402


class ClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server.for_class(cls)

    def client(self, **kw):
        c = urlhash.Client(self.server.url, **kw)
        self.addCleanup(c.close)
        return c

    def test_add_and_has(self):
        c = self.client()
        self.assertEqual(c.has(["https://a.example/"]), [False])
        got = c.add(["https://a.example/", "https://A.EXAMPLE:443/x/../", "https://b.example/", "https://b.example/"])
        self.assertEqual(got, [True, False, True, False])
        self.assertEqual(c.has(["https://a.example/", "https://c.example/"]), [True, False])
        self.assertEqual(c.add([]), [])

    def test_batching(self):
        c = self.client(batch_size=7)
        urls = [f"https://batch.example/{i}" for i in range(50)]
        self.assertEqual(c.add(urls + urls[:3]), [True] * 50 + [False] * 3)
        self.assertEqual(c.has(urls), [True] * 50)

    def test_invalid(self):
        c = self.client()
        with self.assertRaises(urlhash.InvalidURLError) as cm:
            c.add(["https://ok.example/", "not a url", ""])
        e = cm.exception
        self.assertEqual(e.results, [True, None, None])
        self.assertEqual([(i, u) for i, u, _ in e.invalid], [(1, "not a url"), (2, "")])
        self.assertIn("missing scheme", e.invalid[0][2])
        self.assertEqual(e.invalid[1][2], "blank line")
        # The valid one was stored.
        self.assertEqual(c.has(["https://ok.example/"]), [True])
        with self.assertRaises(urlhash.InvalidURLError):
            c.add(["https://a.example/\nhttps://b.example/"])
        with self.assertRaises(TypeError):
            c.add("https://one.example/")

    def test_revisit(self):
        c = self.client()
        self.assertEqual(c.add(["https://r.example/"], revisit_after="1h"), [True])
        self.assertEqual(c.add(["https://r.example/"], revisit_after=3600), [False])

    def test_hashes(self):
        c = self.client()
        h = bytes(range(32))
        self.assertEqual(c.add_hashes([h, h]), [True, False])
        with self.assertRaises(ValueError):
            c.add_hashes([b"short"])

    def test_keep_alive_and_threads(self):
        c = self.client()
        c.add(["https://t.example/first"])
        conn = c._conn
        c.has(["https://t.example/first"])
        self.assertIs(c._conn, conn, "the connection was not kept alive")
        urls = [f"https://t.example/{i}" for i in range(200)]
        results = []

        def work():
            results.append(c.add(urls))

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        # Each URL was new to exactly one thread.
        for i in range(len(urls)):
            self.assertEqual(sum(r[i] for r in results), 1)

    def test_http_error(self):
        c = urlhash.Client(self.server.url + "/nope")
        self.addCleanup(c.close)
        with self.assertRaises(urlhash.HTTPError) as cm:
            c.add(["https://a.example/"])
        self.assertEqual(cm.exception.status, 404)

    def test_unavailable(self):
        c = self.client(retries=1, backoff=0.01)
        c._port = 1  # nothing listens there
        with self.assertRaises(urlhash.UnavailableError):
            c.add(["https://a.example/"])

    def test_bad_address(self):
        with self.assertRaises(ValueError):
            urlhash.Client("127.0.0.1:7411")


class RetryTest(unittest.TestCase):
    """A batch whose answer is lost is resent with its Idempotency-Key: the
    server answers with its first answer, so new URLs are reported new."""

    def test_retry_reuses_key(self):
        server = Server.for_test(self)
        c = urlhash.Client(server.url, backoff=0.01)
        self.addCleanup(c.close)
        real = c._send
        calls = []

        def lose_first_answer(method, path, body, headers):
            calls.append(headers.get("Idempotency-Key"))
            status, data = real(method, path, body, headers)
            if len(calls) == 1:
                raise ConnectionResetError("answer lost")
            return status, data

        c._send = lose_first_answer
        self.assertEqual(c.add(["https://retry.example/", "https://retry.example/2"]), [True, True])
        self.assertEqual(len(calls), 2)
        self.assertIsNotNone(calls[0])
        self.assertEqual(calls[0], calls[1])


if __name__ == "__main__":
    unittest.main()
