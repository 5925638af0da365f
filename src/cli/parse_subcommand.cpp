#include "cli/parse_subcommand.h"

#include <cstdio>

#include <fmt/format.h>

#include "util/exit_code.h"

namespace fabuild {

std::optional<int> parse_subcommand(CLI::App& app, int argc, char** argv, const std::string& name,
                                    const std::string& help) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "fabuild: error: {}: {}\n  hint: fabuild {} --help lists the arguments\n", name, e.what(),
               help.empty() ? name : help);
    return kExitBadConfig;
  }
  return std::nullopt;
}

}  // namespace fabuild
