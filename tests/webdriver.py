"""A minimal W3C WebDriver client (over httpx) for Debian's chromium + chromium-driver.

Why not Selenium: the few commands the browser test needs (new session, go,
find, click, type, run a script, screenshot) are plain JSON over HTTP in the
W3C standard that chromedriver speaks, httpx is already a dependency, and
Selenium would add a large dev dependency whose driver manager may try to
download a browser (this machine has no network for that). Debian's
chromium-driver matches Debian's chromium version by construction.
"""

from __future__ import annotations

import base64
import contextlib
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
MISSING = (
    None
    if CHROMIUM and CHROMEDRIVER
    else "needs Debian's chromium and chromium-driver (`apt-get install -y chromium "
    "chromium-driver`; .ci/run installs them when running as root)"
)
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--window-size=1280,900",
]
STARTUP = 60.0  # an upper bound for chromedriver to listen; never asserted as a duration


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class WebDriverError(RuntimeError):
    pass


class Browser:
    """One headless Chromium session."""

    def __init__(self, base: str, session: str, client: httpx.Client) -> None:
        self.base = f"{base}/session/{session}"
        self.client = client

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        response = self.client.request(method, self.base + path, json=body)
        data = response.json()
        if response.status_code != 200:
            raise WebDriverError(f"{method} {path}: {data.get('value')}")
        return data.get("value")

    def go(self, url: str) -> None:
        self._call("POST", "/url", {"url": url})

    def find(self, css: str) -> str:
        value = self._call("POST", "/element", {"using": "css selector", "value": css})
        return str(next(iter(value.values())))

    def click(self, css: str) -> None:
        self._call("POST", f"/element/{self.find(css)}/click", {})

    def type(self, css: str, text: str) -> None:
        self._call("POST", f"/element/{self.find(css)}/value", {"text": text})

    def run(self, script: str, *args: Any) -> Any:
        return self._call("POST", "/execute/sync", {"script": script, "args": list(args)})

    def wait_for(self, script: str, *args: Any, timeout: float = 30.0) -> Any:
        """Poll ``script`` until it returns something truthy (an upper bound, not a check)."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.run(script, *args)
            if value:
                return value
            if time.monotonic() > deadline:
                raise WebDriverError(f"gave up waiting for: {script}")
            time.sleep(0.05)

    def resize(self, width: int, height: int) -> None:
        """Set the window's outer size in CSS pixels."""
        self._call("POST", "/window/rect", {"width": width, "height": height})

    def screenshot(self, path: Path) -> None:
        path.write_bytes(base64.b64decode(self._call("GET", "/screenshot")))


@contextlib.contextmanager
def chromium(profile: Path) -> Iterator[Browser]:
    """Start chromedriver and one headless Chromium with a fresh profile; stop both after."""
    assert CHROMIUM and CHROMEDRIVER, MISSING
    port = _free_port()
    driver = subprocess.Popen(
        [CHROMEDRIVER, f"--port={port}"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    client = httpx.Client(timeout=60.0, trust_env=False)
    try:
        deadline = time.monotonic() + STARTUP
        while True:
            try:
                if client.get(base + "/status").json()["value"]["ready"]:
                    break
            except (httpx.HTTPError, ValueError, KeyError):
                pass
            if time.monotonic() > deadline or driver.poll() is not None:
                raise WebDriverError("chromedriver did not start")
            time.sleep(0.05)
        options = {"binary": CHROMIUM, "args": [*FLAGS, f"--user-data-dir={profile}"]}
        created = client.post(
            base + "/session",
            json={"capabilities": {"alwaysMatch": {"goog:chromeOptions": options}}},
        ).json()["value"]
        if "sessionId" not in created:
            raise WebDriverError(f"no session: {created}")
        browser = Browser(base, created["sessionId"], client)
        try:
            yield browser
        finally:
            with contextlib.suppress(httpx.HTTPError):
                client.delete(browser.base)
    finally:
        client.close()
        driver.terminate()
        try:
            driver.wait(timeout=10)
        except subprocess.TimeoutExpired:
            driver.kill()
            driver.wait()
