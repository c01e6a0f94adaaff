// How `tiletune lookup` shows a record's launch geometry
// (client/cli/record_format), a TMA kernel's argument and tensor maps
// included.
#include "client/cli/record_format.h"

#include <gtest/gtest.h>

#include <sstream>

namespace tiletune::cli {
namespace {

TEST(RecordFormat, ALookupShowsATmaKernelsArgumentAndTensorMaps) {
  v1::KernelKey key;
  key.set_op("gemm");
  v1::LookupResponse response;
  response.set_result(v1::LookupResponse::RESULT_HIT);
  v1::LaunchGeometry& launch = *response.mutable_record()->mutable_config()->mutable_launch();
  response.mutable_record()->mutable_config()->set_kernel_name("gemm_tma_ws");
  launch.add_grid(132);
  launch.add_block(384);
  launch.set_shared_memory_bytes(197632);
  launch.set_blocks_per_compute_unit(1);
  for (const auto& [tensor, offset, rows, swizzle] :
       {std::tuple{"a", 320, 128, 128}, std::tuple{"b", 448, 256, 0}}) {
    v1::TensorMapArgument& map = *launch.add_tensor_maps();
    map.set_tensor(tensor);
    map.set_offset(offset);
    map.set_box_inner(64);
    map.set_box_rows(rows);
    map.set_swizzle_bytes(swizzle);
  }
  launch.set_argument_bytes(704);
  std::ostringstream out;
  PrintLookup(key, response, out);
  EXPECT_NE(out.str().find("grid 132, persistent: at most 1 blocks per SM/CU, block 384, 193 KiB "
                           "shared, 704 B argument, tensor map of a at byte 320: box 64x128, "
                           "128 B swizzle, tensor map of b at byte 448: box 64x256, no swizzle"),
            std::string::npos)
      << out.str();
}

}  // namespace
}  // namespace tiletune::cli
