#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <iostream>

#include "app/merge.h"
#include "app/wheelhouse_guard.h"
#include "cli/parse_subcommand.h"
#include "cli/report.h"
#include "cli/subcommands.h"
#include "util/log.h"

namespace fabuild {

namespace {

constexpr const char* kDescription = R"(fabuild merge: merge partial wheelhouses into one.

Each PART is a wheelhouse as a build's -o made it (one per CI job or shard). Their wheels are
copied to the same paths under OUT, each directory's SHA256SUMS is rewritten, the manifests'
cells are merged and logs/ is merged (a different log of the same name is kept beside it as
NAME.partK.log). Two different files under one name, or one cell filed with two different
wheels, are refused, all listed with both digests, and nothing is written; an identical
duplicate is taken once. Every file appears whole (temporary file, then rename); merging the
same parts again changes nothing.
Exit codes: 0 merged, 1 refused (a conflict or a damaged part) or a write failed,
2 bad arguments (a PART or OUT that is not a directory), 4 a build holds OUT (--wait-lock
waits for it).)";

constexpr const char* kFooter = R"(
Examples:
  fabuild merge parts/* -o wheelhouse
  fabuild merge --dry-run shard-1 shard-2 -o wheelhouse)";

}  // namespace

int merge_main(int argc, char** argv) {
  CLI::App app{kDescription, "fabuild merge"};
  app.footer(kFooter);
  MergeOptions options;
  bool verbose = false;
  bool quiet = false;
  app.add_option("PART", options.parts, "Partial wheelhouses to merge")->required();
  app.add_option("-o,--output-dir", options.out, "The merged wheelhouse (created if missing; may hold wheels already)")
      ->required();
  app.add_flag("-n,--dry-run", options.dry_run, "Check everything and say what would be merged; write nothing");
  bool wait_lock = false;
  app.add_flag("--wait-lock", wait_lock, "Wait while a fabuild builds into OUT (default: exit 4)");
  app.add_flag("-v,--verbose", verbose, "More detail");
  app.add_flag("-q,--quiet", quiet, "Errors only");
  if (const auto done = parse_subcommand(app, argc, argv, "merge")) return *done;
  init_logging(verbose, quiet);
  return report_errors([&] {
    std::ostringstream quiet_sink;
    std::ostream& out = quiet ? quiet_sink : std::cout;
    // A dry run writes nothing and takes no lock.
    const RealFiles files;
    const auto lock =
        options.dry_run ? nullptr : lock_existing_wheelhouse(files, options.out, "fabuild merge", wait_lock, out);
    return static_cast<int>(merge_wheelhouses(options, out));
  });
}

}  // namespace fabuild
