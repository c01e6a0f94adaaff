"""tiletune's Python client: every RPC of the daemon, compiled kernels fetched
by content hash, and a launcher for host kernels.

    import tiletune
    daemon = tiletune.Client("unix:/run/tiletune.sock", trusted_keys=[DAEMON_KEY])
    kernel = daemon.get_kernel(key)   # a tiletune.Kernel, or None: run your own
    kernel.host("/tmp/k.so").launch(a=a, b=b, c=c, chain=[bias])  # host kernels: numpy

The generated protobuf modules are ``tiletune.v1`` (built from proto/ with
the package).
"""

from tiletune.client import Client, DaemonError, Kernel, RefusedKernel, key, open_channel, verify
from tiletune.host_launcher import HostKernel

__all__ = ["Client", "DaemonError", "Kernel", "RefusedKernel", "HostKernel", "key",
           "open_channel", "verify"]
