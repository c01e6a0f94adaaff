"""numpy arrays and torch tensors as the launch packer sees them
(launch_abi.TensorView); torch is imported only for torch tensors."""

from tiletune.launch_abi import TensorView
from tiletune.v1 import kernel_key_pb2

_K = kernel_key_pb2
_NUMPY_DTYPES = {"float32": _K.DTYPE_F32, "float64": _K.DTYPE_F64, "float16": _K.DTYPE_F16}
_TORCH_DTYPES = {"torch.float32": _K.DTYPE_F32, "torch.float64": _K.DTYPE_F64,
                 "torch.float16": _K.DTYPE_F16, "torch.bfloat16": _K.DTYPE_BF16}


def dtype_name(dtype):
    return _K.DType.Name(dtype).removeprefix("DTYPE_").lower()


def view(obj):
    """A TensorView of a numpy array or a torch tensor; None otherwise."""
    if type(obj).__module__ == "numpy":
        return TensorView(obj.ctypes.data, _NUMPY_DTYPES.get(obj.dtype.name, _K.DTYPE_UNSPECIFIED),
                          obj.size, obj.flags["C_CONTIGUOUS"], "cpu")
    if type(obj).__module__.startswith("torch"):
        device = obj.device
        return TensorView(obj.data_ptr(), _TORCH_DTYPES.get(str(obj.dtype), _K.DTYPE_UNSPECIFIED),
                          obj.numel(), obj.is_contiguous(),
                          "cpu" if device.type == "cpu" else f"{device.type}:{device.index}")
    return None
