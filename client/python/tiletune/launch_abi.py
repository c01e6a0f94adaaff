"""A served kernel's argument struct packed from its launch ABI (the
KernelAbi the daemon served with it) alone: the same for host kernels on
numpy arrays and GPU kernels on torch tensors. docs/kernel-abi.md spells out
each op's struct."""

import struct

from tiletune.v1 import artifacts_pb2, kernel_key_pb2

_F = artifacts_pb2.AbiField
_K = kernel_key_pb2
# The launch ABI versions this client packs.
KNOWN_ABI_VERSIONS = (2, 3)  # each op's struct has its own: gemm's 3 added b_up


class LaunchError(ValueError):
    """An argument the kernel cannot take: named, before anything runs."""


def check_loadable(artifact, format, passing, what):
    """Raises LaunchError unless `artifact` is code of `format` whose entry
    takes its struct as `passing` says (`what`: "a CUBIN"), with tensor maps
    only where it is a CUBIN."""
    names = artifacts_pb2.KernelArtifact.Format, artifacts_pb2.KernelAbi.Passing
    if artifact.format != format:
        raise LaunchError(f"not {what}: {names[0].Name(artifact.format)}")
    if artifact.abi.passing != passing:
        raise LaunchError(f"{what} takes its struct {names[1].Name(passing)}; this ABI says "
                          + names[1].Name(artifact.abi.passing))
    launch = artifact.launch
    if format != artifacts_pb2.KernelArtifact.FORMAT_CUBIN and (
            launch.tensor_maps or launch.argument_bytes):
        raise LaunchError("the launch geometry has tensor maps, which only CUBINs take")


# TMA kernels (docs/kernel-abi.md, "TMA kernels"): the kernel's one argument
# is the op's struct, then a CUtensorMap per LaunchGeometry.tensor_maps entry
# at its offset, argument_bytes in all. The twin of
# runtime/cuda/tensor_map.cpp: the same rules, the same messages.
TENSOR_MAP_BYTES = 128
_TENSOR_MAP_ALIGNMENT = 64
_MAX_ARGUMENT_BYTES = 4096  # cuLaunchKernel's classic limit on kernel parameters
_MAX_BOX_SIDE = 256
_MAX_DIM = 1 << 32
_STRIDE_LIMIT = 1 << 40
_SWIZZLES = {0: 0, 32: 1, 64: 2, 128: 3}  # bytes: CU_TENSOR_MAP_SWIZZLE_*
# dtype: (CU_TENSOR_MAP_DATA_TYPE_*, bytes)
_MAP_ELEMENTS = {_K.DTYPE_F32: (7, 4), _K.DTYPE_F16: (6, 2), _K.DTYPE_BF16: (9, 2)}


class TensorMapPlan:
    """One map of a kernel's argument checked against the tensor it
    describes: where it goes (`offset`), where the struct holds its tensor's
    address (`field_offset`), and cuTensorMapEncodeTiled's arguments (rank 3,
    innermost first)."""

    __slots__ = ("tensor", "field_offset", "offset", "data_type", "dims", "strides", "box",
                 "swizzle")

    def __init__(self, tensor, field_offset, offset, data_type, dims, strides, box, swizzle):
        self.tensor, self.field_offset, self.offset = tensor, field_offset, offset
        self.data_type, self.dims, self.strides = data_type, dims, strides
        self.box, self.swizzle = box, swizzle


def _entry(i, m):
    return f"tensor_maps[{i}] ({m.tensor or 'no tensor'})"


def tensor_map_layout_error(maps, argument_bytes, struct_bytes):
    """Why `maps` cannot follow a struct of `struct_bytes` in an argument of
    `argument_bytes`, naming the entry and the rule; None when they can."""
    argument = f"argument_bytes {argument_bytes}"
    if not maps:
        return None if argument_bytes == 0 else \
            f"{argument} without tensor maps (0 unless the kernel takes some)"
    if argument_bytes <= struct_bytes:
        return f"{argument} leaves no room for tensor maps after the {struct_bytes}-byte struct"
    if argument_bytes > _MAX_ARGUMENT_BYTES:
        return (f"{argument} is past cuLaunchKernel's limit of {_MAX_ARGUMENT_BYTES} bytes of "
                "kernel parameters")
    if argument_bytes % _TENSOR_MAP_ALIGNMENT:
        return f"{argument} is not a multiple of 64, as a struct holding tensor maps is"
    for i, m in enumerate(maps):
        entry = _entry(i, m)
        if not m.tensor:
            return f"{entry}: names no tensor"
        if m.offset % _TENSOR_MAP_ALIGNMENT:
            return f"{entry}: offset {m.offset} is not a multiple of 64"
        if m.offset < struct_bytes:
            return f"{entry}: offset {m.offset} overlaps the {struct_bytes}-byte struct"
        if m.offset + TENSOR_MAP_BYTES > argument_bytes:
            return f"{entry}: offset {m.offset} puts its 128 bytes past {argument}"
        for j in range(i):
            if abs(maps[j].offset - m.offset) < TENSOR_MAP_BYTES:
                return f"{entry}: offset {m.offset} overlaps {_entry(j, maps[j])}"
        for name, side in (("box_inner", m.box_inner), ("box_rows", m.box_rows)):
            if not 1 <= side <= _MAX_BOX_SIDE:
                return f"{entry}: {name} {side} is outside 1..256"
        if m.swizzle_bytes not in _SWIZZLES:
            return f"{entry}: swizzle_bytes {m.swizzle_bytes} is none of 0, 32, 64, 128"
    return None


