"""Runs a host kernel (KernelArtifact.FORMAT_HOST_SHARED_OBJECT) in this
process: its code is loaded with ctypes and called with the op's argument
struct packed from the artifact's ABI alone, on numpy arrays or torch CPU
tensors. Loading a host kernel runs the daemon's code here, so it is done
only when asked."""

import ctypes
import hashlib
import pathlib

from tiletune import tensor_views
from tiletune.client import write_atomically
from tiletune.launch_abi import ArgumentPacker, check_loadable
from tiletune.v1 import artifacts_pb2


def _write_code(path, code):
    """`code` at `path` unless it is there already; a library this process
    (or another) has loaded from there stays mapped intact."""
    try:
        if hashlib.sha256(path.read_bytes()).digest() == hashlib.sha256(code).digest():
            return
    except OSError:
        pass
    write_atomically(path, code)


class HostKernel:
    """A served host kernel, loaded. launch(**tensors, chain=[...],
    scalars=[...], **floats) fills the struct and calls it."""

    def __init__(self, kernel, path):
        artifact = kernel.artifact
        check_loadable(artifact, artifacts_pb2.KernelArtifact.FORMAT_HOST_SHARED_OBJECT,
                       artifacts_pb2.KernelAbi.PASSING_POINTER, "a host kernel")
        self._packer = ArgumentPacker(artifact.abi, tensor_views.view, "cpu",
                                      tensor_views.dtype_name)
        _write_code(pathlib.Path(path), kernel.code)
        self.artifact = artifact
        self._library = ctypes.CDLL(str(path), mode=ctypes.RTLD_LOCAL)
        self._entry = getattr(self._library, artifact.entry)
        self._entry.restype = ctypes.c_int
        self._entry.argtypes = [ctypes.c_void_p]

    def launch(self, chain=(), scalars=(), **named):
        self._call(self._packer.pack(named, chain, scalars))

    def bind(self, tensors, floats=()):
        """launch_bound(addresses, floats) for callers that checked their
        tensors themselves (ArgumentPacker.bind)."""
        bound = self._packer.bind(tensors, floats)
        return lambda addresses, values=(): self._call(bound.pack(addresses, values))

    def _call(self, blob):
        # malloc'ed, so aligned for the struct's 8-byte fields.
        packed = ctypes.create_string_buffer(bytes(blob), len(blob))
        status = self._entry(ctypes.addressof(packed))
        if status != 0:
            raise RuntimeError(f"{self.artifact.entry} returned status {status}")
