// A kernel's launch geometry as executors launch it: the grid as recorded,
// or a persistent grid sized by the device's SM/CU count; a TMA kernel's
// tensor maps and argument size.
#include <gtest/gtest.h>

#include "runtime/device_executor.h"

namespace tiletune::runtime {
namespace {

v1::LaunchGeometry Launch(int64_t blocks, int32_t per_unit) {
  v1::LaunchGeometry launch;
  for (int64_t g : {blocks, int64_t{1}, int64_t{3}}) launch.add_grid(g);
  for (int64_t b : {256, 1, 1}) launch.add_block(b);
  launch.set_shared_memory_bytes(4096);
  launch.set_blocks_per_compute_unit(per_unit);
  return launch;
}

TEST(LaunchGeometry, TheRecordedGridAsIs) {
  KernelArguments args;
  SetLaunchGeometry(Launch(16384, 0), 132, args);
  EXPECT_EQ(args.grid, (std::array<uint32_t, 3>{16384, 1, 3}));
  EXPECT_EQ(args.block, (std::array<uint32_t, 3>{256, 1, 1}));
  EXPECT_EQ(args.shared_memory_bytes, 4096u);
}

TEST(LaunchGeometry, APersistentGridIsBlocksPerComputeUnitTimesTheDevicesUnits) {
  KernelArguments args;
  SetLaunchGeometry(Launch(16384, 2), 132, args);
  EXPECT_EQ(args.grid[0], 264u);
  SetLaunchGeometry(Launch(16384, 4), 110, args);
  EXPECT_EQ(args.grid[0], 440u);
  // Never more blocks than the work has.
  SetLaunchGeometry(Launch(100, 4), 132, args);
  EXPECT_EQ(args.grid[0], 100u);
  // Missing dimensions are 1.
  v1::LaunchGeometry bare;
  bare.add_grid(7);
  SetLaunchGeometry(bare, 132, args);
  EXPECT_EQ(args.grid, (std::array<uint32_t, 3>{7, 1, 1}));
  EXPECT_EQ(args.block, (std::array<uint32_t, 3>{1, 1, 1}));
}

TEST(LaunchGeometry, ATmaKernelsTensorMapsAndArgumentSizeComeAlong) {
  v1::LaunchGeometry launch = Launch(64, 0);
  v1::TensorMapArgument& map = *launch.add_tensor_maps();
  map.set_tensor("b");
  map.set_offset(448);
  map.set_box_inner(64);
  map.set_box_rows(256);
  map.set_swizzle_bytes(128);
  launch.set_argument_bytes(704);
  KernelArguments args;
  SetLaunchGeometry(launch, 132, args);
  ASSERT_EQ(args.tensor_maps.size(), 1);
  EXPECT_EQ(args.tensor_maps[0].SerializeAsString(), map.SerializeAsString());
  EXPECT_EQ(args.argument_bytes, 704);
  // The next kernel's geometry replaces them.
  SetLaunchGeometry(Launch(64, 0), 132, args);
  EXPECT_TRUE(args.tensor_maps.empty());
  EXPECT_EQ(args.argument_bytes, 0);
}

}  // namespace
}  // namespace tiletune::runtime
