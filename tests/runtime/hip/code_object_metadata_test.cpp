#include "runtime/hip/code_object_metadata.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "runtime/hip/msgpack_value.h"
#include "runtime/rtc/rtc_compiler.h"
#include "tests/runtime/hip/hip_test_kernels.h"

namespace tiletune::runtime::hip {
namespace {

using Kind = MsgpackValue::Kind;

std::string Bytes(std::initializer_list<int> bytes) {
  std::string s;
  for (int b : bytes) s.push_back(static_cast<char>(b));
  return s;
}

std::string ThrownBy(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(nothing thrown)";
}

TEST(Msgpack, DecodesTheTypesCodeObjectMetadataUses) {
  // {"a": 1, "b": [true, nil, -3, "xy"], "c": 300, "d": 1.5, "e": -200}
  const std::string bytes = Bytes({0x85, 0xa1, 'a',  0x01,                                    //
                                   0xa1, 'b',  0x94, 0xc3, 0xc0, 0xfd, 0xa2, 'x', 'y',        //
                                   0xa1, 'c',  0xcd, 0x01, 0x2c,                              //
                                   0xa1, 'd',  0xcb, 0x3f, 0xf8, 0,    0,    0,   0,   0, 0,  //
                                   0xa1, 'e',  0xd1, 0xff, 0x38});
  const MsgpackValue v = DecodeMsgpack(bytes);
  ASSERT_EQ(v.kind, Kind::kMap);
  ASSERT_EQ(v.map.size(), 5u);
  EXPECT_EQ(v.Find("a")->integer, 1);
  const MsgpackValue* b = v.Find("b");
  ASSERT_TRUE(b);
  ASSERT_EQ(b->kind, Kind::kArray);
  ASSERT_EQ(b->items.size(), 4u);
  EXPECT_TRUE(b->items[0].boolean);
  EXPECT_EQ(b->items[1].kind, Kind::kNil);
  EXPECT_EQ(b->items[2].integer, -3);
  EXPECT_EQ(b->items[3].text, "xy");
  EXPECT_EQ(v.Find("c")->integer, 300);
  EXPECT_EQ(v.Find("d")->real, 1.5);
  EXPECT_EQ(v.Find("e")->integer, -200);
  EXPECT_EQ(v.Find("z"), nullptr);
}

TEST(Msgpack, RejectsTruncatedTrailingAndOversizedInput) {
  EXPECT_NE(ThrownBy([] {
              DecodeMsgpack(Bytes({0x92, 0x01}));
            }).find("truncated"),
            std::string::npos);
  EXPECT_NE(ThrownBy([] {
              DecodeMsgpack(Bytes({0x01, 0x02}));
            }).find("after the value"),
            std::string::npos);
  // A count of four billion elements in five bytes: refused before allocating.
  EXPECT_NE(ThrownBy([] {
              DecodeMsgpack(Bytes({0xdd, 0xff, 0xff, 0xff, 0xff}));
            }).find("truncated"),
            std::string::npos);
  EXPECT_NE(ThrownBy([] {
              DecodeMsgpack(Bytes({0xc7, 0x01, 0x00, 0x00}));
            }).find("unsupported"),
            std::string::npos);
}

TEST(CodeObjectMetadata, RejectsWhatIsNotAnAmdGpuCodeObject) {
  EXPECT_NE(ThrownBy([] { ReadKernelMetadata("plain text", "k"); }).find("neither ELF"),
            std::string::npos);
  std::ifstream self("/proc/self/exe", std::ios::binary);
  std::string host_elf(4096, '\0');
  self.read(host_elf.data(), static_cast<std::streamsize>(host_elf.size()));
  EXPECT_NE(ThrownBy([&] { ReadKernelMetadata(host_elf, "k"); }).find("not a 64-bit AMD GPU ELF"),
            std::string::npos);
  EXPECT_NE(ThrownBy([&] { ReadKernelMetadata(host_elf.substr(0, 20), "k"); }).find("past the end"),
            std::string::npos);
}

TEST(CodeObjectMetadata, ResourceReportCountsRegistersSpillsAndLds) {
  KernelMetadata k;
  k.vgpr_count = 40;
  k.agpr_count = 8;
  k.vgpr_spill_count = 3;
  k.sgpr_spill_count = 2;
  k.group_segment_fixed_size = 16384;
  k.private_segment_fixed_size = 96;
  const ResourceReport r = ToResourceReport(k);
  EXPECT_EQ(r.registers, 48);
  EXPECT_EQ(r.spill_bytes, 20);
  EXPECT_EQ(r.shared_memory_bytes, 16384);
  EXPECT_EQ(r.stack_bytes, 96);
}

class CompiledCodeObject : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    auto compiler = OpenHiprtc(&why);
    if (!compiler) GTEST_SKIP() << why;
    const kernels::KernelSource source = testing::ArgsProbeSource();
    const RtcOutput out = compiler->Compile(source.code, "probe.hip", source.headers, {}, "gfx90a");
    ASSERT_TRUE(out.ok) << out.log;
    elf_ = out.binary;
  }
  std::string elf_;
};

TEST_F(CompiledCodeObject, NamesTheKernelsItHasWhenTheEntryIsMissing) {
  const std::string error = ThrownBy([&] { ReadKernelMetadata(elf_, "tt_missing"); });
  EXPECT_NE(error.find("no kernel 'tt_missing'"), std::string::npos) << error;
  EXPECT_NE(error.find("tt_args_probe"), std::string::npos) << error;
}

// The clang offload bundle layout: magic, entry count, then per entry offset,
// size, id length and id; payloads follow.
TEST_F(CompiledCodeObject, ReadsTheCodeObjectInsideAnOffloadBundle) {
  const std::string host_id = "host-x86_64-unknown-linux-gnu";
  const std::string gpu_id = "hipv4-amdgcn-amd-amdhsa--gfx90a";
  const uint64_t header = 24 + 8 + 2 * 24 + host_id.size() + gpu_id.size();
  std::string bundle = "__CLANG_OFFLOAD_BUNDLE__";
  const auto put = [&](uint64_t v) { bundle.append(reinterpret_cast<const char*>(&v), 8); };
  put(2);
  put(header);
  put(0);
  put(host_id.size());
  bundle += host_id;
  put(header);
  put(elf_.size());
  put(gpu_id.size());
  bundle += gpu_id;
  ASSERT_EQ(bundle.size(), header);
  bundle += elf_;

  const KernelMetadata direct = ReadKernelMetadata(elf_, "tt_args_probe");
  const KernelMetadata bundled = ReadKernelMetadata(bundle, "tt_args_probe");
  EXPECT_EQ(bundled.name, "tt_args_probe");
  EXPECT_EQ(bundled.vgpr_count, direct.vgpr_count);
  EXPECT_EQ(bundled.group_segment_fixed_size, 1024);
  EXPECT_NE(
      ThrownBy([&] { ReadKernelMetadata(bundle.substr(0, header - 4), "k"); }).find("past the end"),
      std::string::npos);
}

}  // namespace
}  // namespace tiletune::runtime::hip
