#pragma once

// The fixture of the app layer's plan tests (plan_test.cpp, render_test.cpp): a matrix file in a
// scratch project, a fake System whose command runner answers nvcc's and Python's probes from a
// table, and make_plan over them, with nothing asked of this machine.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "../support/fake_system.h"
#include "../support/scratch_dir.h"
#include "app/plan.h"

namespace fabuild {

namespace fs = std::filesystem;

// Answers the questions a plan asks of a host (nvcc --version, which Python, which torch, which
// compiler) from a table keyed by the program, and records every question.
class AnsweringRunner : public CommandRunner {
 public:
  std::map<std::string, std::string> answers;  // argv[0] (or argv[1] for /usr/bin/env) -> output
  std::vector<std::vector<std::string>> asked;

  CommandResult run(const std::vector<std::string>& argv, const std::vector<std::string>&,
                    std::chrono::milliseconds) override {
    asked.push_back(argv);
    const std::string program = argv.at(0) == "/usr/bin/env" ? argv.at(1) : argv.at(0);
    CommandResult r;
    const auto it = answers.find(program);
    if (it == answers.end()) {
      r.status.code = 127;
      r.output = program + ": not found";
    } else {
      r.output = it->second;
    }
    return r;
  }
};

inline void write_executable(const fs::path& path) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << "#!/bin/sh\nexit 99\n";  // never run: the fake runner answers for it
  fs::permissions(path, fs::perms::owner_all);
}

class AppPlan : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = dir_.path();
    matrix_ = root_ / "project" / "matrix" / "m.yaml";
    fs::create_directories(matrix_.parent_path());
    cuda_ = root_ / "cuda-13.0";
    python_ = root_ / "py312" / "bin" / "python3.12";
    const fs::path python311 = root_ / "py311" / "bin" / "python3.11";
    write_executable(cuda_ / "bin" / "nvcc");
    write_executable(python_);
    write_executable(python311);
    // The toolchains directory is found from the matrix file: project/toolchains/.
    fs::create_directories(root_ / "project" / "toolchains");
    std::ofstream(root_ / "project" / "toolchains" / "host.yaml")
        << "cuda:\n  \"13.0\": " << cuda_.string() << "\npython:\n  cp312: " << python_.string()
        << "\n  cp311: " << python311.string() << "\n";

    runner_ = std::make_shared<AnsweringRunner>();
    runner_->answers[(cuda_ / "bin" / "nvcc").string()] =
        "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 13.0, V13.0.88\n";
    runner_->answers[python_.string()] = "3.12\n" + python_.string() + "\n";
    runner_->answers[python311.string()] = "3.11\n" + python311.string() + "\n";
    runner_->answers["c++"] = "c++ (Debian 12.2.0-14) 12.2.0\n";
    system_ = testing::fake_system(root_ / "cache", 8, 32);
    system_.env = Environment{{"PATH", (root_ / "empty-bin").string()}, {"HOME", (root_ / "home").string()}};
    system_.commands = runner_;
  }

  void write_matrix(const std::string& extra, const std::string& versions = "[\"2.8.3\"]",
                    const std::string& torch = "[\"2.11\"]") {
    std::ofstream(matrix_) << "package: flash-attn\nversions: " << versions << "\ntorch: " << torch
                           << "\ncuda: [\"13.0\"]\n"
                              "provision: host\npython_env: pip\nsource: {path: "
                           << (root_ / "src").string() << "}\n"
                           << extra;
    fs::create_directories(root_ / "src");
    std::ofstream(root_ / "src" / "setup.py") << "# a source tree\n";
  }

  Plan plan(Options o = {}) {
    o.matrix = matrix_.string();
    o.output_dir = (root_ / "wheelhouse").string();
    return make_plan(o, system_);
  }

  test::ScratchDir dir_{"app-plan"};
  fs::path root_, matrix_, cuda_, python_;
  std::shared_ptr<AnsweringRunner> runner_;
  System system_;
};

}  // namespace fabuild
