"""The pip-installed tiletune package against the daemon at argv[1]: it is
the venv's copy, lists the host device, and a Lookup of a GEMM nobody tuned
answers MISS with a fallback."""

import sys

import tiletune
from tiletune.v1 import tiletune_pb2

assert tiletune.__file__.startswith(sys.prefix + "/"), f"not the venv's: {tiletune.__file__}"
with tiletune.Client(sys.argv[1]) as daemon:
    devices = daemon.list_devices().devices
    assert any(d.backend == "host" for d in devices), f"no host device: {devices}"
    answer = daemon.lookup(tiletune.key("gemm", {"m": 32, "n": 32, "k": 32}))
    assert answer.result == tiletune_pb2.LookupResponse.RESULT_MISS, answer
    assert answer.fallback.library, answer
print("python: devices", [d.id for d in devices], "lookup MISS, fallback", answer.fallback.library)
