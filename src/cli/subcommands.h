#pragma once

// `fabuild NAME ...` for the commands that take no matrix: each parses its own flags (and
// --help). Adding one is one entry in kSubcommands (cli.cpp) and its *_main.

namespace fabuild {

struct Subcommand {
  const char* name;   // argv[1]
  const char* usage;  // for fabuild --help: "merge PART... -o OUT"
  const char* summary;
  int (*main)(int argc, char** argv);  // argv[0] is the subcommand's name
};

// fabuild merge PART... -o OUT (merge_cli.cpp).
int merge_main(int argc, char** argv);
// fabuild index [WHEELHOUSE] (index_cli.cpp).
int index_main(int argc, char** argv);
// fabuild toolkit install CUDA (toolkit_cli.cpp).
int toolkit_main(int argc, char** argv);
// fabuild model [FILE] (model_cli.cpp).
int model_main(int argc, char** argv);

}  // namespace fabuild
