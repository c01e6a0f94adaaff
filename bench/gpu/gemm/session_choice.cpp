#include "bench/gpu/gemm/session_choice.h"

#include <algorithm>
#include <limits>

namespace tiletune::bench {
namespace {

// Characters of a failure's message kept for the report.
constexpr size_t kFailureChars = 400;

// Counts a failed trial; false when the trial passed.
bool CountFailure(const v1::Trial& trial, const std::string& variant, SessionChoice& choice) {
  switch (trial.status()) {
    case v1::TRIAL_OK:
    case v1::TRIAL_SLOWER: return false;
    case v1::TRIAL_COMPILE_ERROR: ++choice.compile_failed; break;
    case v1::TRIAL_REJECTED: ++choice.rejected; break;
    case v1::TRIAL_WRONG_RESULT: ++choice.wrong; break;
    default: ++choice.run_failed; break;
  }
  if (choice.first_failure.empty()) {
    choice.first_failure = variant + ": " + v1::TrialStatus_Name(trial.status()) + ": " +
                           trial.error().substr(0, kFailureChars);
  }
  return true;
}

}  // namespace

SessionChoice TuneWholeSpace(TuningSessionRunner& runner, const v1::KernelKey& key) {
  tuner::TuningLimits limits;
  limits.default_max_seconds = std::numeric_limits<double>::infinity();
  std::string why;
  const kernels::KeySpace space = runner.SpaceOf(key, &why);
  if (space.empty()) return {.error = why};
  const int valid = static_cast<int>(space.ValidVariants().size());
  limits.max_variants_cap = std::max(limits.max_variants_cap, valid);
  const SessionResult session = runner.Tune(key, v1::STRATEGY_EXHAUSTIVE, valid, limits);

  SessionChoice choice;
  choice.session_seconds = session.seconds;
  choice.variants = static_cast<int>(session.trials.size());
  choice.error = session.error;
  const v1::Trial* fastest = nullptr;
  for (const v1::Trial& trial : session.trials) {
    // Trials stored without a name belong to the first template.
    const std::string kernel =
        trial.kernel_name().empty() ? std::string(space.first().name()) : trial.kernel_name();
    SessionChoice::TemplateBest& family = choice.per_template[kernel];
    ++family.trials;
    const std::string variant =
        kernels::VariantString(kernels::Variant(trial.params().begin(), trial.params().end()));
    const bool failed = CountFailure(trial, variant, choice);
    const double us = failed ? 0 : trial.timing().median_us();
    choice.trials.push_back({.kernel = kernel,
                             .variant = variant,
                             .status = v1::TrialStatus_Name(trial.status()),
                             .median_us = us});
    if (failed) continue;
    if (family.best_us == 0 || us < family.best_us) {
      family.best_us = us;
      family.best_variant = variant;
    }
    if (!fastest || us < fastest->timing().median_us()) fastest = &trial;
  }
  if (!session.record) {
    if (choice.error.empty()) choice.error = "the session made no record";
    return choice;
  }
  const v1::Record& record = *session.record;
  choice.served = record.winner() == v1::WINNER_TUNED ? "tuned" : "vendor";
  choice.baseline_name = record.baseline_name();
  choice.decision = record.decision().reason();
  choice.baseline_us = record.baseline().median_us();
  std::string kernel_name;
  if (!record.config().kernel_name().empty()) {
    choice.variant.emplace(record.config().params().begin(), record.config().params().end());
    choice.session_us = record.tuned().median_us();
    kernel_name = record.config().kernel_name();
  } else if (fastest) {
    choice.variant.emplace(fastest->params().begin(), fastest->params().end());
    choice.session_us = fastest->timing().median_us();
    kernel_name = fastest->kernel_name();
  }
  // Trials stored without a name belong to the first template.
  choice.kernel = &space.first();
  if (const auto index = space.IndexOf(kernel_name)) {
    choice.kernel = space.templates()[static_cast<size_t>(*index)].kernel;
  }
  return choice;
}

nlohmann::json SessionChoiceJson(const SessionChoice& c) {
  nlohmann::json per_template = nlohmann::json::object();
  for (const auto& [name, family] : c.per_template) {
    per_template[name] = {{"trials", family.trials},
                          {"best_us", family.best_us},
                          {"best_variant", family.best_variant}};
  }
  nlohmann::json trials = nlohmann::json::array();
  for (const SessionChoice::TrialTiming& t : c.trials) {
    trials.push_back({{"kernel", t.kernel},
                      {"variant", t.variant},
                      {"status", t.status},
                      {"median_us", t.median_us}});
  }
  return {{"served", c.served},
          {"per_template", per_template},
          {"trials", trials},
          {"baseline_name", c.baseline_name},
          {"decision", c.decision},
          {"variant", c.variant ? kernels::VariantString(*c.variant) : std::string()},
          {"session_us", c.session_us},
          {"baseline_us", c.baseline_us},
          {"session_seconds", c.session_seconds},
          {"variants", c.variants},
          {"compile_failed", c.compile_failed},
          {"rejected", c.rejected},
          {"run_failed", c.run_failed},
          {"wrong", c.wrong},
          {"first_failure", c.first_failure},
          {"session_error", c.error}};
}

}  // namespace tiletune::bench
