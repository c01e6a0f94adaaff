// tiletune-bench-lookup: loads a local tiletuned with concurrent Lookup
// calls and reports throughput and latency. Read-only: the keys come from
// the daemon's own records. Exit codes: 0 the run finished (its errors are in
// the report), 1 the daemon could not be asked for keys, 2 bad flags or a
// non-loopback --server.
#include <iostream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bench/service/lookup_keys.h"
#include "bench/service/lookup_load.h"
#include "bench/service/loopback_address.h"
#include "client/channel.h"

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
};

int Fail(const std::string& message, int code) {
  std::cerr << "tiletune-bench-lookup: " << message << '\n';
  return code;
}

void PrintText(const Flags& flags, size_t keys, bool from_records, const LoadResult& r) {
  double rate = r.elapsed_seconds > 0 ? static_cast<double>(r.answered()) / r.elapsed_seconds : 0;
  std::cout << fmt::format("lookups   {} in {:.2f} s: {:.0f}/s with {} clients on {}\n",
                           r.answered(), r.elapsed_seconds, rate, flags.clients, flags.server);
  std::cout << fmt::format("keys      {} {}\n", keys,
                           from_records ? "from the daemon's records"
                                        : "synthetic (the daemon has no records: expect misses)");
  std::cout << fmt::format("latency   p50 {:.3f} ms  p90 {:.3f} ms  p99 {:.3f} ms  max {:.3f} ms\n",
                           r.latency.p50_ms, r.latency.p90_ms, r.latency.p99_ms, r.latency.max_ms);
  std::cout << fmt::format("results   {} hits, {} misses, {} errors{}\n", r.hits, r.misses,
                           r.errors,
                           r.first_error.empty() ? "" : " (first: " + r.first_error + ")");
}

void PrintJson(const Flags& flags, size_t keys, bool from_records, const LoadResult& r) {
  double rate = r.elapsed_seconds > 0 ? static_cast<double>(r.answered()) / r.elapsed_seconds : 0;
  nlohmann::json report = {
      {"server", flags.server},
      {"clients", flags.clients},
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
  std::cout << report.dump() << '\n';
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  CLI::App app("Load a local tiletuned with concurrent lookups; report lookups/s and latency.",
               "tiletune-bench-lookup");
  app.add_option("--server", flags.server, "daemon address; loopback only")
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
  app.add_option("--deadline-ms", flags.deadline_ms, "deadline of each lookup")
      ->check(CLI::Range(1, 60000))
      ->capture_default_str();
  app.add_flag("--json", flags.json, "one JSON object on stdout");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    return Fail(e.what(), 2);
  }
  if (!tiletune::bench::IsLoopbackAddress(flags.server)) {
    return Fail("--server " + flags.server +
                    " is not a loopback address (127.0.0.0/8, localhost or [::1]); this tool "
                    "only loads a daemon on this machine",
                2);
  }

  auto stub = tiletune::v1::TuningService::NewStub(tiletune::client::MakeChannel(flags.server));
  LoadOptions options;
  options.clients = flags.clients;
  options.duration = std::chrono::duration<double>(flags.seconds);
  options.call_deadline = std::chrono::milliseconds(flags.deadline_ms);
  tiletune::bench::LookupKeys keys;
  try {
    keys = tiletune::bench::ChooseLookupKeys(*stub, flags.keys, std::chrono::seconds(10));
  } catch (const std::exception& e) {
    return Fail("cannot get keys from tiletuned at " + flags.server + ": " + e.what(), 1);
  }
  LoadResult result = tiletune::bench::RunLookupLoad(*stub, keys.requests, options);
  if (flags.json) {
    PrintJson(flags, keys.requests.size(), keys.from_records, result);
  } else {
    PrintText(flags, keys.requests.size(), keys.from_records, result);
  }
  return 0;
}
