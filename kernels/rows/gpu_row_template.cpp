// The row-wise GPU templates (softmax, rmsnorm, layernorm): one shape of
// search space (block size, rows per block, vector width, unroll) plus each
// op's own algorithm choices. The key's prologue is applied as x is loaded. See
// kernels/tt/rows.h for how a block walks its rows.
#include <algorithm>

#include "kernels/core/kernel_key.h"
#include "kernels/rows/gpu_row_template.h"

namespace tiletune::kernels::gpu {

RowKernelDefinition::RowKernelDefinition(std::string_view op_name, std::vector<Parameter> choices)
    : name("gpu_" + std::string(op_name) + "_rows"),
      op(op_name),
      header("ops/" + op + "/device/" + op + "_rows.h"),
      tuned("tt::" + op + "_rows"),
      naive("tt::" + op + "_naive"),
      algorithm(std::move(choices)) {}

namespace {

// Vectors a thread may hold per chunk of a row.
constexpr int64_t kMaxUnroll = 8;
// Floats of its rows a block may hold in registers: a quarter of a 64K
// register file, which keeps 1024-thread blocks (64 registers a thread on
// NVIDIA) from spilling.
constexpr int64_t kMaxRowCacheFloats = 16384;
// Threads of the baseline's blocks: a common choice of eager frameworks.
constexpr int64_t kNaiveThreads = 256;
// Shared memory a one-pass block leaves for its static reduction scratch
// (at most rows_per_block * warps floats: 512 bytes).
constexpr int64_t kStaticScratchBytes = 1024;
// The largest block that keeps its rows in shared memory: at 1024 threads
// (64 registers each on NVIDIA) a layernorm writing its residual sum spills
// with the cache's addresses on top of a full chunk (ptxas, sm_90).
constexpr int64_t kMaxSharedRowThreads = 512;
// Persistent grids (blocks per SM/CU) the space offers, and the fewest
// blocks a one-block-per-row-group grid must have for them to be worth
// trying: more than any current GPU keeps resident at once (H200: 132 SMs x
// 2 blocks of 1024 threads), so that a persistent grid really is smaller.
const std::vector<int64_t> kPersistentGrids = {0, 1, 2, 4};
constexpr int64_t kPersistentMinBlocks = 1024;

int64_t CeilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

int64_t RoundUp(int64_t value, int64_t multiple) {
  return CeilDiv(value, multiple) * multiple;
}

// The fewest vectors per thread that hold a row of `cols` in one chunk,
// rounded up to a power of two, at most kMaxUnroll and within
// kMaxRowCacheFloats for the block.
int64_t UnrollFor(int64_t cols, const Variant& v) {
  const int64_t threads = v.at("threads"), vec = v.at("vec");
  const int64_t per_row = threads / v.at("rows_per_block");
  const int64_t most = std::min(kMaxUnroll, kMaxRowCacheFloats / (threads * vec));
  int64_t unroll = 1;
  while (unroll < most && unroll * per_row * vec < cols) unroll *= 2;
  return unroll;
}

// Columns of a row one chunk covers.
int64_t ChunkOf(const Variant& v) {
  return v.at("threads") / v.at("rows_per_block") * v.at("vec") * v.at("unroll");
}

// Dynamic shared memory of a variant: a one-pass block keeps rows longer
// than a chunk there, as f32.
int64_t RowCacheBytes(int64_t cols, const Variant& v) {
  if (v.at("one_pass") == 0 || cols <= ChunkOf(v)) return 0;
  return v.at("rows_per_block") * cols * static_cast<int64_t>(sizeof(float));
}

class GpuRowKernel final : public KernelTemplate {
 public:
  GpuRowKernel(RowKernelDefinition definition, const GpuVendor& vendor)
      : def_(std::move(definition)), vendor_(vendor) {}

  std::string_view name() const override { return def_.name; }
  std::string_view backend() const override { return vendor_.backend; }

  std::optional<std::string> Unsupported(const v1::KernelKey& key) const override {
    if (key.op() != def_.op) {
      return std::string(def_.name) + " serves " + std::string(def_.op) + ", not " + key.op();
    }
    return UnsupportedGpuTypes(key);
  }

