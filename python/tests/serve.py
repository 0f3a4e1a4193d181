"""Starts a real urlhash server for the tests: the binary from $URLHASH_BIN,
else built from the repository with go build (once per test run)."""

import os
import pathlib
import shutil
import subprocess
import tempfile
import threading
import unittest

REPO = pathlib.Path(__file__).resolve().parents[2]
_built = None


def binary():
    global _built
    if os.environ.get("URLHASH_BIN"):
        return os.environ["URLHASH_BIN"]
    if _built is None:
        if shutil.which("go") is None:
            raise unittest.SkipTest("go is not installed and URLHASH_BIN is not set")
        out = pathlib.Path(tempfile.mkdtemp(prefix="urlhash-bin-")) / "urlhash"
        subprocess.run(["go", "build", "-o", str(out), "./cmd/urlhash"], cwd=REPO, check=True)
        _built = str(out)
    return _built


class Server:
    """``urlhash serve`` on a free loopback port, over a fresh index."""

    def __init__(self, *args):
        self.dir = tempfile.mkdtemp(prefix="urlhash-test-")
        self.proc = subprocess.Popen(
            [binary(), "serve", "--db", os.path.join(self.dir, "idx"), "--listen", "127.0.0.1:0", *args],
            stderr=subprocess.PIPE,
            text=True,
        )
        line = self.proc.stderr.readline()
        if " on " not in line:
            self.stop()
            raise RuntimeError(f"urlhash serve said {line!r}")
        self.url = line.strip().split(" on ", 1)[1]
        # Drain its log so that it never blocks on a full pipe.
        self._drain = threading.Thread(target=self.proc.stderr.read, daemon=True)
        self._drain.start()

    @classmethod
    def for_test(cls, test, *args):
        """A Server for the unittest test, stopped when it ends (a cleanup)."""
        server = cls(*args)
        test.addCleanup(server.stop)
        return server

    @classmethod
    def for_class(cls, case, *args):
        """A Server shared by the tests of the TestCase class case (from its
        setUpClass), stopped after the last of them (a class cleanup, which
        runs even when setUpClass fails later on)."""
        server = cls(*args)
        case.addClassCleanup(server.stop)
        return server

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if hasattr(self, "_drain"):
            self._drain.join(timeout=10)
        self.proc.stderr.close()
        shutil.rmtree(self.dir, ignore_errors=True)
