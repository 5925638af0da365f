#include "cli/cli.h"

int main(int argc, char** argv) { return fabuild::cli_main(argc, argv); }
