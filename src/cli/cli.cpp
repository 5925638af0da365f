#include "cli/cli.h"

#include <algorithm>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "app/ci_providers.h"
#include "app/matrix_command.h"
#include "cli/report.h"
#include "cli/subcommands.h"
#include "cli/system.h"
#include "matrix/axes.h"
#include "matrix/axis_set.h"
#include "matrix/budget_limits.h"
#include "matrix/shard_auto.h"
#include "util/error.h"
#include "util/host_info.h"
#include "util/log.h"
#include "util/text.h"

namespace fabuild {

namespace {

// A budget flag's range, said in words: "--jobs: must be at least 1, not 0" rather than CLI11's
// range of doubles; nan and inf are no numbers. The range is the matrix's `budget:` key's
// (matrix/budget_limits.h): the flag and the key take the same numbers.
CLI::Validator budget_range(std::string_view key) {
  const BudgetLimit& limit = budget_limit(key);
  return CLI::Validator([range = limit.range](std::string& text) { return number_complaint(text, range); }, "",
                        std::string(limit.flag));
}

// `fabuild NAME ...`: commands that take no matrix, each with its own flags and --help.
constexpr Subcommand kSubcommands[] = {
    {"merge", "merge PART... -o OUT", "merge partial wheelhouses (CI jobs, shards) into one", merge_main},
    {"index", "index [WHEELHOUSE]", "make the pip indexes and the matrix page again (docs/index.md)", index_main},
    {"toolkit", "toolkit install CUDA", "install a CUDA toolkit from PyPI (docs/host-builds.md)", toolkit_main},
    {"model", "model [FILE]", "the CI cost model on JSON, for bench/release_sim.py (docs/performance.md)", model_main},
};

constexpr const char* kDescription = R"(fabuild: build prebuilt FlashAttention wheels across a matrix of versions.

Reads one YAML matrix (docs/matrix.md), expands it into cells (FlashAttention version x torch
series x CUDA set x Python tag x platform), drops impossible cells with the reason, and builds
the selected cells into WHEELHOUSE/fa<ver>/torch<series>/cu<xyz>/.

Filters take comma lists and globs ('cp31*'); several filters must all match.
Exit codes: 0 ok, 1 a cell failed, 2 bad configuration or flags, 3 no cell selected,
4 another fabuild holds the wheelhouse, 130/143 interrupted by SIGINT/SIGTERM.)";

constexpr const char* kFooter = R"(
Examples:
  fabuild matrix/example.yaml --dry-run
  fabuild matrix.yaml --torch 2.8 --python cp312,cp313 --list --format json
  fabuild matrix.yaml --only 'fa2.8.3-torch2.8-cu128-*'
  fabuild matrix.yaml --artifact library      # the torch-free C++ library cells (docs/library.md)
  fabuild matrix.yaml --shard 2/4
  fabuild matrix.yaml --shard auto           # from GitLab's or Buildkite's parallel-job variables
  fabuild matrix.yaml --ci-matrix github     # the jobs of a GitHub Actions matrix, as JSON
  fabuild matrix.yaml --ci-matrix gitlab     # ...of a GitLab child pipeline (buildkite: a pipeline))";

std::string commands_footer() {
  std::string text = "\nCommands (each has --help):";
  for (const auto& c : kSubcommands) text += fmt::format("\n  fabuild {:<24} {}", c.usage, c.summary);
  return text;
}

// A flag's value among a few words, refused with a did-you-mean as matrix values are.
CLI::Validator one_of(std::vector<std::string> words) {
  return CLI::Validator(
      [words](std::string& value) -> std::string {
        if (std::find(words.begin(), words.end(), value) != words.end()) return {};
        return fmt::format("'{}' is not {}{}", value, join(words, " or "), did_you_mean(value, words));
      },
      join(words, "|"));
}

void add_flags(CLI::App& app, Options& o, std::string& format, std::string& shard, std::string& compile_share,
               std::vector<std::string>& sets) {
  app.add_option("MATRIX", o.matrix, "The matrix file (YAML)")->required();
  app.add_option("--set", sets,
                 fmt::format("Replace an axis of the matrix for this run: AXIS=V1,V2 ({}), e.g. --set "
                             "torch=2.12,2.13; repeatable",
                             join(settable_axes())))
      ->allow_extra_args(false);  // one AXIS=VALUES per --set: the matrix may follow
  app.add_flag("-n,--dry-run", o.dry_run, "Print the plan (cells, toolchain or image, env, MAX_JOBS); build nothing");
  app.add_flag("--list", o.list, "List the selected cells, one per line; build nothing");
  app.add_option("--format", format, "Output of --list and --dry-run: table or json")->check(one_of({"table", "json"}));
  const char* filters = "Filters";
  for (const AxisRow& row : axis_rows()) {
    if (row.flag.empty()) continue;
    app.add_option(std::string(row.flag), o.filters[row.axis], std::string(row.help))->delimiter(',')->group(filters);
    if (!row.alt_key.empty()) {  // the GPU set's other key: --rocm 6.2 is --cuda rocm6.2
      app.add_option("--" + std::string(row.alt_key), o.filters.rocm, "ROCm sets, e.g. 6.2")
          ->delimiter(',')
          ->group(filters);
    }
  }
  app.add_option("--only", o.filters.only, "Cell ids (globs allowed)")->delimiter(',')->group(filters);
  app.add_option("--shard", shard,
                 "Only shard K of N (1-based), balanced by expected cost; 'auto': K/N from FABUILD_SHARD, GitLab's "
                 "CI_NODE_INDEX/CI_NODE_TOTAL or Buildkite's BUILDKITE_PARALLEL_JOB/_COUNT")
      ->group(filters);
  app.add_option("--compile-share", compile_share,
                 "Compile share K of N of one row's kernel units and send them to the remote cache; file no wheel "
                 "(the row's finishing job does: docs/ci.md)")
      ->group(filters);
  app.add_option("--share-costs", o.share_costs,
                 "With --compile-share: split by the row's unit-cost record of this SHA-256 on the remote, or 'none' "
                 "(guessed costs), as the --ci-matrix plan says; default: the latest record")
      ->group(filters);
  app.add_flag("--strict", o.strict,
               "Refuse cells that would build the same wheel as another (default: drop them with a note)");
  app.add_flag("--split-rows", o.split_rows,
               "Let --shard and --ci-matrix split a row (the cells differing only in Python tag) over jobs: "
               "less wall time, more runner time (each job compiles the row's kernels)")
      ->group(filters);
  app.add_flag("--allow-empty", o.allow_empty, "Exit 0 instead of 3 when no cell is selected")->group(filters);
  std::vector<std::string> providers;
  for (const CiProvider& p : ci_providers()) providers.emplace_back(p.name);
  app.add_option("--ci-matrix", o.ci_matrix,
                 "Print the selected cells as the jobs of a CI system (" + ci_provider_names() +
                     "): github a strategy.matrix's JSON, gitlab a child pipeline, buildkite a pipeline to upload "
                     "(docs/ci.md)")
      ->check(one_of(providers));
  app.add_option("-o,--output-dir", o.output_dir,
                 "Wheelhouse directory (default: the matrix's wheelhouse:, else ./wheelhouse)");
  app.add_option("--torch-index", o.torch_index,
                 "Where torch comes from, instead of the matrix's torch_index: a PyTorch-style index base URL (the "
                 "cell's cuXYZ is appended) or a directory of wheels")
      ->envname("FABUILD_TORCH_INDEX");
  app.add_option("--cores", o.cores, "Cores for builds (default: cgroup quota or CPU affinity)")
      ->check(budget_range("cores"));
  app.add_option("--memory-gb", o.memory_gb, "Memory for builds in GB before the reserve (default: available)")
      ->check(budget_range("memory_gb"));
  app.add_option("-j,--jobs", o.max_cells, "Most cells to build at once")->check(budget_range("jobs"));
  app.add_flag("--force", o.force, "Rebuild cells whose wheel is already filed and verifies");
  app.add_flag("--rebuild-check", o.rebuild_check,
               "Build the selected filed cells again into WHEELHOUSE/.rebuild-check (every unit compiled anew) and "
               "compare each wheel with the filed one, byte for byte; exit 1 when one differs (docs/security.md)");
  const char* cache = "Object cache (docs/performance.md)";
  app.add_flag("--no-cache", o.no_cache, "Compile without the object cache")->group(cache);
  app.add_option("--cache-dir", o.cache_dir, "Object cache directory (default: <fabuild cache>/objects)")->group(cache);
  app.add_option("--cache-size", o.cache_size, "Trim the object cache to this size after the build (default 20G)")
      ->group(cache);
  app.add_flag("--prepare", o.prepare,
               "Make the Python environments and CUDA toolkits the selected cells need, build nothing (a CI step "
               "that caches them)");
  app.add_option("--verify-torch", o.verify_torch,
                 "Check the selected cells' filed wheels under these torch series (the index's release of each, of "
                 "the wheel's CUDA major), build nothing; the proofs go into the manifest and the page "
                 "(docs/stable-abi.md)")
      ->delimiter(',');
  app.add_flag("--no-sweep", o.no_sweep,
               "Check a stable-ABI wheel under the torch it is built against only, not every release of its window "
               "(a CI build job, whose other releases are --verify-torch jobs)");
  app.add_flag("--fail-fast", o.fail_fast, "Stop at the first failed cell (default: keep going)");
  app.add_flag("--wait-lock", o.wait_lock, "Wait while another fabuild builds into the wheelhouse (default: exit 4)");
  app.add_flag("-v,--verbose", o.verbose, "More detail: every cell in full with --dry-run, cell output while building");
  app.add_flag("-q,--quiet", o.quiet, "Errors only");
}

std::optional<Shard> shard_option(const std::string& text, const Environment& env) {
  if (text.empty()) return std::nullopt;
  if (text == "auto") {
    const ShardFromEnv found = shard_from_environment(env, ci_shard_variables());
    spdlog::info("shard {}/{} from {}", found.shard.index, found.shard.count, found.source);
    return found.shard;
  }
  const auto shard = parse_shard(text);
  if (!shard) {
    throw config_error(Location{}, fmt::format("--shard {}: expected K/N with 1 <= K <= N, or auto", text),
                       "e.g. --shard 2/4");
  }
  return shard;
}

}  // namespace

