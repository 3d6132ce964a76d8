"""Servers for the browser suite: JupyterLab on a free loopback port, and a static file server.

Each runs in its own process group with a bounded start and a shutdown that always happens
(the kernels first, through the API, then the server, then anything still holding the run's
runtime folder, by pid), so a failed test leaves no process behind.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from minibert.course import lab

START_TIMEOUT = 90      # seconds JupyterLab may take to answer /api/status
STOP_TIMEOUT = 15       # seconds it may take to exit after /api/shutdown


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def course_copy(repo: Path, folder: Path) -> Path:
    """A scratch copy of the course to serve: the lessons, figures and README are copied (a
    lesson run in the browser writes there, never into the clone); the library and the
    checkpoints are linked (only read)."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copytree(repo / "lessons", folder / "lessons", symlinks=True,
                    ignore=shutil.ignore_patterns("snapshots", ".ipynb_checkpoints"))
    (folder / "lessons" / "snapshots").symlink_to(repo / "lessons" / "snapshots")
    shutil.copytree(repo / "figures", folder / "figures")
    for name in ("README.md",):
        shutil.copy2(repo / name, folder / name)
    (folder / "minibert").symlink_to(repo / "minibert")
    return folder


class JupyterLab:
    """`jupyter lab` as `make lab` configures it, headless, on 127.0.0.1 with a token."""

    def __init__(self, root: Path, work: Path):
        self.root, self.work = Path(root), Path(work)
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self.url = f"http://127.0.0.1:{self.port}"
        self.runtime = self.work / "runtime"
        self.log_path = self.work / "jupyterlab.log"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        lab.write_overrides()             # what `make lab` writes: the settings under test
        for name in ("runtime", "settings", "workspaces"):
            (self.work / name).mkdir(parents=True, exist_ok=True)
        env = lab.lab_environment()
        env.update({
            "JUPYTER_RUNTIME_DIR": str(self.runtime),           # kernels found by this path
            "JUPYTERLAB_SETTINGS_DIR": str(self.work / "settings"),  # no user settings
            "JUPYTERLAB_WORKSPACES_DIR": str(self.work / "workspaces"),
            "MINIBERT_HOME": str(self.root),                    # lessons write into the copy
            "OMP_NUM_THREADS": "1",                            # one core per kernel
        })
        command = lab.lab_command(
            "--no-browser", f"--port={self.port}", "--ServerApp.ip=127.0.0.1",
            "--ServerApp.port_retries=0", f"--IdentityProvider.token={self.token}",
            "--LabApp.expose_app_in_browser=True", "--ServerApp.allow_root=True",
            "--ServerApp.shutdown_no_activity_timeout=1800",   # a last resort if all else fails
            "--MappingKernelManager.cull_idle_timeout=0", root=self.root)
        self._log = open(self.log_path, "w")
        self.process = subprocess.Popen(command, cwd=self.root, env=env, stdin=subprocess.DEVNULL,
                                        stdout=self._log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"JupyterLab exited at start:\n{self.log_tail()}")
            with contextlib.suppress(OSError, urllib.error.URLError):
                if json.loads(self.api("GET", "/api/status")).get("started"):
                    return
            time.sleep(0.5)
        raise TimeoutError(f"JupyterLab did not answer in {START_TIMEOUT} s:\n{self.log_tail()}")

    def api(self, method: str, path: str, timeout: float = 10) -> bytes:
        request = urllib.request.Request(f"{self.url}{path}", method=method,
                                         headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.read()

    def page_url(self, path: str = "lab") -> str:
        return f"{self.url}/{path}?token={self.token}"

    def log_tail(self, lines: int = 40) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log_path.read_text().splitlines()[-lines:])
        return ""

    def kernel_pids(self) -> list[int]:
        """Processes whose command line names this server's runtime folder (its kernels)."""
        marker, pids = str(self.runtime), []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                with contextlib.suppress(OSError):
                    if marker in (entry / "cmdline").read_bytes().decode(errors="replace"):
                        pids.append(int(entry.name))
        return pids

    def stop(self) -> list[int]:
        """Shut everything down; return the pids that had to be killed (none, normally)."""
        if self.process is None:
            return []
        with contextlib.suppress(Exception):
            for kernel in json.loads(self.api("GET", "/api/kernels")):
                self.api("DELETE", f"/api/kernels/{kernel['id']}", timeout=STOP_TIMEOUT)
        with contextlib.suppress(Exception):
            self.api("POST", "/api/shutdown")
        killed = []
        try:
            self.process.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            killed.append(self.process.pid)
            self.process.wait(STOP_TIMEOUT)
        for pid in self.kernel_pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
        self._log.close()
        self.process = None
        return killed


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:   # the suite reports what it checks, not each request
        pass


@contextlib.contextmanager
def static_server(folder: Path):
    """Serve `folder` on a free loopback port in a thread; yield its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


if __name__ == "__main__":      # by hand: serve a scratch copy and print its URL until Enter
    import tempfile
    repo = Path(__file__).resolve().parents[2]
    work = Path(tempfile.mkdtemp(prefix="minibert-lab-"))
    server = JupyterLab(course_copy(repo, work / "course"), work)
    server.start()
    print(server.page_url("lab/tree/lessons"), flush=True)
    try:
        sys.stdin.readline()
    finally:
        print("killed:", server.stop())
