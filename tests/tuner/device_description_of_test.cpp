// The daemon's description of a device, from what its backend read.
#include "tuner/device_description_of.h"

#include <gtest/gtest.h>

namespace tiletune::tuner {
namespace {

runtime::DeviceInfo Gpu(const std::string& backend, const std::string& arch, int compute_units,
                        int64_t max_shared = 0) {
  runtime::DeviceInfo device;
  device.backend = backend;
  device.fingerprint.set_arch(arch);
  device.fingerprint.set_compute_units(compute_units);
  device.fingerprint.set_max_shared_bytes_per_block(max_shared);
  return device;
}

TEST(DeviceDescriptionOf, AnH200IsTheNamedH200) {
  const kernels::DeviceDescription d = DeviceDescriptionOf(Gpu("cuda", "sm_90", 132, 232448));
  const kernels::DeviceDescription& h200 = kernels::kH200;
  EXPECT_EQ(d.backend, h200.backend);
  EXPECT_EQ(d.arch, h200.arch);
  EXPECT_EQ(d.warp_size, h200.warp_size);
  EXPECT_EQ(d.compute_units, h200.compute_units);
  EXPECT_EQ(d.max_shared_bytes_per_block, h200.max_shared_bytes_per_block);
  EXPECT_EQ(d.has_sm90a, h200.has_sm90a);
  EXPECT_EQ(d.max_registers_per_lane, h200.max_registers_per_lane);
}

TEST(DeviceDescriptionOf, TheArchsLimitWhereTheDriverDidNotSay) {
  EXPECT_EQ(DeviceDescriptionOf(Gpu("cuda", "sm_90", 132)).max_shared_bytes_per_block, 227 * 1024);
  const kernels::DeviceDescription a100 = DeviceDescriptionOf(Gpu("cuda", "sm_80", 108));
  EXPECT_EQ(a100.max_shared_bytes_per_block, 163 * 1024);
  EXPECT_FALSE(a100.has_sm90a);
  EXPECT_EQ(a100.compute_units, 108);
  // The driver's number wins.
  EXPECT_EQ(DeviceDescriptionOf(Gpu("cuda", "sm_80", 108, 100 * 1024)).max_shared_bytes_per_block,
            100 * 1024);
}

TEST(DeviceDescriptionOf, AmdWavesFollowTheArch) {
  const kernels::DeviceDescription mi200 = DeviceDescriptionOf(Gpu("hip", "gfx90a", 110, 65536));
  EXPECT_EQ(mi200.warp_size, 64);
  EXPECT_EQ(mi200.max_shared_bytes_per_block, kernels::kMi200.max_shared_bytes_per_block);
  EXPECT_EQ(mi200.compute_units, kernels::kMi200.compute_units);
  EXPECT_FALSE(mi200.has_sm90a);
  // VGPRs and AGPRs together.
  EXPECT_EQ(mi200.max_registers_per_lane, 512);
  EXPECT_EQ(DeviceDescriptionOf(Gpu("hip", "gfx1100", 48)).warp_size, 32);
}

TEST(DeviceDescriptionOf, CdnaLdsFromTheNamedArchWhereTheDriverDidNotSay) {
  const kernels::DeviceDescription mi355x = DeviceDescriptionOf(Gpu("hip", "gfx950", 256));
  EXPECT_EQ(mi355x.max_shared_bytes_per_block, kernels::kMi355x.max_shared_bytes_per_block);
  EXPECT_EQ(mi355x.warp_size, 64);
  EXPECT_EQ(DeviceDescriptionOf(Gpu("hip", "gfx942", 304)).max_shared_bytes_per_block, 64 * 1024);
  EXPECT_EQ(DeviceDescriptionOf(Gpu("hip", "gfx950", 256, 65536)).max_shared_bytes_per_block,
            65536);
}

}  // namespace
}  // namespace tiletune::tuner
