"""A real tiletuned on 127.0.0.1 for the Python client's tests: started from
the build tree (TILETUNE_BIN_DIR), on a fresh data folder, stopped with
SIGTERM after the session."""

import os
import pathlib
import signal
import subprocess
import time

import pytest


class Daemon:
    """Where the test daemon listens (TCP and its Unix socket) and the
    public key it signs kernels with."""

    def __init__(self, address, unix, signing_key, socket_path):
        self.address = address
        self.unix = unix
        self.signing_key = signing_key
        self.socket_path = socket_path


@pytest.fixture(scope="session")
def daemon(tmp_path_factory):
    bin_dir = pathlib.Path(os.environ["TILETUNE_BIN_DIR"])
    data = tmp_path_factory.mktemp("tiletuned")
    ready = data / "ready"
    log = open(data / "tiletuned.log", "w")
    # One CPU: single-threaded host variants, whose timing stays steady while
    # other tests load the machine. Host GEMMs against host-naive: whether a
    # GEMV beats OpenBLAS depends on the CPU (tests/support/tiletuned_process.h).
    socket = data / "tiletuned.sock"
    process = subprocess.Popen(
        [str(bin_dir / "tiletuned"), "--data-dir", str(data), "--listen", "127.0.0.1:0",
         "--metrics-listen", "127.0.0.1:0", "--ready-file", str(ready), "--host-cpus", "1",
         "--host-openblas-baseline", "false", "--listen-unix", str(socket), "--unix-socket-mode", "0600"],
        stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 300  # only a hang takes this long, even on a loaded machine
    while not ready.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("tiletuned did not start: " + (data / "tiletuned.log").read_text())
        time.sleep(0.02)
    fields = dict(line.split("=", 1) for line in ready.read_text().splitlines() if "=" in line)
    yield Daemon(fields["grpc"], "unix:" + fields["unix"], fields["signing_key"], socket)
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=60) == 0
    log.close()
