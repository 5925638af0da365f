#pragma once

// `--shard auto`: this job's shard from the CI system's own parallel-job variables, so that a
// GitLab `parallel: N` or Buildkite `parallelism: N` job needs no arithmetic in its script.

#include <optional>
#include <string>
#include <vector>

#include "matrix/select.h"
#include "util/environment.h"

namespace fabuild {

struct ShardFromEnv {
  Shard shard;
  std::string source;  // what set it, for the log: "CI_NODE_INDEX=2, CI_NODE_TOTAL=4 (GitLab parallel:)"
};

// A CI system's parallel-job variables (app/ci_providers.cpp's table has each system's).
struct ShardVariables {
  const char* index;   // "CI_NODE_INDEX"
  const char* total;   // "CI_NODE_TOTAL"
  int base;            // what the system calls its first job: 1 (GitLab) or 0 (Buildkite)
  const char* system;  // "GitLab parallel:", for messages
};

// The first of these that is set, in this order:
//   FABUILD_SHARD=K/N          (1-based, as --shard)
//   each of `ci` in turn       (a total without an index is the whole matrix, 1/1, when the total
//                               is 1: GitLab sets CI_NODE_TOTAL=1 in a job without parallel:)
// UserError (exit 2) when none is set, when only half of a pair is, or when a value is not a
// whole number in range; the message names the variable and its value, the hint every pair.
ShardFromEnv shard_from_environment(const Environment& env, const std::vector<ShardVariables>& ci);

}  // namespace fabuild
