#include "app/ci_providers.h"

#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "util/text.h"

namespace fabuild {

namespace {

using json = nlohmann::ordered_json;

// GitLab runs a job with at most this many `needs:` (its default limit); a job that would need
// more waits for its stage instead.
constexpr std::size_t kGitlabMostNeeds = 50;

// Where a job writes: a build or verify job its part of the wheelhouse (the merge job takes
// parts/*), a compile share its logs (it files nothing).
std::string out_dir(const CiJob& job) { return (job.stage == "compile" ? "shares/" : "parts/") + job.artifact; }

// The jobs each job waits for, by index: a finishing job its row's compile shares, a verify job the build job whose
// wheelhouse it checks.
std::vector<std::vector<std::size_t>> needs_of(const CiMatrix& matrix) {
  std::map<std::string, std::size_t> by_artifact;
  for (std::size_t i = 0; i < matrix.jobs.size(); ++i) by_artifact[matrix.jobs[i].artifact] = i;
  std::vector<std::vector<std::size_t>> needs(matrix.jobs.size());
  for (std::size_t i = 0; i < matrix.jobs.size(); ++i) {
    const CiJob& job = matrix.jobs[i];
    if (job.stage == "build" && job.shares > 0) {
      for (std::size_t k = 0; k < matrix.jobs.size(); ++k) {
        const CiJob& share = matrix.jobs[k];
        if (share.stage == "compile" && share.finishing == job.name) needs[i].push_back(k);
      }
    } else if (job.stage == "verify" && !job.needs_artifact.empty()) {
      if (const auto it = by_artifact.find(job.needs_artifact); it != by_artifact.end()) needs[i].push_back(it->second);
    }
  }
  return needs;
}

// fabuild built from the checkout, as docs/ci.md's jobs do.
const std::vector<std::string> kSetup = {"scripts/install-deps.sh",
                                         "cmake -S . -B build -G Ninja -DFABUILD_TESTS=OFF && cmake --build build"};

// A job's shell lines after its system has put the parts it needs in place: fabuild, the job's
// Pythons, the wheel a verify job checks, then the job's own fabuild run into its directory.
std::vector<std::string> job_script(const CiJob& job, const CiCommand& command) {
  const std::string matrix = shell_quote(command.matrix);
  const std::string args = shell_line(job.args);
  const std::string out = out_dir(job);
  std::vector<std::string> lines = kSetup;
  lines.push_back(fmt::format("scripts/ci/install-pythons.sh {} {}", matrix, args));
  if (job.stage == "verify") {
    lines.push_back(
        job.needs_artifact.empty()
            ? fmt::format("scripts/ci/fetch-published.sh \"$FABUILD_PAGES_URL\" {} {}", shell_quote(job.only), out)
            : fmt::format("mkdir -p parts && cp -R parts/{} {}", job.needs_artifact, out));
  }
  lines.push_back(fmt::format("build/fabuild {} {}{} -o {}", matrix, args, job.shard ? " --allow-empty" : "", out));
  return lines;
}

// A pipeline needs a job: this one when the plan has none (every wheel filed and proven).
constexpr const char* kNothing = "echo 'fabuild: nothing to build: every selected wheel is filed and proven'";

std::vector<std::string> merge_script() {
  std::vector<std::string> lines = kSetup;
  lines.push_back("build/fabuild merge parts/* -o wheelhouse");
  return lines;
}

json github(const CiMatrix& matrix, const CiCommand&) { return github_matrix_json(matrix); }

// A child pipeline: stages in the plan's order, each job starting as soon as what it needs is
// done (`needs: []` for none), its part kept as an artifact; the merge job, in the last stage,
// takes every part.
json gitlab(const CiMatrix& matrix, const CiCommand& command) {
  const auto needs = needs_of(matrix);
  json pipeline;
  pipeline["stages"] = {"compile", "build", "verify", "merge"};
  if (matrix.jobs.empty()) {
    pipeline["nothing to build"] = {{"stage", "build"}, {"script", {kNothing}}};
    return pipeline;
  }
  for (std::size_t i = 0; i < matrix.jobs.size(); ++i) {
    const CiJob& job = matrix.jobs[i];
    json j;
    j["stage"] = job.stage;
    j["tags"] = json::array({job.runner});
    j["timeout"] = fmt::format("{} minutes", job.timeout_minutes);
    if (needs[i].size() <= kGitlabMostNeeds) {
      json n = json::array();
      for (std::size_t k : needs[i]) n.push_back({{"job", matrix.jobs[k].name}, {"artifacts", job.stage == "verify"}});
      j["needs"] = n;
    }
    if (!matrix.remote && !job.cache_key.empty()) {  // the object cache kept between runs: no remote
      j["variables"] = {{"FABUILD_CACHE_DIR", "$CI_PROJECT_DIR/.fabuild-cache"}};
      j["cache"] = {{"key", "fabuild-objects-" + job.cache_key}, {"paths", {".fabuild-cache/objects/"}}};
    }
    j["script"] = job_script(job, command);
    j["artifacts"] = {
        {"name", job.artifact}, {"when", "always"}, {"paths", {out_dir(job) + "/"}}, {"expire_in", "1 week"}};
    pipeline[job.name] = std::move(j);
  }
  pipeline["merge"] = {{"stage", "merge"},
                       {"when", "always"},
                       {"script", merge_script()},
                       {"artifacts", {{"name", "wheelhouse"}, {"paths", {"wheelhouse/"}}}}};
  return pipeline;
}

// A Buildkite step's key: the name's letters, digits, '-' and '_', the rest as '-'; made unique.
std::string step_key(const std::string& name, std::set<std::string>& taken) {
  std::string key;
  for (char c : name) key += std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' ? c : '-';
  std::string unique = key;
  for (int n = 2; !taken.insert(unique).second; ++n) unique = fmt::format("{}-{}", key, n);
  return unique;
}

// Steps for `buildkite-agent pipeline upload`: each with its key and `depends_on:`, a verify
// step downloading the part it checks; the merge step after all, whatever their outcome.
json buildkite(const CiMatrix& matrix, const CiCommand& command) {
  if (matrix.jobs.empty()) return json{{"steps", {{{"label", "nothing to build"}, {"command", kNothing}}}}};
  const auto needs = needs_of(matrix);
  std::set<std::string> taken = {"merge"};
  std::vector<std::string> keys;
  for (const CiJob& job : matrix.jobs) keys.push_back(step_key(job.name, taken));
  json steps = json::array();
  json parts = json::array();
  for (std::size_t i = 0; i < matrix.jobs.size(); ++i) {
    const CiJob& job = matrix.jobs[i];
    std::vector<std::string> lines = job_script(job, command);
    json depends = json::array();
    for (std::size_t k : needs[i]) {
      depends.push_back(keys[k]);
      if (job.stage == "verify") {
        lines.insert(lines.end() - 2, fmt::format("buildkite-agent artifact download 'parts/{}/**/*' . --step {}",
                                                  matrix.jobs[k].artifact, keys[k]));
      }
    }
    json step;
    step["label"] = job.name;
    step["key"] = keys[i];
    step["agents"] = {{"queue", job.runner}};
    step["timeout_in_minutes"] = job.timeout_minutes;
    if (!depends.empty()) step["depends_on"] = depends;
    step["command"] = join(lines, "\n");
    step["artifact_paths"] = out_dir(job) + "/**/*";
    if (job.stage != "compile") parts.push_back(keys[i]);
    steps.push_back(std::move(step));
  }
  std::vector<std::string> merge = kSetup;
  merge.push_back("buildkite-agent artifact download 'parts/**/*' .");
  merge.push_back("build/fabuild merge parts/* -o wheelhouse");
  steps.push_back({{"label", "merge"},
                   {"key", "merge"},
                   {"depends_on", parts},
                   {"allow_dependency_failure", true},
                   {"command", join(merge, "\n")},
                   {"artifact_paths", "wheelhouse/**/*"}});
  return json{{"steps", steps}};
}

// Which runs may write the remote cache (remote_write: auto): what each system calls a trusted
// run (docs/security.md).
WriteDecision github_trust(const Environment& env, const Files& files) {
  const std::string event = env.value("GITHUB_EVENT_NAME");
  const std::string on = fmt::format("a {} run on GitHub Actions (GITHUB_EVENT_NAME)", event.empty() ? "?" : event);
  if (event == "schedule" || event == "workflow_dispatch") return {true, on};
  if (event != "push") return {false, on + ": only schedule, workflow_dispatch and default-branch push runs write"};
  // A push: trusted on the default branch only, which the event payload names.
  std::string branch;
  const auto path = env.get("GITHUB_EVENT_PATH");
  if (path) {
    if (const auto text = files.read(*path)) {
      const auto doc = nlohmann::json::parse(*text, nullptr, false);
      if (doc.is_object() && doc.contains("repository") && doc["repository"].is_object()) {
        branch = doc["repository"].value("default_branch", "");
      }
    }
  }
  const std::string ref = env.value("GITHUB_REF");
  if (branch.empty()) {
    return {false,
            fmt::format("{}, to {}: {} to compare it with", on, ref.empty() ? "a ref GITHUB_REF does not name" : ref,
                        path ? "the event payload (GITHUB_EVENT_PATH) names no default branch"
                             : "no event payload (GITHUB_EVENT_PATH unset) names the default branch")};
  }
  if (ref == "refs/heads/" + branch) return {true, fmt::format("{}, to the default branch {}", on, branch)};
  return {false, fmt::format("{}, to {}, not the default branch {}", on, ref, branch)};
}

WriteDecision gitlab_trust(const Environment& env, const Files&) {
  const std::string source = env.value("CI_PIPELINE_SOURCE");
  const std::string ref = env.value("CI_COMMIT_REF_NAME");
  const std::string on = fmt::format("a {} pipeline on GitLab CI (CI_PIPELINE_SOURCE), ref {}", source, ref);
  if (source == "merge_request_event" || source == "external_pull_request_event") {
    return {false, on + ": merge request pipelines never write"};
  }
  if (env.value("CI_COMMIT_REF_PROTECTED") != "true")
    return {false, on + " is not protected (CI_COMMIT_REF_PROTECTED)"};
  return {true, on + ", protected"};
}

WriteDecision buildkite_trust(const Environment& env, const Files&) {
  const std::string branch = env.value("BUILDKITE_BRANCH");
  const std::string pr = env.value("BUILDKITE_PULL_REQUEST");
  if (!pr.empty() && pr != "false") {
    return {false, fmt::format("a Buildkite build of pull request {} (BUILDKITE_PULL_REQUEST)", pr)};
  }
  const std::string main = env.value("BUILDKITE_PIPELINE_DEFAULT_BRANCH");
  if (main.empty() || branch != main) {
    return {false, fmt::format("a Buildkite build of branch {}, not the pipeline's default branch {}", branch,
                               main.empty() ? "(BUILDKITE_PIPELINE_DEFAULT_BRANCH unset)" : main)};
  }
  return {true, fmt::format("a Buildkite build of the default branch {}", main)};
}

}  // namespace

nlohmann::ordered_json github_matrix_json(const CiMatrix& matrix) {
  nlohmann::ordered_json include = nlohmann::ordered_json::array();
  for (const auto& job : matrix.jobs) {
    nlohmann::ordered_json entry;
    entry["name"] = job.name;
    entry["runner"] = job.runner;
    entry["timeout"] = job.timeout_minutes;
    entry["expected_s"] = std::round(job.expected_s);
    entry["cells"] = job.cells;
    entry["only"] = job.only;
    entry["shard"] = job.shard ? fmt::format("{}/{}", job.shard->index, job.shard->count) : std::string();
    entry["artifact"] = job.artifact;
    entry["args"] = shell_line(job.args);
    entry["rows"] = job.rows;
    entry["cache_key"] = job.cache_key;
    entry["stage"] = job.stage;
    entry["shares"] = job.shares;
    entry["needs_artifact"] = job.needs_artifact;
    entry["torch"] = job.torch;
    include.push_back(std::move(entry));
  }
  return nlohmann::ordered_json{{"include", include}};
}

const std::vector<CiProvider>& ci_providers() {
  static const std::vector<CiProvider> rows = {
      {"github",
       "GitHub Actions",
       github,
       "GITHUB_ACTIONS",
       std::nullopt,  // a matrix job's shard is in its args (--shard K/N)
       github_trust,
       {"GITHUB_REPOSITORY", "GITHUB_WORKFLOW_REF", "GITHUB_RUN_ID", "GITHUB_RUN_ATTEMPT", "GITHUB_JOB",
        "GITHUB_EVENT_NAME", "GITHUB_REF", "GITHUB_SHA"}},
      {"gitlab",
       "GitLab CI",
       gitlab,
       "GITLAB_CI",
       ShardVariables{"CI_NODE_INDEX", "CI_NODE_TOTAL", 1, "GitLab parallel:"},
       gitlab_trust,
       {"CI_PROJECT_PATH", "CI_PIPELINE_ID", "CI_JOB_ID", "CI_PIPELINE_SOURCE", "CI_COMMIT_REF_NAME", "CI_COMMIT_SHA"}},
      {"buildkite",
       "Buildkite",
       buildkite,
       "BUILDKITE",
       ShardVariables{"BUILDKITE_PARALLEL_JOB", "BUILDKITE_PARALLEL_JOB_COUNT", 0, "Buildkite parallelism:"},
       buildkite_trust,
       {"BUILDKITE_PIPELINE_SLUG", "BUILDKITE_BUILD_ID", "BUILDKITE_JOB_ID", "BUILDKITE_BRANCH", "BUILDKITE_COMMIT"}},
  };
  return rows;
}

const CiProvider* find_ci_provider(std::string_view name) {
  for (const CiProvider& p : ci_providers()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

const CiProvider* running_ci_provider(const Environment& env) {
  for (const CiProvider& p : ci_providers()) {
    if (env.value(std::string(p.detect)) == "true") return &p;
  }
  return nullptr;
}

std::vector<ShardVariables> ci_shard_variables() {
  std::vector<ShardVariables> pairs;
  for (const CiProvider& p : ci_providers()) {
    if (p.shard) pairs.push_back(*p.shard);
  }
  return pairs;
}

std::string ci_provider_names() {
  std::vector<std::string> names;
  for (const CiProvider& p : ci_providers()) names.emplace_back(p.name);
  return join(names, ", ");
}

}  // namespace fabuild
