#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/parse_subcommand.h"
#include "cli/subcommands.h"
#include "costs/model_json.h"
#include "util/exit_code.h"

namespace fabuild {

namespace {

constexpr const char* kDescription = R"(fabuild model: the CI cost model on JSON, for a simulator.

Reads a request (one JSON object, or an array of them) from FILE or standard input and prints
the answer as JSON on one line: the share split (op "split"), fixed slots ("schedule"), the
memory gate's schedule ("gate"), a plan of rows from a row's record ("plan": each row's time
and shares, the balancer's counts, the job graph and when it ends on N runners), a job graph
replayed on N runners ("graph": a plan's jobs, or --ci-matrix github's), each the code
--ci-matrix plans with, what a running cell's progress line says at a moment of its
compiles ("progress"), or the costs a row with no record is guessed at ("guess");
src/costs/model_json.h lists the fields. bench/release_sim.py and
bench/eta_replay.py ask it for every figure of their models, so that the tool and the
simulators share one.
Exit codes: 0 answered, 2 a request that is not JSON or not a request.)";

constexpr const char* kFooter = R"(
Examples:
  echo '{"op": "schedule", "seconds": [5, 4, 3], "slots": 2}' | fabuild model
  fabuild model request.json)";

}  // namespace

int model_main(int argc, char** argv) {
  CLI::App app{kDescription, "fabuild model"};
  app.footer(kFooter);
  std::string file = "-";
  app.add_option("FILE", file, "The request (JSON); - or none: standard input");
  if (const auto done = parse_subcommand(app, argc, argv, "model")) return *done;
  std::string text;
  if (file == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      fmt::print(stderr, "fabuild: error: model: cannot read {}\n", file);
      return kExitBadConfig;
    }
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const nlohmann::json request = nlohmann::json::parse(text, nullptr, false);
  if (request.is_discarded()) {
    fmt::print(stderr, "fabuild: error: model: {}: not JSON\n", file == "-" ? "standard input" : file);
    return kExitBadConfig;
  }
  const auto answer = answer_model(request);
  if (!answer) {
    fmt::print(stderr, "fabuild: error: model: {}\n", answer.error().what);
    if (!answer.error().hint.empty()) fmt::print(stderr, "  hint: {}\n", answer.error().hint);
    return kExitBadConfig;
  }
  std::cout << answer->dump() << '\n';
  return 0;
}

}  // namespace fabuild
