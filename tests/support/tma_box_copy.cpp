#include "tests/support/tma_box_copy.h"

#include <cstddef>
#include <string_view>

#include "kernels/ops/gemm/gemm_args.h"

namespace tiletune::testing {

// tests/support/tma_box_copy.cu, embedded (CMakeLists.txt).
std::string_view TmaBoxCopyText(std::string_view name);

std::string TmaBoxCopySource(const TmaBoxCopy& copy) {
  return "#define TT_TEST_ELEMENT_BYTES " + std::to_string(copy.element_bytes) +
         "\n#define TT_TEST_BOX_INNER " + std::to_string(copy.box_inner) +
         "\n#define TT_TEST_BOX_ROWS " + std::to_string(copy.box_rows) +
         "\n#define TT_TEST_SWIZZLE_BYTES " + std::to_string(copy.swizzle_bytes) + "\n" +
         std::string(TmaBoxCopyText("tma_box_copy.cu"));
}

v1::LaunchGeometry TmaBoxCopyLaunch(const TmaBoxCopy& copy, int64_t m, int64_t k, int64_t batch) {
  v1::LaunchGeometry launch;
  launch.add_grid((k + copy.box_inner - 1) / copy.box_inner);
  launch.add_grid((m + copy.box_rows - 1) / copy.box_rows);
  launch.add_grid(batch);
  launch.add_block(128);
  v1::TensorMapArgument& map = *launch.add_tensor_maps();
  map.set_tensor("a");
  map.set_offset(offsetof(tt_gemm_tma_args, a_map));
  map.set_box_inner(copy.box_inner);
  map.set_box_rows(copy.box_rows);
  map.set_swizzle_bytes(copy.swizzle_bytes);
  launch.set_argument_bytes(sizeof(tt_gemm_tma_args));
  return launch;
}

}  // namespace tiletune::testing
