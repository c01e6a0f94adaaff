#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "client/cli/commands.h"
#include "client/cli/json_output.h"
#include "client/cli/record_format.h"
#include "client/enum_names.h"
#include "client/input_error.h"
#include "client/job_spec_file.h"
#include "client/key_text.h"

namespace tiletune::cli {
namespace {

struct LookupOptions {
  std::string op;
  std::optional<std::string> key_file;
  std::optional<std::string> shape;
  std::optional<std::string> dtype;
  std::optional<std::string> out_dtype;
  std::optional<std::string> acc_dtype;
  std::optional<std::string> layout;
  std::optional<std::string> chain;
  bool allow_tf32 = false;
  std::optional<std::string> gate;
  std::string device;
  std::string device_class;
  bool tune_on_miss = false;
};

// CLI11 has checked dtype names against the same list.
v1::DType DType(const std::string& name) {
  return *client::ParseDTypeName(name);
}

v1::LookupRequest BuildRequest(const LookupOptions& options) {
  if (options.op.empty() && !options.key_file) {
    throw client::InputError("lookup: give --op (with --shape, --dtype...) or --key-file");
  }
  v1::LookupRequest request;
  auto& key = *request.mutable_key();
  if (options.key_file) key = client::ReadKernelKeyFile(*options.key_file);
  if (!options.op.empty()) key.set_op(options.op);
  if (options.dtype) key.set_input_dtype(DType(*options.dtype));
  if (options.out_dtype) key.set_output_dtype(DType(*options.out_dtype));
  if (options.acc_dtype) key.set_accumulate_dtype(DType(*options.acc_dtype));
  if (options.shape) {
    for (auto& dim : client::ParseShapeText(*options.shape, "--shape")) *key.add_shape() = dim;
  }
  if (options.layout) {
    for (auto& l : client::ParseLayoutsText(*options.layout, "--layout")) *key.add_layouts() = l;
  }
  if (options.chain) {
    for (auto& op : client::ParseChainText(*options.chain, "--chain")) *key.add_chain() = op;
  }
  key.set_allow_tf32(options.allow_tf32);
  if (options.gate) {
    // CLI11 has checked the name against the same list.
    key.set_gate(
        static_cast<v1::Gate>(*client::ParseShortEnumName(client::kGateNaming, *options.gate)));
  }
  request.mutable_device()->set_device(options.device);
  request.mutable_device()->set_device_class(options.device_class);
  request.set_tune_on_miss(options.tune_on_miss);
  return request;
}

ExitCode Lookup(CliContext& context, const LookupOptions& options) {
  v1::LookupRequest request = BuildRequest(options);
  v1::LookupResponse response;
  context.Check(context.tuning().Lookup(context.CallContext().get(), request, &response));
  if (context.json()) {
    PrintJson(response);
  } else {
    PrintLookup(request.key(), response, std::cout);
  }
  return kOk;
}

}  // namespace

void AddLookupCommand(CLI::App& app, CommandRun& run) {
  auto options = std::make_shared<LookupOptions>();
  auto* command = app.add_subcommand(
      "lookup", "Ask which kernel to run for a key: HIT (tuned config) or MISS (fallback)");
  auto dtypes = CLI::IsMember(client::ShortEnumNames(client::kDTypeNaming));
  auto* op =
      command->add_option("--op", options->op, "gemm, softmax, rmsnorm, layernorm, elementwise");
  auto* key_file = command->add_option(
      "--key-file", options->key_file,
      "a kernel key or op graph in YAML/JSON, as one `kernels` entry of a job file; "
      "the answer shows the fusion plan");
  op->excludes(key_file);
  command->add_option("--shape", options->shape, "dims, e.g. m=128,n=256,k=64");
  command->add_option("--dtype", options->dtype, "input dtype")->check(dtypes);
  command->add_option("--out-dtype", options->out_dtype, "output dtype")->check(dtypes);
  command->add_option("--acc-dtype", options->acc_dtype, "accumulate dtype")->check(dtypes);
  command->add_option("--layout", options->layout, "tensor layouts, e.g. a=row,b=col");
  command->add_option("--chain", options->chain,
                      "fused epilogue, e.g. bias,gelu_tanh,scale=0.5,residual_add,cast=bf16");
  command->add_flag("--allow-tf32", options->allow_tf32,
                    "f32 gemm: the products may round the inputs to tf32");
  command
      ->add_option("--gate", options->gate, "gemm: swiglu gates the product, silu(a*b) * (a*b_up)")
      ->check(CLI::IsMember(client::ShortEnumNames(client::kGateNaming)));
  command->add_option("--device", options->device, "device id on the daemon, e.g. cpu:0");
  command->add_option("--device-class", options->device_class,
                      "device class id, for records of a class the daemon does not have");
  command->add_flag("--tune-on-miss", options->tune_on_miss, "on a MISS, queue a tuning job");
  command->callback(
      [options, &run] { run = [options](CliContext& c) { return Lookup(c, *options); }; });
}

}  // namespace tiletune::cli
