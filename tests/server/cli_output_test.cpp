// What the CLI shows of a real daemon's jobs and records: a watch's totals
// and item numbers off and on a terminal, Ctrl-C detaching from a watch,
// tables that fit 80 columns (and --wide), and the JSON round trips (a
// job's spec resubmits, an export re-imports).
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "tests/support/tiletuned_process.h"

namespace tiletune::testing {
namespace {

using namespace std::chrono_literals;

// Three kernels, one variant each: a plan of 3 variants.
constexpr const char* kJob =
    "name: cli-output\nstrategy: exhaustive\nbudget: {max_variants: 1}\n"
    "kernels:\n"
    "  - op: rmsnorm\n    dtype: f32\n    shape: {rows: 64, cols: 333}\n"
    "  - op: gemm\n    dtype: f32\n    shape: {m: 64, n: 96, k: 80}\n    chain: [bias, relu]\n"
    "  - op: softmax\n    dtype: f32\n    shape: {rows: 32, cols: 200}\n";
constexpr int kItems = 3;

std::vector<std::string> Lines(const std::string& text, const std::string& breaks = "\n") {
  std::vector<std::string> lines;
  std::string line;
  for (char c : text) {
    if (breaks.find(c) != std::string::npos) {
      lines.push_back(line);
      line.clear();
    } else {
      line += c;
    }
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

// Terminal columns: UTF-8 code points.
size_t Columns(const std::string& line) {
  return static_cast<size_t>(std::count_if(line.begin(), line.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

// COLUMNS as the CLI's environment has it, for one scope.
class ColumnsVariable {
 public:
  explicit ColumnsVariable(const char* value) {
    if (value) {
      setenv("COLUMNS", value, 1);
    } else {
      unsetenv("COLUMNS");
    }
  }
  ~ColumnsVariable() { unsetenv("COLUMNS"); }
};

// The items table's rows: the lines after its header (ITEM first).
std::vector<std::string> ItemRows(const std::string& out) {
  std::vector<std::string> rows;
  bool in_table = false;
  for (const auto& line : Lines(out)) {
    if (line.rfind("ITEM ", 0) == 0) {
      in_table = true;
    } else if (in_table && !line.empty() && std::isdigit(static_cast<unsigned char>(line[0]))) {
      rows.push_back(line);
    } else {
      in_table = false;
    }
  }
  return rows;
}

// One daemon for the suite, and (for the tests that look at a finished job)
// one job watched to its end off a terminal, run once.
class CliOutput : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    unsetenv("COLUMNS");
    dir_ = new TempDir();
    // Compiles on a loaded machine may take minutes; none must time out.
    daemon_ = new TiletunedProcess(dir_->path() / "daemon", {"--compile-timeout-seconds", "600"});
    std::filesystem::create_directories(dir_->path() / "daemon");
    daemon_->Start();
    spec_ = (dir_->path() / "job.yaml").string();
    std::ofstream(spec_) << kJob;
  }
  static void TearDownTestSuite() {
    delete watched_;
    delete daemon_;
    delete dir_;
  }

  // A watched job may take minutes on a loaded machine: the ceiling is
  // generous.
  static CommandResult Cli(std::vector<std::string> args) {
    args.insert(args.begin(), {BinaryPath("tiletune"), "--server", daemon_->address()});
    return RunCommand(args, 600s);
  }
  static std::vector<std::string> CliArgs(std::vector<std::string> args) {
    args.insert(args.begin(), {BinaryPath("tiletune"), "--server", daemon_->address()});
    return args;
  }

  static nlohmann::json ShowJson(const std::string& id) {
    auto shown = Cli({"--json", "jobs", "show", id});
    EXPECT_EQ(shown.exit_code, 0) << shown.err;
    return nlohmann::json::parse(shown.out);
  }

  // Runs the suite's job unless it ran; fails the test unless it succeeded.
  static void WatchTheJob() {
    if (!watched_) {
      watched_ = new CommandResult(Cli({"submit", spec_, "--watch"}));
      job_id_ = Lines(watched_->out).empty() ? "" : Lines(watched_->out).front();
    }
    ASSERT_EQ(watched_->exit_code, 0) << watched_->err << watched_->out;
    ASSERT_EQ(job_id_.rfind("j-", 0), 0u) << watched_->out;
  }

  static inline TempDir* dir_ = nullptr;
  static inline TiletunedProcess* daemon_ = nullptr;
  static inline std::string spec_;
  static inline CommandResult* watched_ = nullptr;
  static inline std::string job_id_;
};

TEST_F(CliOutput, AWatchOffATerminalKnowsTheWholePlanFromTheStartAndNumbersItemsFromZero) {
  ASSERT_NO_FATAL_FAILURE(WatchTheJob());
  const auto lines = Lines(watched_->err);
  ASSERT_GE(lines.size(), 2u) << watched_->err;
  // The snapshot, before any item ran or while the first starts, holds the
  // plan of every item.
  std::smatch snapshot;
  ASSERT_TRUE(
      std::regex_match(lines.front(), snapshot,
                       std::regex(R"(job (\S+) (queued|running): 3 items, (\d+)/(\d+) variants)")))
      << watched_->err;
  EXPECT_EQ(snapshot[1], job_id_);
  const int planned = std::stoi(snapshot[4]);
  EXPECT_GT(planned, 0);

  std::smatch finished;
  ASSERT_TRUE(std::regex_match(lines.back(), finished,
                               std::regex(R"(job \S+ succeeded: (\d+)/(\d+) variants)")))
      << watched_->err;
  EXPECT_EQ(std::stoi(finished[2]), planned) << watched_->err;
  EXPECT_LE(std::stoi(finished[1]), planned);

  // Every item line names an index from 0; an item's own plan never
  // changes and its count never falls; the items' plans add up to the total.
  std::map<int, int> item_plan;
  std::map<int, int> item_done;
  std::set<int> started;
  const std::regex item_line(R"(job \S+ item (\d+)[ :].*)");
  const std::regex progress(R"(\((\d+)/(\d+)\)$)");
  for (const auto& line : lines) {
    std::smatch m;
    if (!std::regex_match(line, m, item_line)) continue;
    const int index = std::stoi(m[1]);
    EXPECT_GE(index, 0) << line;
    EXPECT_LT(index, kItems) << line;
    if (line.find(": started") != std::string::npos) started.insert(index);
    std::smatch p;
    if (!std::regex_search(line, p, progress)) continue;
    const int done = std::stoi(p[1]);
    const int plan = std::stoi(p[2]);
    if (item_plan.contains(index)) {
      EXPECT_EQ(item_plan[index], plan) << line;
    }
    EXPECT_GE(done, item_done[index]) << line;
    item_plan[index] = plan;
    item_done[index] = done;
  }
  // Item 0 may have started before the watch did (the snapshot then says
  // running); the others start while it watches.
  const std::set<int> later{1, 2};
  EXPECT_TRUE(std::includes(started.begin(), started.end(), later.begin(), later.end()))
      << watched_->err;
  if (snapshot[2] == "queued") {
    EXPECT_TRUE(started.contains(0)) << watched_->err;
  }
  int plans = 0;
  for (const auto& [index, plan] : item_plan) plans += plan;
  EXPECT_EQ(plans, planned) << watched_->err;

  // The table names the items the same way.
  std::set<std::string> rows;
  for (const auto& row : ItemRows(watched_->out)) rows.insert(row.substr(0, row.find(' ')));
  EXPECT_EQ(rows, (std::set<std::string>{"0", "1", "2"})) << watched_->out;
}

TEST_F(CliOutput, AWatchOnATerminalFillsOneBarThatNeverFallsBack) {
  auto watched = RunOnTerminal(CliArgs({"submit", spec_, "--watch"}), 200, 600s);
  ASSERT_EQ(watched.exit_code, 0) << watched.out;
  const std::regex bar(
      R"(job \S+ (\w+) \[([#.]{20})\] (\d+)/(\d+) variants, (\d+)/(\d+) items done( \| item (\d+) \w+: .*)?)");
  int bars = 0;
  int total = -1;
  int done = 0;
  long filled = 0;
  int items_done = 0;
  for (auto line : Lines(watched.out, "\r\n")) {
    // The bar's redraw ends in "erase to end of line".
    if (auto erase = line.find("\033[K"); erase != std::string::npos) line.erase(erase);
    if (line.rfind("job ", 0) != 0) continue;
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, bar)) << line;
    ++bars;
    if (total < 0) total = std::stoi(m[4]);
    EXPECT_EQ(std::stoi(m[4]), total) << line;
    EXPECT_GE(std::stoi(m[3]), done) << line;
    const std::string cells = m[2];
    EXPECT_GE(std::count(cells.begin(), cells.end(), '#'), filled) << line;
    EXPECT_GE(std::stoi(m[5]), items_done) << line;
    EXPECT_EQ(std::stoi(m[6]), kItems) << line;
    if (m[8].matched) {
      EXPECT_LT(std::stoi(m[8]), kItems) << line;
    }
    done = std::stoi(m[3]);
    filled = std::count(cells.begin(), cells.end(), '#');
    items_done = std::stoi(m[5]);
  }
  EXPECT_GE(bars, 2) << watched.out;
  EXPECT_GT(total, 0) << watched.out;
  EXPECT_EQ(items_done, kItems) << watched.out;
  EXPECT_EQ(ItemRows(watched.out).size(), static_cast<size_t>(kItems)) << watched.out;
}

TEST_F(CliOutput, CtrlCDetachesFromAWatchSayingHowToWatchAgainAndTheJobRunsOn) {
  const auto spec = dir_->path() / "long.yaml";
  std::ofstream(spec) << "name: long\nstrategy: exhaustive\n"
                         "budget: {max_variants: 200, max_seconds: 600}\n"
                         "kernels:\n  - op: gemm\n    dtype: f32\n    shape: {m: 128, n: 128, "
                         "k: 128}\n";
  BackgroundCommand watch(CliArgs({"submit", spec.string(), "--watch"}));
  const auto deadline = std::chrono::steady_clock::now() + 300s;
  // An item line: the watch is on (its Ctrl-C handler too) and the job runs.
  while (watch.err().find(" item 0") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_NE(watch.err().find(" item 0"), std::string::npos) << watch.err();
  const std::string id = Lines(watch.out()).front();
  watch.Signal(SIGINT);
  EXPECT_EQ(watch.Wait(120s), 130) << watch.err();
  EXPECT_NE(
      watch.err().find("tiletune: detached: job " + id +
                       " keeps running; watch it again with `tiletune jobs watch " + id + "`"),
      std::string::npos)
      << watch.err();
  EXPECT_EQ(ShowJson(id)["state"], "JOB_RUNNING");
  EXPECT_EQ(Cli({"jobs", "cancel", id}).exit_code, 0);
}

TEST_F(CliOutput, TablesFitEightyColumnsAndWideShowsEveryParam) {
  ASSERT_NO_FATAL_FAILURE(WatchTheJob());
  const nlohmann::json job = ShowJson(job_id_);
  // The gemm's winning params, as the table writes them.
  std::string params;
  for (const auto& item : job["items"]) {
    if (item["key"]["op"] != "gemm") continue;
    std::map<std::string, std::string> sorted;
    for (const auto& [name, value] : item["best_params"].items()) {
      sorted[name] = value.get<std::string>();
    }
    for (const auto& [name, value] : sorted)
      params += (params.empty() ? "" : ",") + name + "=" + value;
  }
  ASSERT_GT(params.size(), 12u) << job.dump();

  auto items_table = [](const std::string& out) { return out.substr(out.find("\nITEM ") + 1); };
  {
    ColumnsVariable narrow("80");
    for (std::vector<std::string> args : {std::vector<std::string>{"jobs", "show", job_id_},
                                          {"jobs", "list"},
                                          {"records", "list"}}) {
      auto shown = Cli(args);
      ASSERT_EQ(shown.exit_code, 0) << shown.err;
      const std::string table =
          args[0] == "jobs" && args[1] == "show" ? items_table(shown.out) : shown.out;
      for (const auto& line : Lines(table)) EXPECT_LE(Columns(line), 80u) << line << "\n" << table;
      if (args[1] == "show") {
        EXPECT_EQ(table.find(params), std::string::npos) << table;
        EXPECT_NE(table.find("…"), std::string::npos) << table;
      }
    }
    auto wide = Cli({"--wide", "jobs", "show", job_id_});
    ASSERT_EQ(wide.exit_code, 0) << wide.err;
    EXPECT_NE(wide.out.find(params), std::string::npos) << wide.out;
    EXPECT_EQ(wide.out.find("…"), std::string::npos) << wide.out;
  }
  // Piped without COLUMNS: nothing is cut.
  auto piped = Cli({"jobs", "show", job_id_});
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_NE(piped.out.find(params), std::string::npos) << piped.out;
  EXPECT_EQ(piped.out.find("…"), std::string::npos) << piped.out;
  // On an 80-column terminal as with COLUMNS=80.
  auto terminal = RunOnTerminal(CliArgs({"jobs", "show", job_id_}), 80);
  ASSERT_EQ(terminal.exit_code, 0) << terminal.out;
  for (const auto& line : Lines(items_table(terminal.out), "\r\n")) {
    EXPECT_LE(Columns(line), 80u) << line;
  }
}

TEST_F(CliOutput, TheSpecOfJobsShowJsonResubmitsAsItIs) {
  ASSERT_NO_FATAL_FAILURE(WatchTheJob());
  const nlohmann::json spec = ShowJson(job_id_)["spec"];
  const auto file = dir_->path() / "again.json";
  std::ofstream(file) << spec.dump(2);
  auto submitted = Cli({"submit", file.string()});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  const std::string again = Lines(submitted.out).front();
  EXPECT_NE(again, job_id_);
  EXPECT_EQ(ShowJson(again)["spec"], spec);
  Cli({"jobs", "cancel", again});
}

TEST_F(CliOutput, AnExportReimportsAndTheDuplicateHintNamesTheReplaceFlag) {
  ASSERT_NO_FATAL_FAILURE(WatchTheJob());
  const auto exported = dir_->path() / "records.jsonl";
  auto exp = Cli({"records", "export", "-o", exported.string()});
  ASSERT_EQ(exp.exit_code, 0) << exp.err;
  auto again = Cli({"records", "import", exported.string()});
  EXPECT_EQ(again.exit_code, 6) << again.err << again.out;
  EXPECT_NE(again.out.find("record already exists; import with replace to overwrite it "
                           "(`tiletune records import --replace`)"),
            std::string::npos)
      << again.out;
  auto replaced = Cli({"records", "import", "--replace", exported.string()});
  EXPECT_EQ(replaced.exit_code, 0) << replaced.err << replaced.out;
  EXPECT_NE(replaced.out.find("imported 3 records"), std::string::npos) << replaced.out;
}

}  // namespace
}  // namespace tiletune::testing
