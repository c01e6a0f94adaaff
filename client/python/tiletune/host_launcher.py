"""Runs a host kernel (KernelArtifact.FORMAT_HOST_SHARED_OBJECT) in this
process: its code is loaded with ctypes and called with the op's argument
struct packed from the artifact's ABI alone. Loading a host kernel runs the
daemon's code here, so it is done only when asked."""

import ctypes
import struct

import numpy as np

from tiletune.v1 import artifacts_pb2, kernel_key_pb2

_F = artifacts_pb2.AbiField
_NUMPY = {kernel_key_pb2.DTYPE_F32: np.float32, kernel_key_pb2.DTYPE_F64: np.float64,
          kernel_key_pb2.DTYPE_F16: np.float16}


class LaunchError(ValueError):
    """An argument the kernel cannot take: named, before anything runs."""


def _check(name, array, dtype, shape):
    if not isinstance(array, np.ndarray):
        raise LaunchError(f"{name}: a numpy array is needed, not {type(array).__name__}")
    want = _NUMPY.get(dtype)
    if want is None or array.dtype != want:
        raise LaunchError(f"{name}: dtype {array.dtype}, the kernel takes "
                          f"{kernel_key_pb2.DType.Name(dtype)}")
    if array.size != int(np.prod(shape)):
        raise LaunchError(f"{name}: {array.size} elements, the kernel takes shape {list(shape)}")
    if not array.flags["C_CONTIGUOUS"]:
        raise LaunchError(f"{name}: not contiguous; the kernel reads dense tensors")


class HostKernel:
    """A served host kernel, loaded. launch(**tensors, chain=[...],
    scalars=[...], **floats) fills the struct and calls it."""

    def __init__(self, kernel, path):
        artifact = kernel.artifact
        if artifact.format != artifacts_pb2.KernelArtifact.FORMAT_HOST_SHARED_OBJECT:
            raise LaunchError("not a host kernel: " +
                              artifacts_pb2.KernelArtifact.Format.Name(artifact.format))
        if artifact.abi.version != 2 or artifact.abi.passing != artifacts_pb2.KernelAbi.PASSING_POINTER:
            raise LaunchError(f"launch ABI version {artifact.abi.version} is not one this "
                              "client knows (2)")
        with open(path, "wb") as f:
            f.write(kernel.code)
        self.artifact = artifact
        self._library = ctypes.CDLL(str(path), mode=ctypes.RTLD_LOCAL)
        self._entry = getattr(self._library, artifact.entry)
        self._entry.restype = ctypes.c_int
        self._entry.argtypes = [ctypes.c_void_p]

    def launch(self, chain=(), scalars=(), **named):
        abi = self.artifact.abi
        blob = bytearray(abi.struct_bytes)
        keep = []  # the arrays stay alive through the call
        for field in abi.fields:
            if field.kind == _F.KIND_TENSOR:
                array = named.pop(field.name, None)
                if array is None:
                    if not field.may_be_null:
                        raise LaunchError(f"{field.name}: the kernel needs this tensor")
                    continue
                _check(field.name, array, field.dtype, field.shape)
                keep.append(array)
                struct.pack_into("P", blob, field.offset, array.ctypes.data)
            elif field.kind == _F.KIND_INT64:
                value = named.pop(field.name, field.value)
                if value != field.value:
                    raise LaunchError(f"{field.name}: {value}; the kernel was built for "
                                      f"{field.value}")
                struct.pack_into("q", blob, field.offset, field.value)
            elif field.kind == _F.KIND_FLOAT32:
                struct.pack_into("f", blob, field.offset,
                                 named.pop(field.name, field.default_value))
            elif field.kind == _F.KIND_CHAIN:
                self._pack_chain(field, abi.max_chain, list(chain), list(scalars), blob, keep)
        if named:
            raise LaunchError("no such argument: " + ", ".join(sorted(named)))
        # malloc'ed, so aligned for the struct's 8-byte fields.
        packed = ctypes.create_string_buffer(bytes(blob), len(blob))
        status = self._entry(ctypes.addressof(packed))
        if status != 0:
            raise RuntimeError(f"{self.artifact.entry} returned status {status}")

    @staticmethod
    def _pack_chain(field, max_chain, tensors, scalars, blob, keep):
        tensor_slots = [s for s in field.chain if s.tensor]
        scalar_slots = [s for s in field.chain if s.scalar]
        if len(tensors) != len(tensor_slots):
            raise LaunchError(f"chain: {len(tensors)} tensors given, the chain "
                              f"({', '.join(s.op for s in field.chain)}) reads "
                              f"{len(tensor_slots)}")
        if len(scalars) != len(scalar_slots):
            raise LaunchError(f"chain: {len(scalars)} scalars given, the chain reads "
                              f"{len(scalar_slots)}")
        tensor_at = field.offset
        scalar_at = field.offset + 8 * max_chain
        tensors, scalars = iter(tensors), iter(scalars)
        for i, slot in enumerate(field.chain):
            if slot.tensor:
                array = next(tensors)
                _check(f"chain[{i}] ({slot.op})", array, slot.dtype, slot.shape)
                keep.append(array)
                struct.pack_into("P", blob, tensor_at + 8 * i, array.ctypes.data)
            if slot.scalar:
                struct.pack_into("f", blob, scalar_at + 4 * i, float(next(scalars)))
