#pragma once

namespace fabuild {

// Diagnostics go to stderr through spdlog: "fabuild: warning: ..." by default; with verbose,
// time and level too, and debug messages (argv, resolved configuration).
void init_logging(bool verbose, bool quiet);

}  // namespace fabuild
