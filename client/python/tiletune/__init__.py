"""tiletune's Python client: every RPC of the daemon, compiled kernels fetched
by content hash, and a launcher for host kernels.

    import tiletune
    daemon = tiletune.Client("unix:/run/tiletune.sock", trusted_keys=[DAEMON_KEY])
    kernel = daemon.get_kernel(key)   # a tiletune.Kernel, or None: run your own
    kernel.host("/tmp/k.so").launch(a=a, b=b, c=c, chain=[bias])  # host kernels: numpy
    kernel.cuda("cuda:0").launch(stream, a=a, b=b, c=c, chain=[bias])  # CUBINs: torch tensors

PyTorch ops that run served kernels (and torch's own otherwise) are in
``tiletune.torch``.

The generated protobuf modules are ``tiletune.v1`` (built from proto/ with
the package).
"""

from tiletune.client import (Client, DaemonError, Kernel, LookupStream, RefusedKernel, SubmitRetry,
                             as_dict, key, new_request_id, open_channel, verify)
from tiletune.host_launcher import HostKernel
from tiletune.launch_abi import LaunchError

__all__ = ["Client", "DaemonError", "Kernel", "LookupStream", "LaunchError", "RefusedKernel",
           "HostKernel", "SubmitRetry", "as_dict", "key", "new_request_id", "open_channel", "verify"]
