#pragma once

#include <optional>
#include <string>

#include "matrix/select.h"

namespace fabuild {

enum class OutputFormat { kTable, kJson };

// Everything the command line says, parsed; the app layer acts on it.
struct Options {
  std::string matrix;
  bool dry_run = false;
  bool list = false;
  OutputFormat format = OutputFormat::kTable;
  Filters filters;
  std::optional<Shard> shard;
  bool allow_empty = false;
  bool fail_fast = false;
  bool force = false;
  std::optional<std::string> output_dir;
  std::optional<double> cores;
  std::optional<double> memory_gb;
  std::optional<int> jobs;
  bool verbose = false;
  bool quiet = false;
};

}  // namespace fabuild
