#pragma once

// A subcommand's flags parsed by CLI11 (subcommands.h): --help printed, or a wrong flag said as
// "fabuild: error: NAME: ..." with a hint to NAME's --help, exit 2. CLI11 says both by throwing;
// this is the one place a subcommand catches them.

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

namespace fabuild {

// nullopt: parsed, go on; else the exit code to return (0 after --help).
std::optional<int> parse_subcommand(CLI::App& app, int argc, char** argv, const std::string& name,
                                    const std::string& help = {});

}  // namespace fabuild
