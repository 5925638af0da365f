#pragma once

// The CI systems `--ci-matrix NAME` lays a plan's jobs out for, as a table: one row per system,
// each with the form its jobs take there. The jobs themselves (which cells, compile shares,
// finishing and verify jobs, timeouts, runners, artifacts, object-cache keys) are the same for
// every row (app/ci_matrix.h's CiMatrix); a row only writes them down. Adding a CI system is a
// row here and its tests (docs/architecture.md, "Adding a CI system").
//   github     the JSON of a GitHub Actions `strategy.matrix` ({"include": [...]}), which the
//              nightly workflow's jobs run (.github/workflows/nightly.yml): the workflow owns the
//              steps, the matrix names the cells
//   gitlab     a child pipeline (JSON is YAML: `trigger: {include: [{artifact: ...}]}`), each job
//              with its own steps, `needs:` from the plan, and a last job that merges the parts
//   buildkite  a pipeline for `buildkite-agent pipeline upload`, likewise, with `depends_on:`
// The other per-system facts have tables of their own, next to what reads them: the parallel-job
// variables of `--shard auto` (matrix/shard_auto.cpp) and which runs may write the remote cache
// (app/remote_trust.cpp).

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/ci_matrix.h"

namespace fabuild {

// What a job's steps name: the matrix file as the repository has it.
struct CiCommand {
  std::string matrix;
};

struct CiProvider {
  std::string_view name;    // --ci-matrix NAME
  std::string_view system;  // "GitHub Actions", in messages and docs
  // The jobs as that system reads them.
  nlohmann::ordered_json (*jobs)(const CiMatrix& matrix, const CiCommand& command);
};

// {"include": [{"name", "runner", "timeout", "cells", "only", "shard", "artifact", "args"}, ...]}:
// flat objects of strings and numbers; "args" is the arguments quoted for a POSIX shell.
nlohmann::ordered_json github_matrix_json(const CiMatrix& matrix);

// Every row, github first.
const std::vector<CiProvider>& ci_providers();
// The row named `name`; nullptr when there is none.
const CiProvider* find_ci_provider(std::string_view name);
// "github, gitlab, buildkite": for --help and errors.
std::string ci_provider_names();

}  // namespace fabuild
