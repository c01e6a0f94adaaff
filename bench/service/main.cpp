// tiletune-bench-lookup: loads a local tiletuned with concurrent Lookup
// calls and reports throughput and latency. The keys come from the daemon's
// own records. With --while-tuning JOB_FILE it measures twice, idle and then
// while that job tunes (submitted, and cancelled afterwards), to show what
// tuning costs lookups. Exit codes: 0 the run finished (its errors are in
// the report), 1 the daemon could not be asked for keys or refused the job,
// 2 bad flags or a non-loopback --server.
#include <iostream>
#include <thread>

#include <absl/synchronization/mutex.h>
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bench/service/local_address.h"
#include "bench/service/lookup_keys.h"
#include "bench/service/lookup_load.h"
#include "client/channel.h"
#include "client/job_spec_file.h"

namespace {

using tiletune::bench::LoadOptions;
using tiletune::bench::LoadResult;

struct Flags {
  std::string server = "127.0.0.1:7733";
  size_t clients = 16;
  double seconds = 10;
  size_t keys = 64;
  int deadline_ms = 1000;
  bool json = false;
  bool stream = false;
  std::string while_tuning;  // job spec file
  std::string token_file;    // for submitting and cancelling that job
};

int Fail(const std::string& message, int code) {
  std::cerr << "tiletune-bench-lookup: " << message << '\n';
  return code;
}

void PrintText(const Flags& flags, size_t keys, bool from_records, const LoadResult& r) {
  double rate = r.elapsed_seconds > 0 ? static_cast<double>(r.answered()) / r.elapsed_seconds : 0;
  std::cout << fmt::format("lookups   {} in {:.2f} s: {:.0f}/s with {} clients on {} ({})\n",
                           r.answered(), r.elapsed_seconds, rate, flags.clients, flags.server,
                           flags.stream ? "LookupStream" : "Lookup calls");
  std::cout << fmt::format("keys      {} {}\n", keys,
                           from_records ? "from the daemon's records"
                                        : "synthetic (the daemon has no records: expect misses)");
  std::cout << fmt::format("latency   p50 {:.3f} ms  p90 {:.3f} ms  p99 {:.3f} ms  max {:.3f} ms\n",
                           r.latency.p50_ms, r.latency.p90_ms, r.latency.p99_ms, r.latency.max_ms);
  std::cout << fmt::format("results   {} hits, {} misses, {} errors{}\n", r.hits, r.misses,
                           r.errors,
                           r.first_error.empty() ? "" : " (first: " + r.first_error + ")");
}

nlohmann::json ToJson(const Flags& flags, size_t keys, bool from_records, const LoadResult& r) {
  double rate = r.elapsed_seconds > 0 ? static_cast<double>(r.answered()) / r.elapsed_seconds : 0;
  return {
      {"server", flags.server},
      {"clients", flags.clients},
      {"api", flags.stream ? "LookupStream" : "Lookup"},
      {"keys", keys},
      {"key_source", from_records ? "records" : "synthetic"},
      {"seconds", r.elapsed_seconds},
      {"lookups", r.answered()},
      {"lookups_per_second", rate},
      {"latency_ms",
       {{"p50", r.latency.p50_ms},
        {"p90", r.latency.p90_ms},
        {"p99", r.latency.p99_ms},
        {"max", r.latency.max_ms}}},
      {"hits", r.hits},
      {"misses", r.misses},
      {"errors", r.errors},
      {"first_error", r.first_error},
  };
}

// The job's state now, or UNSPECIFIED when it cannot be read.
tiletune::v1::JobState JobState(tiletune::v1::TuningService::Stub& stub, const std::string& id) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  tiletune::v1::GetJobRequest request;
  request.set_job_id(id);
  tiletune::v1::Job job;
  if (!stub.GetJob(&ctx, request, &job).ok()) return tiletune::v1::JOB_STATE_UNSPECIFIED;
  return job.state();
}

// Submits the job and waits until it runs; returns its id, or throws.
std::string StartJob(tiletune::v1::TuningService::Stub& stub, const std::string& file) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  tiletune::v1::SubmitJobRequest request;
  *request.mutable_spec() = tiletune::client::ReadJobSpecFile(file);
  tiletune::v1::SubmitJobResponse response;
  auto status = stub.SubmitJob(&ctx, request, &response);
  if (!status.ok()) throw std::runtime_error("SubmitJob: " + status.error_message());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (JobState(stub, response.job_id()) != tiletune::v1::JOB_RUNNING) {
    if (std::chrono::steady_clock::now() > deadline) {
      throw std::runtime_error("job " + response.job_id() + " did not start within 60 s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return response.job_id();
}

void CancelJob(tiletune::v1::TuningService::Stub& stub, const std::string& id) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  tiletune::v1::CancelJobRequest request;
  request.set_job_id(id);
  tiletune::v1::Job job;
  stub.CancelJob(&ctx, request, &job);
}

}  // namespace

