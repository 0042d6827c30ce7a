"""Fixtures of the library tests: a real HTTP server on 127.0.0.1 for the download tests, and an environment without
mirrors or a data folder set by the developer."""
import functools
import http.server
import threading

import pytest


class RecordingHandler(http.server.SimpleHTTPRequestHandler):
    def do_GET(self):
        self.server.requests.append(self.path)
        super().do_GET()

    def log_message(self, *args):  # keep pytest output clean
        pass


@pytest.fixture
def server(tmp_path):
    """A real threading HTTP server serving tmp_path/www; yields (www folder, base URL, request log)."""
    www = tmp_path / "www"
    www.mkdir()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(RecordingHandler, directory=str(www)))
    httpd.requests = []
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield www, f"http://127.0.0.1:{httpd.server_address[1]}", httpd.requests
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for var in ("REPLICATIONS_MIRROR", "REPLICATIONS_DATA_DIR"):
        monkeypatch.delenv(var, raising=False)
    for var in ("no_proxy", "NO_PROXY"):  # a developer's proxy must not intercept 127.0.0.1
        monkeypatch.setenv(var, "127.0.0.1,localhost")
