"""Test helpers: build the arena binary once and start `arena serve` processes."""

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(REPO, "sdk", "python"))
sys.path.insert(0, os.path.join(REPO, "sdk", "python", "examples"))

_binary = None
_tmp = None


def arena_binary():
    global _binary, _tmp
    if _binary is None:
        go = shutil.which("go")
        if go is None:
            raise RuntimeError("the Python SDK tests need Go to build `arena` (go is not on PATH)")
        _tmp = tempfile.mkdtemp(prefix="arena-pytest-")
        atexit.register(shutil.rmtree, _tmp, True)
        _binary = os.path.join(_tmp, "arena")
        subprocess.run([go, "build", "-o", _binary, "./cmd/arena"], cwd=REPO, check=True)
    return _binary


class Server:
    def __init__(self, *args):
        self.dir = tempfile.mkdtemp(prefix="arena-py-")
        self.sock = os.path.join(self.dir, "a.sock")
        self.address = "unix:" + self.sock
        self.log = open(os.path.join(self.dir, "serve.log"), "wb")
        self.proc = subprocess.Popen([arena_binary(), "serve", "--listen", self.address, "--out",
                                      os.path.join(self.dir, "out"), *args], stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10
        while not os.path.exists(self.sock):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("arena serve did not start: " + self.output())
            time.sleep(0.02)

    def output(self):
        self.log.flush()
        with open(os.path.join(self.dir, "serve.log"), encoding="utf-8", errors="replace") as f:
            return f.read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class ServerTest(unittest.TestCase):
    def serve(self, *args):
        s = Server(*args)
        self.addCleanup(s.stop)
        return s