int cli_main(int argc_given, char** argv_given) {
  std::vector<std::string> arguments = utf8_arguments(argc_given, argv_given);
  std::vector<char*> pointers;
  for (auto& a : arguments) pointers.push_back(a.data());
  pointers.push_back(nullptr);
  const int argc = static_cast<int>(arguments.size());
  char** argv = pointers.data();
  if (argc > 1) {
    for (const auto& c : kSubcommands) {
      if (std::string_view(argv[1]) == c.name) return c.main(argc - 1, argv + 1);
    }
  }
  CLI::App app{kDescription, "fabuild"};
  app.footer(std::string(kFooter) + "\n" + commands_footer());
  app.set_version_flag("--version", "fabuild " FABUILD_VERSION);
  Options options;
  std::string format = "table";
  std::string shard;
  std::string compile_share;
  std::vector<std::string> sets;
  add_flags(app, options, format, shard, compile_share, sets);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // A misspelt flag: say which flag was meant, as for matrix keys.
    std::vector<std::string> flags;
    for (const CLI::Option* opt : app.get_options()) {
      for (const auto& name : opt->get_lnames()) flags.push_back("--" + name);
    }
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (!arg.starts_with("--")) continue;
      const std::string name = arg.substr(0, arg.find('='));
      if (std::find(flags.begin(), flags.end(), name) != flags.end()) continue;
      fmt::print(stderr, "fabuild: error: unknown flag {}{}\n  hint: fabuild --help lists the flags\n", name,
                 did_you_mean(name, flags));
      return kExitBadConfig;
    }
    fmt::print(stderr, "fabuild: error: {}\n  hint: fabuild --help lists the flags\n", e.what());
    return kExitBadConfig;
  }
  if (app.count("--format") > 0 && !options.list && !options.dry_run && options.ci_matrix.empty()) {
    fmt::print(stderr,
               "fabuild: error: --format {} shapes the output of --list and --dry-run; alone it would start a build\n"
               "  hint: add --list (the cells) or --dry-run (the plan)\n",
               format);
    return kExitBadConfig;
  }

  init_logging(options.verbose, options.quiet);
  options.format = format == "json" ? OutputFormat::kJson : OutputFormat::kTable;
  return report_errors([&] {
    const System system = real_system();  // the one place the world outside is reached from
    for (const auto& text : sets) options.sets.push_back(parse_axis_set(text));
    options.shard = shard_option(shard, system.env);
    if (!compile_share.empty()) {
      options.compile_share = parse_shard(compile_share);
      if (!options.compile_share) {
        throw config_error(Location{}, fmt::format("--compile-share {}: expected K/N with 1 <= K <= N", compile_share),
                           "e.g. --compile-share 3/8 (the --ci-matrix JSON gives each compile job its own)");
      }
    }
    return static_cast<int>(matrix_command(options, system, std::cout));
  });
}

}  // namespace fabuild
