"""A served kernel's argument struct packed from its launch ABI (the
KernelAbi the daemon served with it) alone: the same for host kernels on
numpy arrays and GPU kernels on torch tensors. docs/kernel-abi.md spells out
each op's struct."""

import struct

from tiletune.v1 import artifacts_pb2

_F = artifacts_pb2.AbiField
# The launch ABI versions this client packs.
KNOWN_ABI_VERSIONS = (2,)


class LaunchError(ValueError):
    """An argument the kernel cannot take: named, before anything runs."""


def check_loadable(artifact, format, passing, what):
    """Raises LaunchError unless `artifact` is code of `format` whose entry
    takes its struct as `passing` says (`what`: "a CUBIN")."""
    names = artifacts_pb2.KernelArtifact.Format, artifacts_pb2.KernelAbi.Passing
    if artifact.format != format:
        raise LaunchError(f"not {what}: {names[0].Name(artifact.format)}")
    if artifact.abi.passing != passing:
        raise LaunchError(f"{what} takes its struct {names[1].Name(passing)}; this ABI says "
                          + names[1].Name(artifact.abi.passing))


class TensorView:
    """What the packer needs of a tensor: its address, DType, element count,
    density and where it lives ("cpu", "cuda:0")."""

    __slots__ = ("address", "dtype", "numel", "contiguous", "device")

    def __init__(self, address, dtype, numel, contiguous, device):
        self.address, self.dtype, self.numel = address, dtype, numel
        self.contiguous, self.device = contiguous, device


class BoundArguments:
    """ArgumentPacker.bind's packer: pack(addresses, floats) -> the struct."""

    __slots__ = ("_template", "_offsets", "_float_offsets", "_alignment", "count")

    def __init__(self, template, offsets, float_offsets, alignment):
        self._template, self._offsets = template, offsets
        self._float_offsets, self._alignment = float_offsets, alignment
        self.count = len(offsets)

    def pack(self, addresses, floats=()):
        if len(addresses) != self.count:
            raise LaunchError(f"{len(addresses)} tensors given, the kernel takes {self.count}")
        blob = bytearray(self._template)
        for offset, address in zip(self._offsets, addresses):
            if address % self._alignment:
                raise LaunchError(f"a tensor at {address:#x} is not aligned to "
                                  f"{self._alignment} bytes, as the kernel assumes")
            struct.pack_into("P", blob, offset, address)
        for offset, value in zip(self._float_offsets, floats):
            struct.pack_into("f", blob, offset, value)
        return blob


def _shape_numel(shape):
    n = 1
    for size in shape:
        n *= size
    return n


