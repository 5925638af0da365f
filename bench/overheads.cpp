// fabuild's own overheads, which every run pays on top of the compilers (docs/performance.md):
//
//   plan_100k   planning a 100 080-cell matrix: load, expand, filter, forecast the schedule
//               (make_plan, in process). Target: < 100 ms.
//   forecast_100k  the scheduler's part of that alone (engine/forecast.h).
//   noop_100    re-running a finished 100-cell matrix whose wheels are all filed: the real
//               fabuild binary, start to exit, including the up-to-date checks and the index
//               it publishes at the end. Target: < 1 s.
//
// Usage: bench_overheads [--wheel-mb N] [Google Benchmark flags]; FABUILD_BENCH_FABUILD and
// FABUILD_BENCH_SOURCE name another fabuild and checkout than those it was built with. The filed wheels are
// synthetic but verify like built ones (METADATA, tags, RECORD, the compiled module); their
// module is N MB of random bytes (default 6, about the example package's wheel).

#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "../tests/support/fake_system.h"
#include "../tests/support/wheel_writer.h"
#include "app/plan.h"
#include "engine/forecast.h"
#include "matrix/loader.h"
#include "wheel/layout.h"
#include "wheel/manifest.h"
#include "wheel/verify.h"
#include "wheel/wheelhouse.h"

extern char** environ;

namespace fs = std::filesystem;
using namespace fabuild;

namespace {

fs::path scratch() {
  static const fs::path dir = [] {
    const fs::path d = fs::temp_directory_path() / fmt::format("fabuild-bench-{}", ::getpid());
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

// The binary and the checkout this benchmark was built with, unless the environment names others
// (a copy of both on another machine).
std::string setting(const char* variable, const char* built_in) {
  const char* value = std::getenv(variable);
  return value != nullptr && value[0] != '\0' ? value : built_in;
}

System machine() { return testing::fake_system("/nonexistent/fabuild-bench-cache", 16, 128); }

// 1112 FlashAttention versions x torch 2.9-2.11 x CUDA 12.6, 12.8, 13.0 x cp310-cp314 x two
// platforms: 100 080 cells, every one buildable under the built-in compatibility tables from
// a torch index with every CUDA build (pip's index has one per series: 2/3 would be dropped).
// The index is never asked: planning reads the tables.
fs::path big_matrix() {
  const fs::path path = scratch() / "plan-100k.yaml";
  std::ofstream out(path);
  out << "package: flash-attn\nversions: [";
  for (int i = 0; i < 1112; ++i) out << (i ? ", " : "") << "\"2.8." << i << "\"";
  out << "]\ntorch: [\"2.9\", \"2.10\", \"2.11\"]\ncuda: [\"12.6\", \"12.8\", \"13.0\"]\n"
      << "python: [cp310, cp311, cp312, cp313, cp314]\nplatform: [linux_x86_64, linux_aarch64]\n"
      << "archs: \"80;90\"\nprovision: host\nsource: {path: .}\ntorch_index: https://torch-index.invalid/whl\n";
  return path;
}

void plan_100k(benchmark::State& state) {
  Options o;
  o.matrix = big_matrix().string();
  o.output_dir = (scratch() / "house-100k").string();
  o.no_cache = true;
  std::size_t cells = 0;
  for (auto _ : state) {
    const Plan plan = make_plan(o, machine());
    cells = plan.cells.size();
    benchmark::DoNotOptimize(cells);
  }
  state.counters["cells"] = static_cast<double>(cells);
}

// The scheduler's part of planning alone: forecasting the whole matrix's schedule.
void forecast_100k(benchmark::State& state) {
  const MatrixSpec spec = load_matrix(big_matrix().string());
  const std::vector<Cell> cells = expand(spec).cells;
  Budget budget;
  budget.cores = 16;
  budget.memory_gb = 100;
  for (auto _ : state) {
    const Forecast f = forecast(cells, budget);
    benchmark::DoNotOptimize(f.at_once);
  }
  state.counters["cells"] = static_cast<double>(cells.size());
}

// The example package for 100 cells: 5 versions x torch 2.10, 2.11 x CUDA 12.8, 13.0 x 5 Pythons,
// from a torch index with every CUDA build (never asked: the cells are up to date).
fs::path small_matrix() {
  const fs::path path = scratch() / "noop-100.yaml";
  std::ofstream out(path);
  out << "package: flash-example\nversions: [\"0.1.0\", \"0.1.1\", \"0.1.2\", \"0.1.3\", \"0.1.4\"]\n"
      << "torch: [\"2.10\", \"2.11\"]\ncuda: [\"12.8\", \"13.0\"]\npython: [cp310, cp311, cp312, cp313, cp314]\n"
      << "archs: \"90\"\nprovision: host\nsource: {path: " << setting("FABUILD_BENCH_SOURCE", FABUILD_SOURCE_DIR)
      << "/examples/flash_example}\ntorch_index: https://torch-index.invalid/whl\n";
  return path;
}

// Files a wheel for every cell as a build would: verified, moved in, SHA256SUMS, manifest.
fs::path finished_wheelhouse(std::size_t module_bytes) {
  const fs::path house = scratch() / "house-100";
  if (fs::exists(house / kManifestName)) return house;
  Options o;
  o.matrix = small_matrix().string();
  o.output_dir = house.string();
  const Plan plan = make_plan(o, machine());
  std::mt19937_64 random(8);
  std::string module(module_bytes, '\0');
  for (auto& c : module) c = static_cast<char>(random());
  for (const PlannedCell& p : plan.cells) {
    const WheelExpectation e = expectation_for(p.cell);
    test::TestWheel w;
    w.dist = w.metadata_name = e.dist_name;
    w.version = w.metadata_version = e.version;
    w.tag = e.python_tag + "-" + e.abi_tag + "-" + e.platform_tag;
    w.files = {{"flash_example/__init__.py", "__version__ = \"0.1.0\"\n"},
               {p.cell.package->extension + ".cpython-3x-x86_64-linux-gnu.so", module}};
    const fs::path staged = scratch() / "staged";
    fs::create_directories(staged);
    const fs::path wheel = w.write(staged);
    if (!verify_wheel(wheel, expectation_for(p.cell, {p.cell.package->extension + "*.so"})).ok()) {
      throw std::runtime_error("the synthetic wheel does not verify: " + wheel.string());
    }
    const FiledFile f = file_wheel(wheel, house / wheelhouse_subdir(p.cell)).value();
    FiledWheel entry;
    entry.wheel = fs::relative(f.path, house).generic_string();
    entry.sha256 = f.sha256;
    entry.size = f.size;
    entry.build_seconds = 60;
    if (const auto recorded = record_filed(house, p.id, entry); !recorded) {
      throw std::runtime_error("cannot record the synthetic wheel: " + recorded.error().what);
    }
  }
  return house;
}

int run_fabuild(const std::vector<std::string>& args, const fs::path& log) {
  std::vector<std::string> argv = {setting("FABUILD_BENCH_FABUILD", FABUILD_BINARY)};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> c;
  for (auto& a : argv) c.push_back(a.data());
  c.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  int status = 0;
  if (posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, c.data(), environ) != 0) return 127;
  posix_spawn_file_actions_destroy(&actions);
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::size_t g_module_mb = 6;

void noop_100(benchmark::State& state) {
  const fs::path house = finished_wheelhouse(g_module_mb * 1000 * 1000);
  const fs::path log = scratch() / "noop.log";
  // The first run after filing publishes the index and reads each wheel once; later ones are
  // the no-op re-runs this measures.
  if (run_fabuild({small_matrix().string(), "-o", house.string()}, log) != 0) {
    state.SkipWithError(("the first re-run failed; see " + log.string()).c_str());
    return;
  }
  for (auto _ : state) {
    if (run_fabuild({small_matrix().string(), "-o", house.string()}, log) != 0) {
      state.SkipWithError(("fabuild failed; see " + log.string()).c_str());
      return;
    }
  }
  std::ifstream in(log);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.find("100 up to date") == std::string::npos) state.SkipWithError("not every cell was up to date");
}

// Keeps each benchmark's mean wall time for the summary printed last.
class Summary : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& r : runs) {
      if (r.error_occurred || r.iterations == 0) continue;
      seconds[r.run_name.function_name] = r.real_accumulated_time / static_cast<double>(r.iterations);
    }
    ConsoleReporter::ReportRuns(runs);
  }
  std::map<std::string, double> seconds;
};

}  // namespace

