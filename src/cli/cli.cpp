#include "cli/cli.h"

#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "app/run.h"
#include "util/error.h"
#include "util/log.h"

namespace fabuild {

namespace {

constexpr const char* kDescription = R"(fabuild: build prebuilt FlashAttention wheels across a matrix of versions.

Reads one YAML matrix (docs/matrix.md), expands it into cells (FlashAttention version x torch
series x CUDA set x Python tag x platform), drops impossible cells with the reason, and builds
the selected cells into WHEELHOUSE/fa<ver>/torch<series>/cu<xyz>/.

Filters take comma lists and globs ('cp31*'); several filters must all match.
Exit codes: 0 ok, 1 a cell failed, 2 bad configuration or flags, 3 no cell selected,
130/143 interrupted by SIGINT/SIGTERM.)";

constexpr const char* kFooter = R"(
Examples:
  fabuild matrix/example.yaml --dry-run
  fabuild matrix.yaml --torch 2.8 --python cp312,cp313 --list --format json
  fabuild matrix.yaml --only 'fa2.8.3-torch2.8-cu128-*'
  fabuild matrix.yaml --shard 2/4)";

void add_flags(CLI::App& app, Options& o, std::string& format, std::string& shard) {
  app.add_option("MATRIX", o.matrix, "The matrix file (YAML)")->required();
  app.add_flag("-n,--dry-run", o.dry_run, "Print the plan (cells, toolchain or image, env, MAX_JOBS); build nothing");
  app.add_flag("--list", o.list, "List the selected cells, one per line; build nothing");
  app.add_option("--format", format, "Output of --list and --dry-run: table or json")
      ->check(CLI::IsMember({"table", "json"}));
  const char* filters = "Filters";
  app.add_option("--fa", o.filters.version, "FlashAttention versions, e.g. 2.8.3")->delimiter(',')->group(filters);
  app.add_option("--torch", o.filters.torch, "torch series or pins, e.g. 2.8")->delimiter(',')->group(filters);
  app.add_option("--cuda", o.filters.cuda, "CUDA sets or torch CUDA builds, e.g. 12.8 or cu128")->delimiter(',')->group(filters);
  app.add_option("--python", o.filters.python, "Python tags, e.g. cp312 or 3.12")->delimiter(',')->group(filters);
  app.add_option("--platform", o.filters.platform, "linux_x86_64, linux_aarch64, win_amd64")->delimiter(',')->group(filters);
  app.add_option("--only", o.filters.only, "Cell ids (globs allowed)")->delimiter(',')->group(filters);
  app.add_option("--shard", shard, "Only shard K of N (1-based), balanced by expected cost")->group(filters);
  app.add_flag("--allow-empty", o.allow_empty, "Exit 0 instead of 3 when no cell is selected")->group(filters);
  app.add_option("-o,--output-dir", o.output_dir, "Wheelhouse directory (default: the matrix's wheelhouse:, else ./wheelhouse)");
  app.add_option("--cores", o.cores, "Cores for builds (default: cgroup quota or CPU affinity)")->check(CLI::PositiveNumber);
  app.add_option("--memory-gb", o.memory_gb, "Memory for builds in GB before the reserve (default: available)")
      ->check(CLI::PositiveNumber);
  app.add_option("-j,--jobs", o.jobs, "Most cells to build at once")->check(CLI::PositiveNumber);
  app.add_flag("--force", o.force, "Rebuild cells whose wheel is already filed and verifies");
  app.add_flag("--fail-fast", o.fail_fast, "Stop at the first failed cell (default: keep going)");
  app.add_flag("-v,--verbose", o.verbose, "More detail: every cell in full with --dry-run, cell output while building");
  app.add_flag("-q,--quiet", o.quiet, "Errors only");
}

void print_error(const UserError& e) {
  const std::string where = e.where().str();
  fmt::print(stderr, "fabuild: error: {}{}\n", where.empty() ? "" : where + ": ", e.message());
  if (!e.hint().empty()) fmt::print(stderr, "  hint: {}\n", e.hint());
}

}  // namespace

int cli_main(int argc, char** argv) {
  CLI::App app{kDescription, "fabuild"};
  app.footer(kFooter);
  app.set_version_flag("--version", "fabuild 0.1.0");
  Options options;
  std::string format = "table";
  std::string shard;
  add_flags(app, options, format, shard);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "fabuild: error: {}\n  hint: fabuild --help lists the flags\n", e.what());
    return kExitBadConfig;
  }

  init_logging(options.verbose, options.quiet);
  options.format = format == "json" ? OutputFormat::kJson : OutputFormat::kTable;
  try {
    if (!shard.empty()) {
      options.shard = parse_shard(shard);
      if (!options.shard) {
        throw config_error(Location{}, fmt::format("--shard {}: expected K/N with 1 <= K <= N", shard), "e.g. --shard 2/4");
      }
    }
    return run(options, std::cout);
  } catch (const UserError& e) {
    print_error(e);
    return e.code();
  } catch (const std::exception& e) {
    // A bug, not a user error: say so plainly instead of aborting.
    fmt::print(stderr, "fabuild: internal error: {}\n  hint: please report this with the matrix file\n", e.what());
    return kExitCellFailed;
  }
}

}  // namespace fabuild
