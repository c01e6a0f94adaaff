#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "runtime/cuda/nvrtc_compiler.h"

namespace tiletune::runtime::cuda {

// NVRTC opened once for the test program; nullptr with `why` when this
// machine has no libnvrtc.
inline NvrtcCompiler* TestNvrtc(std::string* why) {
  static std::string open_error;
  static const std::unique_ptr<NvrtcCompiler> nvrtc = NvrtcCompiler::Open(&open_error);
  *why = open_error;
  return nvrtc.get();
}

// A test that needs NVRTC: skipped, saying why, where there is none.
class NvrtcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    nvrtc_ = TestNvrtc(&why);
    if (!nvrtc_) GTEST_SKIP() << why;
  }
  NvrtcCompiler* nvrtc_ = nullptr;
};

}  // namespace tiletune::runtime::cuda
