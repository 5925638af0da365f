#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <iostream>

#include "app/publish_build.h"
#include "app/wheelhouse_guard.h"
#include "cli/parse_subcommand.h"
#include "cli/report.h"
#include "cli/subcommands.h"
#include "util/log.h"

namespace fabuild {

namespace {

constexpr const char* kDescription = R"(fabuild index: make a wheelhouse's pip indexes and matrix page again.

Reads every wheel under WHEELHOUSE (default ./wheelhouse), with manifest.json and the last run's
report.json, and writes, each file whole (temporary file, then rename):
  simple/                       a PEP 503 index of every wheel: #sha256= on each link,
                                data-requires-python, PEP 658/714 metadata (<wheel>.metadata)
  <cuXYZ>/torch<series>/simple/ one index per CUDA x torch variant: pip picks the wheel for
                                the Python it runs on
  index.html                    the matrix page: built / failed / not built per cell, sizes,
                                sha256, pip lines, a filter box, failed cells' logs, the timeline
  summary.md                    the last run in Markdown (CI step summary), if there is a report
Links are relative: serve the directory from any static host, or use it from file://.
A build runs this at its end. Pages of wheels that are gone are removed.
A directory with no manifest.json is no fabuild wheelhouse: it is refused and left as it was,
unless --adopt (then only fabuild's own files are written; none it did not write is replaced
or removed).
Exit codes: 0 ok, 1 a wheel could not be published (each is named) or a write failed,
2 WHEELHOUSE is not a directory, is not a fabuild wheelhouse, or a flag is wrong, 4 a build
holds the wheelhouse (--wait-lock waits for it).)";

constexpr const char* kFooter = R"(
Examples:
  fabuild index                      # ./wheelhouse
  fabuild index /srv/wheels --base-url https://wheels.example/
  python3 -m http.server -d wheelhouse 8000   # then:
  pip install flash-attn --index-url http://127.0.0.1:8000/cu128/torch2.8/simple/)";

}  // namespace

int index_main(int argc, char** argv) {
  CLI::App app{kDescription, "fabuild index"};
  app.footer(kFooter);
  IndexOptions options;
  bool verbose = false;
  app.add_option("WHEELHOUSE", options.wheelhouse, "The wheelhouse directory (default: wheelhouse)");
  app.add_option("--base-url", options.base_url,
                 "Absolute URL the wheelhouse is served from, for the page's pip lines "
                 "(default: wherever the page is opened from)");
  app.add_flag("--adopt", options.adopt,
               "Index a directory that is not a fabuild wheelhouse (no manifest.json): only fabuild's own files are "
               "written, and none that fabuild did not write is replaced or removed");
  bool wait_lock = false;
  app.add_flag("--wait-lock", wait_lock, "Wait while a fabuild builds into the wheelhouse (default: exit 4)");
  app.add_flag("-v,--verbose", verbose, "More detail");
  app.add_flag("-q,--quiet", options.quiet, "Errors only");
  if (const auto done = parse_subcommand(app, argc, argv, "index")) return *done;
  init_logging(verbose, options.quiet);
  return report_errors([&] {
    const RealFiles files;
    check_indexable(options, files);
    const auto lock = lock_existing_wheelhouse(files, options.wheelhouse, "fabuild index", wait_lock, std::cout);
    return static_cast<int>(index_command(options, files, std::cout));
  });
}

}  // namespace fabuild
