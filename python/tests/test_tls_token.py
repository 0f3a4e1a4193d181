"""TLS trust, URLHASH_TOKEN and argument checks of urlhash.Client, against
real servers (HTTPS with a private CA made by openssl for the test)."""

import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import time
import typing
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "src"))
sys.path.insert(0, HERE)

import urlhash  # noqa: E402

from serve import Server  # noqa: E402


def make_ca(tmp):
    """A CA and a certificate for 127.0.0.1 signed by it, made with the
    openssl command: returns (ca.pem, cert.pem, key.pem)."""
    if shutil.which("openssl") is None:
        raise unittest.SkipTest("openssl is not installed")
    ca_key, ca, key, csr, cert = (os.path.join(tmp, n) for n in ("ca.key", "ca.pem", "key.pem", "srv.csr", "cert.pem"))
    ext = os.path.join(tmp, "ext.cnf")
    with open(ext, "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
                "authorityKeyIdentifier=keyid\nsubjectKeyIdentifier=hash\n")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    for cmd in (
        ["openssl", "req", "-x509", *ec, "-keyout", ca_key, "-out", ca, "-days", "2", "-subj", "/CN=urlhash test CA",
         "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"],
        ["openssl", "req", *ec, "-keyout", key, "-out", csr, "-subj", "/CN=127.0.0.1"],
        ["openssl", "x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial", "-out", cert,
         "-days", "2", "-extfile", ext],
    ):
        subprocess.run(cmd, check=True, capture_output=True)
    return ca, cert, key


class TLSTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="urlhash-tls-")
        cls.addClassCleanup(shutil.rmtree, cls.tmp, ignore_errors=True)
        cls.ca, cert, key = make_ca(cls.tmp)
        cls.server = Server.for_class(cls, "--tls-cert", cert, "--tls-key", key)
        cls.plain = Server.for_class(cls)

    def client(self, url, **kw):
        c = urlhash.Client(url, **kw)
        self.addCleanup(c.close)
        return c

    def test_untrusted_certificate_fails_at_once(self):
        self.assertTrue(self.server.url.startswith("https://"), self.server.url)
        c = self.client(self.server.url, retries=5, backoff=1.0)
        start = time.monotonic()
        with self.assertRaises(urlhash.TLSError) as cm:
            c.add(["https://a.example/"])
        self.assertLess(time.monotonic() - start, 1.0, "retried a certificate failure")
        self.assertIn("ca_file", str(cm.exception))
        self.assertIn(self.server.url, str(cm.exception))

    def test_ca_file(self):
        c = self.client(self.server.url, ca_file=self.ca)
        self.assertEqual(c.add(["https://tls.example/", "https://tls.example/"]), [True, False])

    def test_ssl_context(self):
        ctx = ssl.create_default_context(cafile=self.ca)
        c = self.client(self.server.url, ssl_context=ctx)
        self.assertEqual(c.has(["https://tls.example/ctx"]), [False])

    def test_http_to_an_https_server(self):
        url = self.server.url.replace("https://", "http://")
        c = self.client(url, retries=5, backoff=1.0)
        with self.assertRaises(urlhash.TLSError) as cm:
            c.add(["https://a.example/"])
        self.assertIn("speaks HTTPS", str(cm.exception))
        self.assertIn(self.server.url, str(cm.exception))

    def test_https_to_an_http_server(self):
        url = self.plain.url.replace("http://", "https://")
        c = self.client(url, retries=5, backoff=1.0, ca_file=self.ca)
        start = time.monotonic()
        with self.assertRaises(urlhash.TLSError) as cm:
            c.add(["https://a.example/"])
        self.assertLess(time.monotonic() - start, 1.0, "retried a TLS failure")
        self.assertIn("does not speak HTTPS", str(cm.exception))

    def test_bad_tls_arguments(self):
        with self.assertRaises(ValueError):
            urlhash.Client(self.plain.url, ca_file=self.ca)
        with self.assertRaises(ValueError):
            urlhash.Client(self.server.url, ca_file=self.ca, ssl_context=ssl.create_default_context())


class TokenTest(unittest.TestCase):
    """The client reads URLHASH_TOKEN when it is given no token."""

    TOKEN = "py-token-test"

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="urlhash-token-")
        cls.addClassCleanup(shutil.rmtree, cls.tmp, ignore_errors=True)
        token_file = os.path.join(cls.tmp, "token")
        with open(token_file, "w") as f:
            f.write(cls.TOKEN + "\n")
        cls.server = Server.for_class(cls, "--token-file", token_file)

    def test_token_from_environment(self):
        with mock.patch.dict(os.environ, {"URLHASH_TOKEN": self.TOKEN}):
            c = urlhash.Client(self.server.url)
        self.addCleanup(c.close)
        self.assertEqual(c.add(["https://token.example/env"]), [True])

    def test_token_argument_wins(self):
        with mock.patch.dict(os.environ, {"URLHASH_TOKEN": "wrong"}):
            c = urlhash.Client(self.server.url, token=self.TOKEN)
        self.addCleanup(c.close)
        self.assertEqual(len(c.has(["https://token.example/arg"])), 1)  # no 401

    def test_no_token_is_401_with_a_hint(self):
        env = {k: v for k, v in os.environ.items() if k != "URLHASH_TOKEN"}
        for kw, environ in (({}, env), ({"token": ""}, dict(env, URLHASH_TOKEN=self.TOKEN))):
            with mock.patch.dict(os.environ, environ, clear=True):
                c = urlhash.Client(self.server.url, **kw)
            self.addCleanup(c.close)
            with self.assertRaises(urlhash.HTTPError) as cm:
                c.has(["https://token.example/"])
            self.assertEqual(cm.exception.status, 401)
            self.assertIn("URLHASH_TOKEN", str(cm.exception))


class ArgumentTest(unittest.TestCase):
    """Bad arguments raise clear errors before anything is sent (no server
    listens at the address)."""

    def test_not_a_string(self):
        c = urlhash.Client("http://127.0.0.1:1", retries=0)
        for urls, pos, kind in ((["https://a.example/", None], 1, "NoneType"), ([b"https://a.example/"], 0, "bytes"), ([7], 0, "int")):
            with self.assertRaises(TypeError) as cm:
                c.add(urls)
            self.assertIn(f"position {pos}", str(cm.exception))
            self.assertIn(kind, str(cm.exception))
            with self.assertRaises(TypeError):
                c.has(urls)
        with self.assertRaises(TypeError) as cm:
            c.add_hashes([bytes(32), "x" * 32])
        self.assertIn("position 1", str(cm.exception))


class TypingTest(unittest.TestCase):
    """The package is typed (PEP 484, PEP 561)."""

    def test_py_typed(self):
        self.assertTrue(os.path.exists(os.path.join(os.path.dirname(urlhash.__file__), "py.typed")))

    def test_annotations(self):
        for f in (urlhash.Client.__init__, urlhash.Client.add, urlhash.Client.has, urlhash.Client.add_hashes, urlhash.Client.close):
            hints = typing.get_type_hints(f)
            self.assertIn("return", hints, f.__qualname__)
        self.assertEqual(typing.get_type_hints(urlhash.Client.add)["return"], typing.List[bool])


if __name__ == "__main__":
    unittest.main()
