// tiletune-bench-strategy: how many evaluations each search strategy needs
// to come within 2% of the exhaustive optimum, on a GEMM and a softmax
// space, and the wall time of a cold and a warm-cache tuning of one GEMM
// shape.
//
// Every valid variant of each space is tuned once for real (an exhaustive
// TuningSession: compile, validate, time in the worker). The strategies are
// then replayed over those measurements for many seeds: each strategy sees
// only the results of the variants it asks for, as in a real job, so the
// count of evaluations is the count of variants a job would have timed.
// Where compiling a whole space takes too long (the host backend on a small
// machine), --table-variants N measures a seeded random sample of N variants
// and the space becomes that sample (said in the output).
//
//   tiletune-bench-strategy --backend host --seeds 20 --json OUT.json
//   tiletune-bench-strategy --backend cuda --gemm 4096,4096,4096 --gemm-dtype bf16
//       --gemm-layout a=row,b=col
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <numeric>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/tuning/session_runner.h"
#include "client/input_error.h"
#include "client/key_text.h"
#include "kernels/core/kernel_key.h"
#include "kernels/core/key_space.h"
#include "runtime/backend_registry.h"
#include "tuner/device_description_of.h"
#include "tuner/search_strategy.h"

namespace fs = std::filesystem;
using namespace tiletune;

