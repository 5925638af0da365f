#include "matrix/shard_auto.h"

#include <cstdlib>
#include <regex>

#include <fmt/format.h>

#include "util/error.h"

namespace fabuild {

namespace {

// "--shard auto reads FABUILD_SHARD=K/N, CI_NODE_INDEX/CI_NODE_TOTAL (GitLab parallel:) or ...".
std::string variables_hint(const std::vector<ShardVariables>& ci) {
  std::string hint = "--shard auto reads FABUILD_SHARD=K/N";
  for (std::size_t i = 0; i < ci.size(); ++i) {
    hint += fmt::format("{}{}/{} ({})", i + 1 == ci.size() ? " or " : ", ", ci[i].index, ci[i].total, ci[i].system);
  }
  return hint + "; set one of them, or pass --shard K/N";
}

UserError bad(const std::string& hint, const std::string& what) {
  return config_error(Location{}, "--shard auto: " + what, hint);
}

// A whole number of at most six digits, as --shard K/N takes.
int whole_number(const std::string& name, const std::string& value, const std::string& hint) {
  static const std::regex digits(R"(^\s*\d{1,6}\s*$)");
  if (!std::regex_match(value, digits)) {
    throw bad(hint, fmt::format("{}='{}' is not a whole number", name, value));
  }
  return std::stoi(value);
}

// A variable's value; an empty one counts as unset, as CI systems leave them.
std::optional<std::string> set_in(const Environment& env, const std::string& name) {
  auto value = env.get(name);
  if (value && value->empty()) return std::nullopt;
  return value;
}

std::optional<ShardFromEnv> from_pair(const Environment& env, const ShardVariables& p, const std::string& hint) {
  const auto index = set_in(env, p.index);
  const auto total = set_in(env, p.total);
  if (!index && !total) return std::nullopt;
  if (!total) throw bad(hint, fmt::format("{} is set but {} is not ({})", p.index, p.total, p.system));
  const int n = whole_number(p.total, *total, hint);
  if (n < 1) throw bad(hint, fmt::format("{}={} must be at least 1 ({})", p.total, *total, p.system));
  if (!index) {
    // GitLab sets CI_NODE_TOTAL=1 in every job and CI_NODE_INDEX only under parallel:.
    if (n == 1) return ShardFromEnv{{1, 1}, fmt::format("{}=1 ({}, no parallel jobs)", p.total, p.system)};
    throw bad(hint, fmt::format("{}={} is set but {} is not ({})", p.total, *total, p.index, p.system));
  }
  const int k = whole_number(p.index, *index, hint);
  if (k < p.base || k > n - 1 + p.base) {
    throw bad(hint, fmt::format("{}={} is outside {}..{} for {}={} ({}, {}-based)", p.index, *index, p.base,
                                n - 1 + p.base, p.total, *total, p.system, p.base));
  }
  return ShardFromEnv{{k - p.base + 1, n},
                      fmt::format("{}={}, {}={} ({})", p.index, *index, p.total, *total, p.system)};
}

}  // namespace

ShardFromEnv shard_from_environment(const Environment& env, const std::vector<ShardVariables>& ci) {
  const std::string hint = variables_hint(ci);
  if (const auto own = set_in(env, "FABUILD_SHARD")) {
    const auto shard = parse_shard(*own);
    if (!shard) throw bad(hint, fmt::format("FABUILD_SHARD='{}' is not K/N with 1 <= K <= N", *own));
    return ShardFromEnv{*shard, fmt::format("FABUILD_SHARD={}", *own)};
  }
  for (const ShardVariables& p : ci) {
    if (auto found = from_pair(env, p, hint)) return *found;
  }
  throw bad(hint, "no CI parallel-job variables are set");
}

}  // namespace fabuild
