#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "matrix/axis_set.h"
#include "matrix/spec.h"
#include "matrix/yaml_read.h"
#include "util/expected.h"

namespace fabuild {

// Reads and checks a matrix file, with `sets` (--set) replacing axes of it. Every problem is a
// UserError (exit 2) at file:line:col, or naming the --set flag that gave the value.
MatrixSpec load_matrix(const std::string& path, const std::vector<AxisSet>& sets = {});
// The same for text already in memory; `file` names it in messages.
MatrixSpec parse_matrix(const std::string& text, const std::string& file, const std::vector<AxisSet>& sets = {});

// Whether a remote object cache URL (cache.remote, FABUILD_CACHE_REMOTE) will do: http(s):// or
// redis://, no credentials in it (a token comes from the environment), no query or fragment
// (objects are <url>/<key>); a Failure saying what is wrong with it and what to do.
Expected<void> check_remote_url(const std::string& url);

// Container image candidates as the matrix's container.images and toolchains/containers.yaml's
// images: spell them: a list for every cell, or keyed by CUDA toolkit ("12.8"), ROCm set
// ("rocm6.2"), default and rocm_default, and by platform (linux_aarch64: the same keys for that
// platform's cells, stored as "linux_aarch64/12.8"). `what` names the node in messages.
std::map<std::string, std::vector<std::string>> read_image_table(const yaml::Reader& r, const YAML::Node& node,
                                                                 const std::string& what);

}  // namespace fabuild
