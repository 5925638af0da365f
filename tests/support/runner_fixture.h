#pragma once

// The runner's tests' fixture (tests/engine/runner*_test.cpp): cells run by run_cells on a
// FakeSupervisor, in a scratch directory, with the status printed into a string.

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "engine/runner.h"
#include "fake_supervisor.h"
#include "scratch_dir.h"

namespace fabuild::test {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

// A step whose argv holds {placeholders} (a command cell's command).
inline Step templated(Step s) {
  s.templated = true;
  return s;
}

// run_cells on the real process supervisor, with four cores and 16 GB, PATH=/usr/bin:/bin, and
// the status printed into `printed` (tests/engine/runner_*_posix_test.cpp).
inline RunReport run_for_real(const std::vector<CellRun>& cells, std::ostream& printed, milliseconds tick) {
  auto supervisor = make_process_supervisor();
  auto status = make_status_printer(printed, false);
  RunSettings settings;
  settings.base_env = Environment::parse(std::vector<std::string>{"PATH=/usr/bin:/bin"});
  settings.tick = tick;
  RealFiles files;
  return run_cells(cells, make_budget(Resources{4, 16, "test", "test"}, BudgetSpec{}), settings, *supervisor, files,
                   *status);
}

class Runner : public ::testing::Test {
 protected:
  CellRun cell(const std::string& id, double gb_per_job = 5, int threads = 1, double cost = 1) {
    CellRun c;
    c.id = id;
    c.steps = {templated(Step{"build", {"build", "{id}", "--jobs={max_jobs}"}, {}, {}, {}})};
    c.placeholders = {{"id", id}};
    c.demand = Demand{cost, gb_per_job, threads, std::nullopt};
    c.nvcc_threads = threads;
    c.log_path = (root / "logs" / (id + ".log")).string();
    c.staging_dir = (root / ".staging" / id).string();
    c.output_dir = (root / "out" / id).string();
    return c;
  }

  RunReport run(const std::vector<CellRun>& cells, const Budget& budget, RunSettings settings = {}) {
    settings.tick = milliseconds(0);
    auto status = make_status_printer(printed, false);
    return run_cells(cells, budget, settings, sup, *files, *status);
  }

  static Budget budget(double cores, double gb) {
    Budget b;
    b.cores = cores;
    b.memory_gb = gb;
    return b;
  }

  ScratchDir scratch{"fabuild-runner"};
  fs::path root = scratch.path();
  FakeSupervisor sup;
  std::shared_ptr<Files> files = std::make_shared<RealFiles>();  // the staging directories' and outputs'
  std::ostringstream printed;
};

}  // namespace fabuild::test
