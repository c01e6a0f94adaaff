#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tiletune/v1/kernel_key.pb.h"

namespace tiletune::kernels {

struct OpSpec;

// Limits on what a key may describe. Owned by the daemon's config; these are
// the defaults.
struct KeyLimits {
  int64_t max_dim = int64_t{1} << 20;       // any single dimension
  int64_t max_elements = int64_t{1} << 32;  // elements of the largest tensor
  int max_chain_length = 16;                // prologue + chain ops of one kernel
  int max_graph_ops = 32;                   // ops of an op graph key
  int max_graph_tensors = 32;
  // Bytes of any name a key (or a request) carries: ops, dims, tensors, job
  // names. They are stored, echoed in answers and spelled into canonical
  // strings.
  int max_name_bytes = 256;
};

// A rejected request field: `field` is the path in the request message
// (e.g. "key.shape[1].size") so clients can point at it.
struct FieldError {
  std::string field;
  std::string message;
  std::string ToString() const { return field + ": " + message; }
};

// At most the first `max_bytes` bytes of `text`, cut on a UTF-8 character
// boundary, with "…" marking a cut.
std::string Abbreviated(std::string_view text, std::size_t max_bytes);

// A request value quoted in a message: at most a short prefix and, when cut,
// its size ("'aaaa…' (8192 bytes)"), so that a huge value cannot make the
// message too big to send. Every message that shows a client's value quotes
// it with this.
std::string Quoted(std::string_view value);

// An error for `field` when `value` is longer than `max_bytes`, the setting
// named `limit`.
std::optional<FieldError> CheckLength(std::string_view value, int64_t max_bytes,
                                      std::string_view limit, const std::string& field);

// The ops whose keys we understand, and the epilogue ops a chain may hold.
// `elementwise` is a kernel that only runs its prologue and chain over x.
bool IsKnownOp(std::string_view op);
// An op graph (KernelKey.ops) rather than one kernel's key.
bool IsGraphKey(const v1::KernelKey& key);
bool IsKnownChainOp(std::string_view op);

// Checks the length of every name, then op, chain, dtypes, layouts and shape
// against the op's rules and the limits, then that the runtime scalars
// (chain, prologue and graph ops) are finite: a NaN or Infinity would poison
// every validation of a job tuning the key. One walk of the key that builds
// no string unless it fails. `prefix` is prepended to field paths ("key",
// "spec.kernels[2]").
std::optional<FieldError> ValidateKernelKey(const v1::KernelKey& key, const KeyLimits& limits,
                                            const std::string& prefix = "key");

// Fills what a client may leave out (accumulate dtype, output dtype, row-major
// layouts) so that equal problems get equal canonical strings.
v1::KernelKey NormalizeKernelKey(const v1::KernelKey& key);

// A stable text form of a normalized key, used as the database key and the
// cache key. Scalar arguments of chain ops (the `scale` value) are runtime
// arguments and are left out; allow_tf32 appears only when true; an
// attention key spells its mask kind and sequence layout, and lse when set. Throws
// std::invalid_argument for a graph key: only the kernels of its plan
// (kernels/fusion) have keys.
std::string CanonicalKeyString(const v1::KernelKey& key);

// The ops whose runtime arguments a kernel reads from its chain tensors and
// scalars, in that order: the prologue's, then the epilogue chain's.
std::vector<v1::ChainOp> ChainArgumentOps(const v1::KernelKey& key);

// A dimension by name; nullopt if the key has none.
std::optional<int64_t> DimSize(const v1::KernelKey& key, std::string_view name);

// A dimension of the op `spec` by name: its size in the key, else its
// default size (0 for a name the op does not have).
int64_t DimOrDefault(const v1::KernelKey& key, const OpSpec& spec, std::string_view name);

// Whether the key lays `tensor` out column-major (row-major when it does not
// say).
bool IsColMajor(const v1::KernelKey& key, std::string_view tensor);

// Short lower-case names used in canonical strings, the CLI and job files.
std::string_view DTypeName(v1::DType dtype);
std::optional<v1::DType> ParseDType(std::string_view name);
std::string_view LayoutName(v1::Layout layout);
std::optional<v1::Layout> ParseLayout(std::string_view name);
// attention's mask kinds (none, causal, tensor) and sequence layouts (bshd,
// bhsd).
std::string_view AttentionMaskName(v1::AttentionMask mask);
std::string_view SequenceLayoutName(v1::SequenceLayout layout);
// gemm's gates (none, swiglu).
std::string_view GateName(v1::Gate gate);

// Floating-point operations and bytes the problem must do and move at the
// least; used for bandwidth/TFLOP and roofline figures. The key must be
// valid (ValidateKernelKey); throws std::invalid_argument for an unknown op.
int64_t ProblemFlops(const v1::KernelKey& key);
// Each input read once and each output written once, in the key's dtypes:
// gemm A, B and C times batch; a row op's x and y, the norms' weight (and
// layernorm's shift) per column; the prologue's and chain's tensors (bias one
// per column, residual_add shaped like the output); the prologue output when
// written.
int64_t ProblemBytes(const v1::KernelKey& key);

}  // namespace tiletune::kernels
