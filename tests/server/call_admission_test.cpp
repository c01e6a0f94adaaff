// The admission gate's last line: an exception out of an RPC body answers
// INTERNAL and is logged, where gRPC would answer a bare UNKNOWN and log
// nothing.
#include "server/call_admission.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <sstream>
#include <stdexcept>

#include <grpcpp/server_context.h>

namespace tiletune::server {
namespace {

class CallAdmissionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    context_.ready.store(true);
    previous_logger_ = spdlog::default_logger();
    spdlog::set_default_logger(std::make_shared<spdlog::logger>(
        "test", std::make_shared<spdlog::sinks::ostream_sink_mt>(log_)));
  }
  void TearDown() override { spdlog::set_default_logger(previous_logger_); }

  DaemonConfig config_;
  DeviceRegistry devices_{{}, {}, JobQueues::kPerDevice};
  MetricsRegistry registry_;
  DaemonMetrics metrics_{registry_};
  LookupCache cache_{10};
  JobEventHub events_;
  DatabaseHealth database_;
  ServiceContext context_{config_, devices_, cache_, events_, metrics_, database_};
  CallAdmission admission_{context_};
  grpc::ServerContext call_;
  std::ostringstream log_;
  std::shared_ptr<spdlog::logger> previous_logger_;
};

TEST_F(CallAdmissionTest, AnExceptionOutOfABodyIsInternalAndLogged) {
  for (const bool needs_database : {false, true}) {
    log_.str("");
    const CallPolicy policy{.method = "ListRecords", .needs_database = needs_database};
    const auto status = admission_.Run(call_, policy, [](const AdmittedCall&) -> grpc::Status {
      throw std::invalid_argument("sort key field 2 is not a number");
    });
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INTERNAL) << needs_database;
    EXPECT_EQ(status.error_message(), "ListRecords: internal error, see tiletuned's log");
    EXPECT_NE(log_.str().find("ListRecords: unexpected error: sort key field 2 is not a number"),
              std::string::npos)
        << log_.str();
  }
}

TEST_F(CallAdmissionTest, AStorageErrorIsInternalAndLogged) {
  const CallPolicy policy{.method = "GetJob", .needs_database = true};
  const auto status = admission_.Run(call_, policy, [](const AdmittedCall&) -> grpc::Status {
    throw db::StoreError("database tiletune.db: disk I/O error");
  });
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_EQ(status.error_message(), "database tiletune.db: disk I/O error");
  EXPECT_NE(log_.str().find("GetJob: storage error: database tiletune.db: disk I/O error"),
            std::string::npos)
      << log_.str();
}

}  // namespace
}  // namespace tiletune::server
