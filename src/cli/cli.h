#pragma once

namespace fabuild {

// Parses argv, runs the command, prints errors; returns the process exit code.
int cli_main(int argc, char** argv);

}  // namespace fabuild
