// Failure memory: remembered per kernel template, device class and
// toolchain, first report kept.
#include "db/tuning_store.h"
#include "store_test.h"

namespace tiletune::db {
namespace {

KnownFailure Failure(const std::string& params, v1::TrialStatus status,
                     const std::string& toolchain = "tc1") {
  return {.kernel_name = "host_gemm",
          .params = params,
          .device_class = "cpu-abc",
          .toolchain = toolchain,
          .status = status,
          .error = "worker died",
          .canonical_key = "gemm m=1",
          .job_id = "j1"};
}

class StoreKnownFailures : public StoreTest {};

TEST_P(StoreKnownFailures, AreFoundOnlyForTheSameTemplateDeviceClassAndToolchain) {
  auto store = Open();
  store->RememberFailure(Failure("tile_m=32", v1::TRIAL_CRASH));
  store->RememberFailure(Failure("tile_m=64", v1::TRIAL_TIMEOUT));
  store->RememberFailure(Failure("tile_m=32", v1::TRIAL_WRONG_RESULT, "tc2"));
  // A second report of a known failure keeps the first.
  store->RememberFailure(Failure("tile_m=32", v1::TRIAL_TIMEOUT));

  const auto known = store->KnownFailures("host_gemm", "cpu-abc", "tc1");
  ASSERT_EQ(known.size(), 2u);
  EXPECT_EQ(known.at("tile_m=32"), v1::TRIAL_CRASH);
  EXPECT_EQ(known.at("tile_m=64"), v1::TRIAL_TIMEOUT);
  EXPECT_EQ(store->KnownFailures("host_gemm", "cpu-abc", "tc2").size(), 1u);
  EXPECT_TRUE(store->KnownFailures("host_gemm", "cpu-other", "tc1").empty());
  EXPECT_TRUE(store->KnownFailures("host_softmax", "cpu-abc", "tc1").empty());
}

TEST_P(StoreKnownFailures, SurviveReopening) {
  Open()->RememberFailure(Failure("tile_m=32", v1::TRIAL_CRASH));
  EXPECT_EQ(Open()->KnownFailures("host_gemm", "cpu-abc", "tc1").size(), 1u);
}

TILETUNE_STORE_TEST_SUITE(StoreKnownFailures);

}  // namespace
}  // namespace tiletune::db
