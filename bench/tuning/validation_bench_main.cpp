// tiletune-bench-validation: the host-side work the benchmark worker does
// around one validated run of a key, stage by stage: drawing the inputs,
// encoding them and making the outputs' poison (once per problem), checking
// a written output (every run). On a GPU the kernel runs take
// microseconds to milliseconds, so for large outputs these stages are what
// a tuning job's trial costs beyond compiling.
//
//   tiletune-bench-validation --shape m=4096,n=14336,k=4096 --dtype bf16 --runs 5
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "client/input_error.h"
#include "client/key_text.h"
#include "kernels/core/kernel_key.h"
#include "tuner/worker/element_codec.h"
#include "tuner/worker/host_reference.h"
#include "tuner/worker/output_validation.h"
#include "tuner/worker/problem_inputs.h"
#include "tuner/worker/problem_upload.h"

using namespace tiletune;

namespace {

// Seconds `work` takes, the least of `runs` runs.
template <class Work>
double LeastSeconds(int runs, Work&& work) {
  double least = 1e30;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    work();
    least = std::min(
        least, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return least;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The benchmark worker's host work around one validated run"};
  std::string op = "gemm", shape = "m=4096,n=14336,k=4096", dtype_name = "bf16", chain;
  int runs = 5, sampled_rows = 16;
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  app.add_option("--op", op, "the key's op");
  app.add_option("--shape", shape, "the key's dims, e.g. m=4096,n=14336,k=4096");
  app.add_option("--dtype", dtype_name, "input and output dtype (f32, f16, bf16)");
  app.add_option("--chain", chain, "epilogue chain, e.g. bias,gelu_tanh");
  app.add_option("--runs", runs, "runs of each stage (the least time is reported)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--sampled-rows", sampled_rows, "reference rows checked")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--threads", threads, "threads drawing the inputs (default: hardware threads)")
      ->check(CLI::Range(1, 1024));
  CLI11_PARSE(app, argc, argv);
  try {
    const auto dtype = client::ParseDTypeName(dtype_name);
    if (!dtype) throw client::InputError("--dtype: unknown dtype '" + dtype_name + "'");
    v1::KernelKey key;
    key.set_op(op);
    key.set_input_dtype(*dtype);
    key.set_output_dtype(*dtype);
    for (const v1::Dim& d : client::ParseShapeText(shape, "--shape")) *key.add_shape() = d;
    if (!chain.empty()) {
      for (const v1::ChainOp& c : client::ParseChainText(chain, "--chain")) *key.add_chain() = c;
    }
    key = kernels::NormalizeKernelKey(key);

    tuner::ProblemInputs inputs;
    const double draw =
        LeastSeconds(1, [&] { inputs = tuner::MakeProblemInputs(key, 1, threads); });
    tuner::EncodedInputs encoded;
    const double encode = LeastSeconds(runs, [&] { encoded = tuner::EncodeInputs(inputs); });
    const auto elements = static_cast<size_t>(inputs.output_elements);
    const v1::DType out = key.output_dtype();
    std::vector<std::byte> poison;
    const double fill = LeastSeconds(runs, [&] { poison = tuner::PoisonElements(elements, out); });
    // A written output: the reference's values on its rows, a value
    // everywhere else, as the device would hand them back.
    tuner::Reference reference;
    reference.output_rows = tuner::OutputRows(inputs);
    reference.row_elements = static_cast<int64_t>(elements) / reference.output_rows;
    const int64_t rows = std::min<int64_t>(sampled_rows, reference.output_rows);
    for (int64_t r = 0; r < rows; ++r) reference.rows.push_back(r * reference.output_rows / rows);
    reference.values.assign(static_cast<size_t>(rows * reference.row_elements), 1.0);
    const std::vector<std::byte> written =
        tuner::EncodeElements(std::vector<float>(elements, 1.0f), out);
    tuner::OutputCheck check;
    const double scan =
        LeastSeconds(runs, [&] { check = tuner::CheckOutput(written, out, reference, 1e-2); });
    if (!check.ok) throw std::runtime_error("the written output failed its check: " + check.error);

    std::cout << fmt::format(
        "{} ({} output elements, {} reference rows, inputs drawn on {} threads)\n"
        "  once per problem: draw inputs {:.3f} s, encode inputs {:.3f} s, poison outputs {:.3f} "
        "s\n"
        "  every run:        check output {:.3f} s\n",
        kernels::CanonicalKeyString(key), elements, rows, threads, draw, encode, fill, scan);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "tiletune-bench-validation: " << e.what() << "\n";
    return 2;
  }
}