BENCHMARK(plan_100k)->Unit(benchmark::kMillisecond)->Iterations(5);
BENCHMARK(forecast_100k)->Unit(benchmark::kMillisecond)->Iterations(5);
BENCHMARK(noop_100)->Unit(benchmark::kMillisecond)->Iterations(5)->UseRealTime();

int main(int argc, char** argv) {
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::string(argv[i]) == "--wheel-mb" && i + 1 < argc) {
      g_module_mb = std::stoul(argv[++i]);
      continue;
    }
    args.push_back(argv[i]);
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  Summary summary;
  benchmark::RunSpecifiedBenchmarks(&summary);
  benchmark::Shutdown();
  std::error_code ec;
  if (std::getenv("FABUILD_BENCH_KEEP") == nullptr)
    fs::remove_all(scratch(), ec);
  else
    std::cout << "kept " << scratch().string() << "\n";
  // Ratios last: measured over target, <= 1 meets it.
  const auto line = [&](const char* name, const char* what, double target_s) {
    const auto it = summary.seconds.find(name);
    if (it == summary.seconds.end()) {
      std::cout << fmt::format("{:<44} not measured\n", what);
      return false;
    }
    const double ratio = it->second / target_s;
    std::cout << fmt::format("{:<44} {:8.1f} ms  target < {:6.0f} ms  ratio {:.2f}\n", what, it->second * 1000,
                             target_s * 1000, ratio);
    return ratio <= 1;
  };
  std::cout << "\n";
  const bool plan_ok = line("plan_100k", "plan a 100 080-cell matrix", 0.1);
  line("forecast_100k", "  of which the scheduler's forecast", 0.1);
  const bool noop_ok =
      line("noop_100", fmt::format("no-op re-run of 100 filed cells ({} MB wheels)", g_module_mb).c_str(), 1.0);
  return plan_ok && noop_ok ? 0 : 1;
}