  SearchSpace Space(const v1::KernelKey& key, const DeviceDescription& device) const override {
    const int64_t rows = DimSize(key, "rows").value_or(1), cols = DimSize(key, "cols").value_or(1);
    const int64_t warp = device.warp_size;
    const std::string w = std::to_string(warp);
    SearchSpace space;
    space.Add("threads", {64, 128, 256, 512, 1024})
        .Add("rows_per_block", {1, 2, 4})
        .Add("vec", VectorWidths(key))
        .Add("unroll", {1, 2, 4, 8})
        .Add("one_pass", {0, 1})
        .Add("persistent", kPersistentGrids);
    for (const auto& p : def_.algorithm) space.Add(p.name, p.values);
    space.Require("vec divides cols (vector loads stay aligned)",
                  [cols](const Variant& v) { return cols % v.at("vec") == 0; });
    space.Require("rows_per_block <= rows",
                  [rows](const Variant& v) { return v.at("rows_per_block") <= rows; });
    space.Require("several rows per block get one warp each: threads = rows_per_block * " + w,
                  [warp](const Variant& v) {
                    return v.at("rows_per_block") == 1 ||
                           v.at("threads") == v.at("rows_per_block") * warp;
                  });
    space.Require("several rows per block only when a warp holds a row (cols <= " + w +
                      " * vec * " + std::to_string(kMaxUnroll) + ")",
                  [warp, cols](const Variant& v) {
                    return v.at("rows_per_block") == 1 || cols <= warp * v.at("vec") * kMaxUnroll;
                  });
    space.Require("no warp of a row is idle: threads per row * vec <= cols rounded up to " + w +
                      " * vec (or the smallest block, 64 threads)",
                  [warp, cols](const Variant& v) {
                    const int64_t per_row = v.at("threads") / v.at("rows_per_block");
                    return v.at("threads") == 64 ||
                           per_row * v.at("vec") <= RoundUp(cols, warp * v.at("vec"));
                  });
    space.Require("one_pass: unroll is the fewest vectors per thread that hold the row (at most " +
                      std::to_string(kMaxUnroll) + ", and " + std::to_string(kMaxRowCacheFloats) +
                      " floats per block), the rest of a longer row waits in shared memory",
                  [cols](const Variant& v) {
                    return v.at("one_pass") == 0 || v.at("unroll") == UnrollFor(cols, v);
                  });
    space.Require("one_pass: the block's rows fit in " +
                      std::to_string(device.max_shared_bytes_per_block) + " bytes of shared memory",
                  [cols, limit = device.max_shared_bytes_per_block](const Variant& v) {
                    return RowCacheBytes(cols, v) + kStaticScratchBytes <= limit;
                  });
    space.Require("one_pass through shared memory: at most " +
                      std::to_string(kMaxSharedRowThreads) + " threads",
                  [cols](const Variant& v) {
                    return RowCacheBytes(cols, v) == 0 || v.at("threads") <= kMaxSharedRowThreads;
                  });
    space.Require(
        "multi-pass: the largest unroll that takes several chunks per row (half the "
        "one-pass unroll where that holds the row)",
        [cols](const Variant& v) {
          if (v.at("one_pass") == 1) return true;
          Variant one_pass = v;
          one_pass["unroll"] = UnrollFor(cols, v);
          const int64_t unroll =
              ChunkOf(one_pass) >= cols ? one_pass["unroll"] / 2 : one_pass["unroll"];
          return v.at("unroll") == unroll && cols > ChunkOf(v);
        });
    space.Require("a persistent grid only for more than " + std::to_string(kPersistentMinBlocks) +
                      " row groups",
                  [rows](const Variant& v) {
                    return v.at("persistent") == 0 ||
                           CeilDiv(rows, v.at("rows_per_block")) > kPersistentMinBlocks;
                  });
    for (const auto& p : def_.algorithm) {
      space.Require(
          p.name + " only for multi-pass kernels (which read a row more than once)",
          [name = p.name](const Variant& v) { return v.at(name) == 0 || v.at("one_pass") == 0; });
    }
    return space;
  }

  KernelSource Source(const v1::KernelKey& key, const Variant& variant) const override {
    const int64_t rows = DimSize(key, "rows").value_or(1), cols = DimSize(key, "cols").value_or(1);
    GpuKernelSpec spec = Spec(key, def_.tuned, std::string(def_.name));
    for (const char* p : {"threads", "rows_per_block", "vec", "unroll", "one_pass"}) {
      spec.config.emplace_back(p, RequiredParam(variant, def_.name, p));
    }
    for (const auto& p : def_.algorithm) {
      spec.config.emplace_back(p.name, RequiredParam(variant, def_.name, p.name));
    }
    // Blocks stride over the row groups, so a persistent grid is the same
    // code launched smaller: one entry (and one compile) for every grid.
    Variant code = variant;
    code.erase("persistent");
    spec.entry = GpuEntry(def_.name, code);
    spec.block = {variant.at("threads"), 1, 1};
    spec.grid = {CeilDiv(rows, variant.at("rows_per_block")), 1, 1};
    spec.blocks_per_compute_unit = RequiredParam(variant, def_.name, "persistent");
    spec.shared_memory_bytes = RowCacheBytes(cols, variant);
    return GenerateGpuSource(key, vendor_, spec, PlantedFault(variant));
  }

  Baseline BaselineFor(const v1::KernelKey& key, const DeviceDescription&) const override {
    const std::string name = std::string(vendor_.backend) + "-naive";
    GpuKernelSpec spec = Spec(key, def_.naive, name);
    spec.entry = GpuEntry(name + "-" + std::string(def_.op), {});
    spec.config.emplace_back("threads", kNaiveThreads);
    spec.block = {kNaiveThreads, 1, 1};
    spec.grid = {DimSize(key, "rows").value_or(1), 1, 1};
    return {name, GenerateGpuSource(key, vendor_, spec)};
  }

 private:
  // Every row kernel's Config says whether it writes its prologue's output.
  GpuKernelSpec Spec(const v1::KernelKey& key, std::string function,
                     std::string kernel_name) const {
    GpuKernelSpec spec;
    spec.kernel_name = std::move(kernel_name);
    spec.types = InputOutputTypes(key);
    spec.header = def_.header;
    spec.function = std::move(function);
    spec.takes_prologue = true;
    spec.config.emplace_back("prologue_out", key.write_prologue_output() ? 1 : 0);
    return spec;
  }

  RowKernelDefinition def_;
  GpuVendor vendor_;
};

}  // namespace

std::unique_ptr<KernelTemplate> MakeGpuRowTemplate(RowKernelDefinition definition,
                                                   const GpuVendor& vendor) {
  return std::make_unique<GpuRowKernel>(std::move(definition), vendor);
}

}  // namespace tiletune::kernels::gpu