namespace {

// What replaying a strategy sees for each variant of a space.
struct Table {
  kernels::SearchSpace space;
  std::map<std::string, tuner::Observation> observed;  // by VariantString
  double best_us = 0;
};

Table MakeTable(const v1::KernelKey& key, const kernels::TemplateSpace& searched,
                const std::vector<v1::Trial>& trials) {
  const kernels::KernelTemplate& t = *searched.kernel;
  Table table{searched.space};
  table.best_us = std::numeric_limits<double>::infinity();
  for (const auto& trial : trials) {
    // The table replays one template's space (the key's largest searched one).
    if (trial.kernel_name() != t.name()) continue;
    const kernels::Variant v(trial.params().begin(), trial.params().end());
    if (v.contains(std::string(kernels::kPlantedFault))) continue;
    tuner::Observation o;
    if (trial.status() == v1::TRIAL_OK || trial.status() == v1::TRIAL_SLOWER) {
      o.median_us = trial.timing().median_us();
      table.best_us = std::min(table.best_us, *o.median_us);
    }
    o.resources.registers = trial.compile_report().registers();
    o.resources.shared_memory_bytes = trial.compile_report().shared_memory_bytes();
    o.resources.spill_bytes = trial.compile_report().spill_bytes();
    const auto launch = t.Source(key, v).launch;
    if (launch.block_size() > 0) {
      o.threads_per_block = 1;
      for (int64_t b : launch.block()) o.threads_per_block *= b;
    }
    table.observed[kernels::VariantString(v)] = o;
  }
  // The space the strategies search is what was measured.
  auto measured = std::make_shared<std::set<std::string>>();
  for (const auto& [variant, o] : table.observed) measured->insert(variant);
  table.space.Require("measured for the table", [measured](const kernels::Variant& v) {
    return measured->contains(kernels::VariantString(v));
  });
  return table;
}

// Evaluations until the strategy has measured a variant within `tolerance`
// of the table's best; the space size + 1 when it never does.
int EvaluationsToTarget(tuner::SearchStrategy& strategy, const Table& table, double tolerance) {
  int evaluations = 0;
  while (auto v = strategy.Next()) {
    ++evaluations;
    const auto it = table.observed.find(kernels::VariantString(kernels::OwnParameters(*v)));
    const tuner::Observation o = it == table.observed.end() ? tuner::Observation{} : it->second;
    strategy.Observe(*v, o);
    if (o.median_us && *o.median_us <= table.best_us * (1 + tolerance)) return evaluations;
  }
  return static_cast<int>(table.observed.size()) + 1;
}

struct Summary {
  double mean = 0;
  int median = 0, worst = 0;
};

Summary Summarize(std::vector<int> counts) {
  std::sort(counts.begin(), counts.end());
  return {std::accumulate(counts.begin(), counts.end(), 0.0) / static_cast<double>(counts.size()),
          counts[counts.size() / 2], counts.back()};
}

v1::KernelKey Key(const std::string& op, v1::DType dtype, const std::vector<int64_t>& dims,
                  const std::vector<v1::TensorLayout>& layouts = {}) {
  v1::KernelKey key;
  key.set_op(op);
  key.set_input_dtype(dtype);
  const std::vector<const char*> names = op == "gemm" ? std::vector<const char*>{"m", "n", "k"}
                                                      : std::vector<const char*>{"rows", "cols"};
  for (size_t i = 0; i < names.size(); ++i) {
    auto* d = key.add_shape();
    d->set_name(names[i]);
    d->set_size(dims.at(i));
  }
  for (const auto& layout : layouts) *key.add_layouts() = layout;
  return kernels::NormalizeKernelKey(key);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Evaluations per search strategy to reach 2% of the exhaustive optimum; cold and "
      "warm tuning time of one GEMM shape"};
  std::string backend_name = "host", gemm_dtype_name = "f32", softmax_dtype_name = "f32",
              gemm_layout_text, json_path, label;
  std::vector<int64_t> gemm = {256, 256, 256}, softmax = {2048, 1024};
  int seeds = 20, compile_threads = 2, tune_variants = 24, table_variants = 0;
  double tolerance = 0.02;
  app.add_option("--backend", backend_name, "host or cuda")->check(CLI::IsMember({"host", "cuda"}));
  app.add_option("--gemm-dtype", gemm_dtype_name, "GEMM element type (f32, f16, bf16)");
  app.add_option("--softmax-dtype", softmax_dtype_name, "softmax element type (f32, f16, bf16)");
  app.add_option("--gemm", gemm, "GEMM shape m,n,k")->delimiter(',')->expected(3);
  app.add_option("--gemm-layout", gemm_layout_text,
                 "GEMM operand layouts, e.g. a=row,b=col (the wgmma variants need B column-major; "
                 "default: both row-major)");
  app.add_option("--softmax", softmax, "softmax shape rows,cols")->delimiter(',')->expected(2);
  app.add_option("--seeds", seeds, "replays per strategy")->check(CLI::Range(1, 10000));
  app.add_option("--tolerance", tolerance, "how close to the optimum counts (0.02: 2%)");
  app.add_option("--compile-threads", compile_threads, "the daemon's compile_threads")
      ->check(CLI::Range(1, 256));
  app.add_option("--tune-variants", tune_variants,
                 "variants of the timed cold/warm tuning (annealing)");
  app.add_option("--table-variants", table_variants,
                 "measure a random sample of this many variants per space (0: all)");
  app.add_option("--label", label, "where it ran, for the report (e.g. '2-core VM')");
  app.add_option("--json", json_path, "write the results as JSON to this file");
  CLI11_PARSE(app, argc, argv);
  const auto gemm_dtype = kernels::ParseDType(gemm_dtype_name);
  const auto softmax_dtype = kernels::ParseDType(softmax_dtype_name);
  if (!gemm_dtype || !softmax_dtype) {
    std::cerr << (gemm_dtype ? "--softmax-dtype" : "--gemm-dtype") << ": unknown element type '"
              << (gemm_dtype ? softmax_dtype_name : gemm_dtype_name) << "'\n";
    return 2;
  }
  std::vector<v1::TensorLayout> gemm_layouts;
  try {
    if (!gemm_layout_text.empty())
      gemm_layouts = client::ParseLayoutsText(gemm_layout_text, "--gemm-layout");
  } catch (const client::InputError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  const v1::KernelKey gemm_key = Key("gemm", *gemm_dtype, gemm, gemm_layouts);
  if (const auto error = kernels::ValidateKernelKey(gemm_key, kernels::KeyLimits{})) {
    std::cerr << "--gemm, --gemm-dtype, --gemm-layout: " << error->ToString() << "\n";
    return 2;
  }

  const fs::path self = fs::read_symlink("/proc/self/exe").parent_path();
  const fs::path scratch =
      fs::temp_directory_path() / ("tiletune-bench-strategy-" + std::to_string(getpid()));
  auto open = [&](const std::string& cache) {
    runtime::BackendOptions options;
    options.enabled = {backend_name};
    options.cache_dir = (scratch / cache).string();
    options.rtc_binary = (self / "tiletune-rtc").string();
    return runtime::DiscoverBackends(options);
  };
  auto table_backends = open("table-cache");
  if (table_backends.backends.empty()) {
    std::cerr << "tiletune-bench-strategy: backend " << backend_name
              << " is not available: " << table_backends.statuses.front().reason << "\n";
    return 1;
  }
  const std::string worker = (self / "tiletune-worker").string();
  tuner::TuningLimits limits;
  limits.default_max_seconds = 1e6;
  limits.max_variants_cap = 1 << 20;

  nlohmann::json out;
  out["backend"] = backend_name;
  out["label"] = label;
  out["seeds"] = seeds;
  out["tolerance"] = tolerance;
  bench::TuningSessionRunner table_bench(*table_backends.backends.front(), worker, compile_threads);
  out["device"] = table_bench.device().fingerprint.name();
  std::cout << fmt::format("backend {} on {}; {} seeds; target: within {:.0f}% of the optimum\n\n",
                           backend_name, table_bench.device().fingerprint.name(), seeds,
                           tolerance * 100);
  std::cout << "| space | variants | optimum µs | strategy | mean evals | median | worst |\n"
               "| --- | --- | --- | --- | --- | --- | --- |\n";
  for (const auto& key : {gemm_key, Key("softmax", *softmax_dtype, softmax)}) {
    // The replayed space: the searched template with the most variants (a
    // large bf16 GEMM's tma_ws_gemm; the tile GEMM leaves such keys to it).
    std::string why;
    const kernels::KeySpace key_space =
        kernels::KeySpace::Of(key, tuner::DeviceDescriptionOf(table_bench.device()), &why);
    const kernels::TemplateSpace* searched = nullptr;
    size_t valid_variants = 0;
    for (const kernels::TemplateSpace& candidate : key_space.templates()) {
      const size_t n = candidate.space.ValidVariants().size();
      if (candidate.searched && n > valid_variants) searched = &candidate, valid_variants = n;
    }
    if (!searched) {
      std::cerr << kernels::CanonicalKeyString(key) << ": no searched template: " << why << "\n";
      return 1;
    }
    const kernels::KernelTemplate* t = searched->kernel;
    const int valid = static_cast<int>(valid_variants);
    // Every searched variant of the key is measured (exhaustive goes
    // template by template), then the table keeps the replayed template's.
    const int key_valid = static_cast<int>(key_space.ValidVariants().size());
    const bool sampled = table_variants > 0 && table_variants < key_valid;
    const bench::SessionResult all =
        table_bench.Tune(key, sampled ? v1::STRATEGY_RANDOM : v1::STRATEGY_EXHAUSTIVE,
                         sampled ? table_variants : key_valid, limits);
    if (!all.error.empty()) {
      std::cerr << kernels::CanonicalKeyString(key) << ": " << all.error << "\n";
      return 1;
    }
    const Table table = MakeTable(key, *searched, all.trials);
    const int size = static_cast<int>(table.observed.size());
    nlohmann::json space{{"key", kernels::CanonicalKeyString(key)},
                         {"template", std::string(t->name())},
                         {"valid_variants", valid},
                         {"variants", size},
                         {"sampled", sampled},
                         {"exhaustive_seconds", all.seconds},
                         {"optimum_us", table.best_us}};
    for (auto strategy : {v1::STRATEGY_EXHAUSTIVE, v1::STRATEGY_RANDOM, v1::STRATEGY_ANNEALING}) {
      std::vector<int> counts;
      for (int seed = 1; seed <= seeds; ++seed) {
        const kernels::KeySpace replayed({{t, table.space}});
        auto s = tuner::MakeSearchStrategy(strategy, replayed, replayed.ValidVariants(),
                                           static_cast<uint64_t>(seed));
        counts.push_back(EvaluationsToTarget(*s, table, tolerance));
      }
      const Summary summary = Summarize(counts);
      const std::string name = v1::Strategy_Name(strategy).substr(9);
      space["evaluations"][name] = {
          {"mean", summary.mean}, {"median", summary.median}, {"worst", summary.worst}};
      std::cout << fmt::format("| {} | {}{} | {:.2f} | {} | {:.1f} | {} | {} |\n", key.op(), size,
                               sampled ? fmt::format(" sampled of {}", valid) : "", table.best_us,
                               name, summary.mean, summary.median, summary.worst);
    }
    out["spaces"].push_back(space);
  }

  // Cold: an empty compiled-code cache; warm: the same tuning again.
  auto tuning_backends = open("tuning-cache");
  bench::TuningSessionRunner tuning_bench(*tuning_backends.backends.front(), worker,
                                          compile_threads);
  std::cout << fmt::format("\nTuning {} with annealing, {} variants:\n",
                           kernels::CanonicalKeyString(gemm_key), tune_variants);
  for (const char* pass : {"cold", "warm"}) {
    const bench::SessionResult tuned =
        tuning_bench.Tune(gemm_key, v1::STRATEGY_ANNEALING, tune_variants, limits);
    int hits = 0;
    for (const auto& trial : tuned.trials) hits += trial.compile_cache_hit();
    const std::string winner =
        tuned.record ? v1::Winner_Name(tuned.record->winner()) : "none: " + tuned.error;
    out["tuning"][pass] = {{"seconds", tuned.seconds},
                           {"trials", tuned.trials.size()},
                           {"compile_cache_hits", hits},
                           {"winner", winner},
                           {"speedup", tuned.record ? tuned.record->speedup() : 0.0}};
    std::cout << fmt::format(
        "  {}: {:.2f} s, {} trials, {} compile cache hits, {} (speedup {:.2f})\n", pass,
        tuned.seconds, tuned.trials.size(), hits, winner,
        tuned.record ? tuned.record->speedup() : 0.0);
  }
  fs::remove_all(scratch);
  if (!json_path.empty()) std::ofstream(json_path) << out.dump(2) << "\n";
  return 0;
}
