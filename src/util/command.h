#pragma once

// Runs one short command to completion and captures what it prints: `nvcc --version`,
// `python -c ...`. Long work (builds) goes through the engine instead.

#include <chrono>
#include <string>
#include <vector>

#include "util/process.h"

namespace fabuild {

struct CommandResult {
  ExitStatus status;
  std::string output;  // stdout and stderr together, at most the first 1 MiB
  [[nodiscard]] bool ok() const { return status.ok(); }
};

// The seam for code that asks the machine questions; tests give it a fake.
class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  virtual CommandResult run(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                            std::chrono::milliseconds timeout) = 0;
};

// Real processes, through a ProcessSupervisor of their own.
class ProcessCommandRunner : public CommandRunner {
 public:
  CommandResult run(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                    std::chrono::milliseconds timeout) override;
};

}  // namespace fabuild
