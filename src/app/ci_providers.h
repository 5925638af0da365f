#pragma once

// The CI systems fabuild knows, as a table: one row per system, with everything that differs
// between them. `--ci-matrix NAME` lays a plan's jobs out in the row's form; `--shard auto` reads
// its parallel-job variables; the remote cache's `remote_write: auto` asks its rule whether the
// run is trusted; the build record names the run by its variables. The jobs themselves (which
// cells, compile shares, finishing and verify jobs, timeouts, runners, artifacts, object-cache
// keys) are the same for every row (app/ci_matrix.h's CiMatrix); a row only writes them down.
// Adding a CI system is a row here and its tests (docs/architecture.md, "Adding a CI system").
//   github     the JSON of a GitHub Actions `strategy.matrix` ({"include": [...]}), which the
//              nightly workflow's jobs run (.github/workflows/nightly.yml): the workflow owns the
//              steps, the matrix names the cells
//   gitlab     a child pipeline (JSON is YAML: `trigger: {include: [{artifact: ...}]}`), each job
//              with its own steps, `needs:` from the plan, and a last job that merges the parts
//   buildkite  a pipeline for `buildkite-agent pipeline upload`, likewise, with `depends_on:`

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/ci_matrix.h"
#include "app/remote_trust.h"
#include "matrix/shard_auto.h"
#include "util/environment.h"
#include "util/files.h"

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
  std::string_view detect;  // the variable the system sets to "true" in every job it runs
  // Its parallel-job variables, for --shard auto; none where its jobs get --shard in their args.
  std::optional<ShardVariables> shard;
  // Whether a run may write the remote cache (remote_write: auto), and why: `files` reads what
  // the system leaves on disk (GitHub's event payload).
  WriteDecision (*trusted)(const Environment& env, const Files& files);
  std::vector<const char*> run_ids;  // the variables that name the run, its job and commit
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
// The row whose `detect` variable is "true" in `env`: the CI system running this process.
const CiProvider* running_ci_provider(const Environment& env);
// Every row's parallel-job variables, in the table's order (shard_from_environment's `ci`).
std::vector<ShardVariables> ci_shard_variables();

}  // namespace fabuild