class ArgumentPacker:
    """Packs the struct of `abi` for one call. `view(obj)` turns a caller's
    tensor into a TensorView (None for an object it cannot take); `device`
    is where the kernel runs: every tensor must live there. The integers the
    key fixes and the default floats are laid out once; each call writes
    only its tensors (and the floats it overrides)."""

    def __init__(self, abi, view, device, dtype_name):
        if abi.version not in KNOWN_ABI_VERSIONS:
            raise LaunchError(f"launch ABI version {abi.version} is not one this client knows "
                              f"({', '.join(map(str, KNOWN_ABI_VERSIONS))})")
        self.abi = abi
        self._view = view
        self._device = device
        self._dtype_name = dtype_name
        self._alignment = abi.tensor_alignment or 1
        self._template = bytearray(abi.struct_bytes)
        self._tensors, self._ints, self._floats, self._chain = [], {}, {}, None
        for field in abi.fields:
            if field.kind == _F.KIND_TENSOR:
                self._tensors.append((field.name, field.offset, field.dtype,
                                      _shape_numel(field.shape), field.may_be_null,
                                      list(field.shape)))
            elif field.kind == _F.KIND_INT64:
                self._ints[field.name] = field.value
                struct.pack_into("q", self._template, field.offset, field.value)
            elif field.kind == _F.KIND_FLOAT32:
                self._floats[field.name] = field.offset
                struct.pack_into("f", self._template, field.offset, field.default_value)
            elif field.kind == _F.KIND_CHAIN:
                self._chain = field
        chain = self._chain.chain if self._chain is not None else []
        self.chain_tensor_slots = [i for i, s in enumerate(chain) if s.tensor]
        self.chain_scalar_slots = [i for i, s in enumerate(chain) if s.scalar]

    def _check(self, name, obj, dtype, numel, shape):
        v = self._view(obj)
        if v is None:
            raise LaunchError(f"{name}: cannot take a {type(obj).__name__} here")
        if v.device != self._device:
            raise LaunchError(f"{name}: on {v.device}, the kernel runs on {self._device}")
        if v.dtype != dtype:
            raise LaunchError(f"{name}: dtype {self._dtype_name(v.dtype)}, the kernel takes "
                              f"{self._dtype_name(dtype)}")
        if v.numel != numel:
            raise LaunchError(f"{name}: {v.numel} elements, the kernel takes shape {shape}")
        if not v.contiguous:
            raise LaunchError(f"{name}: not contiguous; the kernel reads dense tensors")
        if v.address % self._alignment:
            raise LaunchError(f"{name}: address {v.address:#x} is not aligned to "
                              f"{self._alignment} bytes, as the kernel assumes")
        return v.address

    def bind(self, tensors, floats=()):
        """A packer for callers on the hot path that have checked their
        tensors against the key themselves (dtype, size, density): it takes
        the addresses of `tensors` (field names) followed by every chain
        tensor in slot order, and values of `floats`, and checks only the
        alignment. The chain's scalars cannot be bound."""
        if self.chain_scalar_slots:
            raise LaunchError("a chain that reads scalars cannot be bound; use pack()")
        offsets = []
        for name in tensors:
            field = next((t for t in self._tensors if t[0] == name), None)
            if field is None:
                raise LaunchError(f"{name}: not a tensor of {self.abi.struct_name}")
            offsets.append(field[1])
        missing = [t[0] for t in self._tensors if not t[4] and t[0] not in tensors]
        if missing:
            raise LaunchError(f"{', '.join(missing)}: the kernel needs these tensors")
        if self.chain_tensor_slots:
            offsets += [self._chain.offset + 8 * i for i in self.chain_tensor_slots]
        float_offsets = [self._floats[name] for name in floats]
        return BoundArguments(bytes(self._template), offsets, float_offsets, self._alignment)

    def pack(self, named, chain=(), scalars=()):
        """The struct's bytes for tensors and values by field name, the
        chain's tensors and scalars in slot order."""
        blob = bytearray(self._template)
        for name, offset, dtype, numel, may_be_null, shape in self._tensors:
            obj = named.pop(name, None)
            if obj is None:
                if not may_be_null:
                    raise LaunchError(f"{name}: the kernel needs this tensor")
                continue
            struct.pack_into("P", blob, offset, self._check(name, obj, dtype, numel, shape))
        for name, fixed in self._ints.items():
            value = named.pop(name, fixed)
            if value != fixed:
                raise LaunchError(f"{name}: {value}; the kernel was built for {fixed}")
        for name, offset in self._floats.items():
            if name in named:
                struct.pack_into("f", blob, offset, float(named.pop(name)))
        if named:
            raise LaunchError("no such argument: " + ", ".join(sorted(named)))
        self._pack_chain(blob, list(chain), list(scalars))
        return blob

    def _pack_chain(self, blob, tensors, scalars):
        slots = self._chain.chain if self._chain is not None else []
        ops = ", ".join(s.op for s in slots) or "none"
        if len(tensors) != len(self.chain_tensor_slots):
            raise LaunchError(f"chain: {len(tensors)} tensors given, the chain ({ops}) reads "
                              f"{len(self.chain_tensor_slots)}")
        if len(scalars) != len(self.chain_scalar_slots):
            raise LaunchError(f"chain: {len(scalars)} scalars given, the chain ({ops}) reads "
                              f"{len(self.chain_scalar_slots)}")
        if not slots:
            return
        tensor_at = self._chain.offset
        scalar_at = tensor_at + 8 * self.abi.max_chain
        for i, obj in zip(self.chain_tensor_slots, tensors):
            slot = slots[i]
            address = self._check(f"chain[{i}] ({slot.op})", obj, slot.dtype,
                                  _shape_numel(slot.shape), list(slot.shape))
            struct.pack_into("P", blob, tensor_at + 8 * i, address)
        for i, value in zip(self.chain_scalar_slots, scalars):
            struct.pack_into("f", blob, scalar_at + 4 * i, float(value))