int main(int argc, char** argv) {
  // As tiletuned does (tiletuned_main.cpp says why): the client's gRPC
  // threads would serialize on abseil's deadlock detection.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  Flags flags;
  CLI::App app("Load a local tiletuned with concurrent lookups; report lookups/s and latency.",
               "tiletune-bench-lookup");
  app.add_option("--server", flags.server, "daemon address; loopback or unix:PATH only")
      ->envname("TILETUNE_SERVER")
      ->capture_default_str();
  app.add_option("--clients", flags.clients, "lookups in flight at once")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  app.add_option("--seconds", flags.seconds, "how long to run")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  app.add_option("--keys", flags.keys, "distinct keys to cycle through")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  app.add_option("--deadline-ms", flags.deadline_ms,
                 "deadline of each Lookup call (with --stream: of the stream, past --seconds)")
      ->check(CLI::Range(1, 60000))
      ->capture_default_str();
  app.add_flag("--json", flags.json, "one JSON object on stdout");
  app.add_flag("--stream", flags.stream,
               "each client asks on one LookupStream instead of one Lookup call per lookup");
  app.add_option("--while-tuning", flags.while_tuning,
                 "job spec file: measure idle, then again while this job tunes");
  app.add_option("--token-file", flags.token_file, "bearer token for submitting that job")
      ->envname("TILETUNE_TOKEN_FILE");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    return Fail(e.what(), 2);
  }
  if (!tiletune::bench::IsLocalAddress(flags.server)) {
    return Fail(
        "--server " + flags.server +
            " is not a loopback address (127.0.0.0/8, localhost or [::1]) or unix:PATH; this tool "
            "only loads a daemon on this machine",
        2);
  }

  tiletune::client::ChannelOptions channel;
  if (!flags.token_file.empty()) channel.token = tiletune::client::ReadTokenFile(flags.token_file);
  auto stub =
      tiletune::v1::TuningService::NewStub(tiletune::client::MakeChannel(flags.server, channel));
  LoadOptions options;
  options.clients = flags.clients;
  options.duration = std::chrono::duration<double>(flags.seconds);
  options.call_deadline = std::chrono::milliseconds(flags.deadline_ms);
  options.stream = flags.stream;
  tiletune::bench::LookupKeys keys;
  try {
    keys = tiletune::bench::ChooseLookupKeys(*stub, flags.keys, std::chrono::seconds(10));
  } catch (const std::exception& e) {
    return Fail("cannot get keys from tiletuned at " + flags.server + ": " + e.what(), 1);
  }
  const size_t key_count = keys.requests.size();
  LoadResult result = tiletune::bench::RunLookupLoad(*stub, keys.requests, options);
  if (flags.while_tuning.empty()) {
    if (flags.json) {
      std::cout << ToJson(flags, key_count, keys.from_records, result).dump() << '\n';
    } else {
      PrintText(flags, key_count, keys.from_records, result);
    }
    return 0;
  }

  std::string job_id;
  try {
    job_id = StartJob(*stub, flags.while_tuning);
  } catch (const std::exception& e) {
    return Fail(flags.while_tuning + ": " + e.what(), 1);
  }
  LoadResult tuning = tiletune::bench::RunLookupLoad(*stub, keys.requests, options);
  // A job that ended early would make the second row an idle one.
  const bool ran_throughout = JobState(*stub, job_id) == tiletune::v1::JOB_RUNNING;
  CancelJob(*stub, job_id);
  if (flags.json) {
    auto busy = ToJson(flags, key_count, keys.from_records, tuning);
    busy["job_id"] = job_id;
    busy["job_ran_throughout"] = ran_throughout;
    std::cout << nlohmann::json{{"idle", ToJson(flags, key_count, keys.from_records, result)},
                                {"while_tuning", busy}}
                     .dump()
              << '\n';
  } else {
    std::cout << "idle:\n";
    PrintText(flags, key_count, keys.from_records, result);
    std::cout << fmt::format("while job {} tunes{}:\n", job_id,
                             ran_throughout ? "" : " (it ENDED before the measurement did)");
    PrintText(flags, key_count, keys.from_records, tuning);
  }
  return 0;
}
