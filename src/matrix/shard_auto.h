#pragma once

// `--shard auto`: this job's shard from the CI system's own parallel-job variables, so that a
// GitLab `parallel: N` or Buildkite `parallelism: N` job needs no arithmetic in its script.

#include <optional>
#include <string>

#include "matrix/select.h"
#include "util/environment.h"

namespace fabuild {

struct ShardFromEnv {
  Shard shard;
  std::string source;  // what set it, for the log: "CI_NODE_INDEX=2, CI_NODE_TOTAL=4 (GitLab parallel:)"
};

// The first of these that is set, in this order:
//   FABUILD_SHARD=K/N                                              (1-based, as --shard)
//   CI_NODE_INDEX, CI_NODE_TOTAL                                   (GitLab, 1-based; a job
//        without parallel: has CI_NODE_TOTAL=1 and no index: the whole matrix, 1/1)
//   BUILDKITE_PARALLEL_JOB, BUILDKITE_PARALLEL_JOB_COUNT           (Buildkite, 0-based)
// UserError (exit 2) when none is set, when only half of a pair is, or when a value is not a
// whole number in range; the message names the variable and its value.
ShardFromEnv shard_from_environment(const Environment& env);

}  // namespace fabuild