def _map_encoding(m, field):
    """cuTensorMapEncodeTiled's (data type, dims, strides, box) for map `m`
    of the tensor `field` describes, as stored: [batch][rows][inner], inner
    its contiguous extent, dense (the ABI fixes every leading dimension to
    the key's dense one); or the rule it breaks, as text."""
    if field.dtype not in _MAP_ELEMENTS:
        return (f"its tensor's dtype {_K.DType.Name(field.dtype)} has no tensor map element type "
                "here (bf16, f16, f32)")
    data_type, element = _MAP_ELEMENTS[field.dtype]
    shape = list(field.shape)
    if not shape:
        return "its tensor has no shape"
    for size in shape:
        if not 1 <= size <= _MAX_DIM:
            return f"its tensor's dimension of {size} is outside 1..2^32"
    last, second = shape[-1], (shape[-2] if len(shape) >= 2 else 1)
    col_major = len(shape) >= 2 and field.layout == _K.LAYOUT_COL_MAJOR
    inner, rows = (second, last) if col_major else (last, second)
    batch = _shape_numel(shape[:-2])
    view = list(m.view)
    if view:
        viewed = _shape_numel([max(size, 0) for size in view])
        elements = _shape_numel(shape)
        if len(view) != 3 or viewed != elements:
            return (f"view of {len(view)} sizes holding {viewed} elements is not "
                    f"[batch][rows][inner] of its tensor's {elements}")
        batch, rows, inner = view
    if batch > _MAX_DIM:
        return f"its tensor's batch of {batch} entries is past 2^32"
    row_stride = inner * element
    if row_stride % 16:
        return (f"row stride of {row_stride} bytes ({inner} elements of {element}) is not a "
                "multiple of 16 bytes")
    batch_stride = row_stride * rows
    if batch_stride >= _STRIDE_LIMIT:
        return f"batch stride of {batch_stride} bytes is not below 2^40"
    inner_box = m.box_inner * element
    if inner_box % 16:
        return (f"box_inner of {m.box_inner} elements is {inner_box} bytes, not a multiple of "
                "16 bytes")
    if m.swizzle_bytes and inner_box > m.swizzle_bytes:
        return (f"box_inner of {m.box_inner} elements is {inner_box} bytes, wider than its "
                f"{m.swizzle_bytes}-byte swizzle")
    return data_type, (inner, rows, batch), (row_stride, batch_stride), (m.box_inner, m.box_rows, 1)


def plan_tensor_maps(launch, abi):
    """The TensorMapPlans of `launch` for the tensors of `abi`, every
    precondition of cuTensorMapEncodeTiled but the address checked; raises
    LaunchError naming the entry, its tensor and the rule."""
    maps = list(launch.tensor_maps)
    error = tensor_map_layout_error(maps, launch.argument_bytes, abi.struct_bytes)
    if error:
        raise LaunchError(error)
    tensors = {f.name: f for f in abi.fields if f.kind == _F.KIND_TENSOR}
    plan = []
    for i, m in enumerate(maps):
        field = tensors.get(m.tensor)
        if field is None:
            raise LaunchError(f"{_entry(i, m)}: {abi.struct_name} has no tensor of that name")
        encoding = _map_encoding(m, field)
        if isinstance(encoding, str):
            raise LaunchError(f"{_entry(i, m)}: {encoding}")
        data_type, dims, strides, box = encoding
        plan.append(TensorMapPlan(m.tensor, field.offset, m.offset, data_type, dims, strides, box,
                                  _SWIZZLES[m.swizzle_bytes]))
    return plan


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
