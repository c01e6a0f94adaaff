#include "launcher_test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>

#include "tests/support/tiletuned_process.h"

namespace tiletune::testing {
namespace {

std::vector<float> Random(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

}  // namespace

BiasReluGemm::BiasReluGemm(int64_t m_, int64_t n_, int64_t k_) : m(m_), n(n_), k(k_) {
  std::mt19937 rng(7);
  a = Random(m * k, rng);
  b = Random(k * n, rng);
  bias = Random(n, rng);
  c.assign(m * n, std::nanf(""));
}

launcher::LaunchArgs BiasReluGemm::Args(const void* a_at, const void* b_at, const void* bias_at,
                                        const void* c_at) const {
  launcher::LaunchArgs args;
  args.tensors = {{"a", a_at}, {"b", b_at}, {"c", c_at}};
  args.chain_tensors = {{0, bias_at}};  // slot 0 is bias; relu reads nothing
  return args;
}

double BiasReluGemm::WorstError() const {
  double worst = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double want = bias[j];
      for (int64_t q = 0; q < k; ++q) want += double{a[i * k + q]} * b[q * n + j];
      want = std::max(want, 0.0);
      const double got = c[i * n + j];
      if (std::isnan(got)) return INFINITY;  // the poison was left: not written
      worst = std::max(worst, std::abs(got - want) / (std::abs(want) + 1.0));
    }
  }
  return worst;
}

v1::KernelKey BiasReluGemmKey(int64_t m, int64_t n, int64_t k) {
  return GemmKey(m, n, k, {"bias", "relu"});
}

v1::DeviceSelector DeviceId(const std::string& id) {
  v1::DeviceSelector device;
  device.set_device(id);
  return device;
}

std::string ReadyFileValue(const std::filesystem::path& ready_file, const std::string& name) {
  std::ifstream in(ready_file);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(name + "=", 0) == 0) return line.substr(name.size() + 1);
  }
  ADD_FAILURE() << "no " << name << "= in " << ready_file;
  return "";
}

void Tune(v1::TuningService::Stub& stub, const v1::KernelKey& key, const v1::DeviceSelector& device,
          uint64_t seed, v1::Winner winner) {
  v1::SubmitJobRequest submit;
  submit.mutable_spec()->set_strategy(v1::STRATEGY_RANDOM);
  submit.mutable_spec()->set_seed(seed);
  submit.mutable_spec()->mutable_budget()->set_max_variants(4);
  *submit.mutable_spec()->mutable_device() = device;
  *submit.mutable_spec()->add_kernels() = key;
  v1::SubmitJobResponse submitted;
  {
    grpc::ClientContext ctx;
    const grpc::Status status = stub.SubmitJob(&ctx, submit, &submitted);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(5));
  v1::WatchJobRequest watch;
  watch.set_job_id(submitted.job_id());
  auto reader = stub.WatchJob(&ctx, watch);
  v1::JobEvent event, last;
  while (reader->Read(&event)) last = event;
  ASSERT_TRUE(reader->Finish().ok());
  ASSERT_EQ(last.job().items_size(), 1) << last.ShortDebugString();
  ASSERT_EQ(last.job().items(0).winner(), winner) << last.job().ShortDebugString();
}

}  // namespace tiletune::testing
