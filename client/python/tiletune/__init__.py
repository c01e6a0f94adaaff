"""tiletune's Python client: every RPC of the daemon, compiled kernels fetched
by content hash, and a launcher for host kernels.

    import tiletune
    daemon = tiletune.Client("127.0.0.1:50051")
    kernel = daemon.get_kernel(key)          # a tiletune.Kernel, or None: run your own
    kernel.launch(a=a, b=b, c=c, chain=[bias])  # host kernels: numpy arrays

The generated protobuf modules are ``tiletune.v1`` (built from proto/ with
the package).
"""

from tiletune.client import Client, DaemonError, Kernel, key
from tiletune.host_launcher import HostKernel

__all__ = ["Client", "DaemonError", "Kernel", "HostKernel", "key"]
