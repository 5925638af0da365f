#include "app/remote_trust.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>

#include <nlohmann/json.hpp>

#include "util/error.h"

namespace fabuild {

namespace {

// A CI provider's rule: whether it runs this process (`detect`, a variable set to "true"), and
// whether the run is trusted, with why.
struct Provider {
  const char* name;
  const char* detect;
  std::function<WriteDecision(const Environment&, const Files&)> trusted;
  std::vector<const char*> run_ids;  // the variables that name the run, its job and commit
};

WriteDecision github(const Environment& env, const Files& files) {
  const std::string event = env.value("GITHUB_EVENT_NAME");
  const std::string on = fmt::format("a {} run on GitHub Actions (GITHUB_EVENT_NAME)", event.empty() ? "?" : event);
  if (event == "schedule" || event == "workflow_dispatch") return {true, on};
  if (event != "push") return {false, on + ": only schedule, workflow_dispatch and default-branch push runs write"};
  // A push: trusted on the default branch only, which the event payload names.
  std::string branch;
  if (const auto path = env.get("GITHUB_EVENT_PATH")) {
    if (const auto text = files.read(*path)) {
      const auto doc = nlohmann::json::parse(*text, nullptr, false);
      if (doc.is_object() && doc.contains("repository") && doc["repository"].is_object()) {
        branch = doc["repository"].value("default_branch", "");
      }
    }
  }
  const std::string ref = env.value("GITHUB_REF");
  if (branch.empty()) {
    return {false, on + ": the event payload (GITHUB_EVENT_PATH) names no default branch to compare " + ref + " with"};
  }
  if (ref == "refs/heads/" + branch) return {true, fmt::format("{}, to the default branch {}", on, branch)};
  return {false, fmt::format("{}, to {}, not the default branch {}", on, ref, branch)};
}

WriteDecision gitlab(const Environment& env, const Files&) {
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

WriteDecision buildkite(const Environment& env, const Files&) {
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

const Provider kProviders[] = {
    {"GitHub Actions",
     "GITHUB_ACTIONS",
     github,
     {"GITHUB_REPOSITORY", "GITHUB_WORKFLOW_REF", "GITHUB_RUN_ID", "GITHUB_RUN_ATTEMPT", "GITHUB_JOB",
      "GITHUB_EVENT_NAME", "GITHUB_REF", "GITHUB_SHA"}},
    {"GitLab CI",
     "GITLAB_CI",
     gitlab,
     {"CI_PROJECT_PATH", "CI_PIPELINE_ID", "CI_JOB_ID", "CI_PIPELINE_SOURCE", "CI_COMMIT_REF_NAME", "CI_COMMIT_SHA"}},
    {"Buildkite",
     "BUILDKITE",
     buildkite,
     {"BUILDKITE_PIPELINE_SLUG", "BUILDKITE_BUILD_ID", "BUILDKITE_JOB_ID", "BUILDKITE_BRANCH", "BUILDKITE_COMMIT"}},
};

std::string setting_of(const CacheSpec& spec, const Environment& env, std::string* from) {
  if (const auto v = env.get(kRemoteWriteEnv); v && !v->empty()) {
    *from = kRemoteWriteEnv;
    if (*v == "auto" || *v == "true" || *v == "false") return *v;
    if (*v == "1" || *v == "yes" || *v == "on") return "true";
    if (*v == "0" || *v == "no" || *v == "off") return "false";
    throw config_error(Location{}, fmt::format("{}={} is not auto, true or false", kRemoteWriteEnv, *v),
                       "auto writes only from trusted runs (docs/security.md); or unset it");
  }
  *from = spec.remote_write_where.line > 0 ? "cache.remote_write in " + spec.remote_write_where.str() : "";
  return spec.remote_write;
}

}  // namespace

WriteDecision remote_write_decision(const CacheSpec& spec, const Environment& env, const Files& files) {
  std::string from;
  const std::string setting = setting_of(spec, env, &from);
  if (setting == "true") return {true, "writes: " + from + " is true"};
  if (setting == "false") return {false, "read-only: " + from + " is false"};
  for (const Provider& p : kProviders) {
    if (env.value(p.detect) != "true") continue;
    WriteDecision d = p.trusted(env, files);
    d.why = (d.write ? "writes: trusted, " : "read-only: untrusted, ") + d.why;
    return d;
  }
  return {true, "writes: a run outside CI (whoever runs it holds the remote's token)"};
}

std::map<std::string, std::string> ci_run(const Environment& env) {
  for (const Provider& p : kProviders) {
    if (env.value(p.detect) != "true") continue;
    std::map<std::string, std::string> run{{"provider", p.name}};
    for (const char* name : p.run_ids) {
      if (const auto v = env.get(name)) run[name] = *v;
    }
    return run;
  }
  return {};
}

remote::IndexTrust index_trust(const CacheSpec& spec, bool writes, const Environment& env) {
  remote::IndexTrust trust;
  const std::string sign_env = spec.signing_key_env.empty() ? kDefaultSigningKeyEnv : spec.signing_key_env;
  const std::string verify_env = spec.verify_keys_env.empty() ? kDefaultVerifyKeysEnv : spec.verify_keys_env;
  if (const auto pem = env.get(sign_env); writes && pem && !pem->empty()) {
    auto key = remote::parse_signing_key(*pem);
    if (!key) throw config_error(Location{}, fmt::format("${} {}", sign_env, key.error().what), key.error().hint);
    trust.signer = std::move(*key);
    trust.accepted.push_back(trust.signer->pub);
  }
  const auto add = [&](const std::string& text, const std::string& what, const Location& where) {
    auto keys = remote::parse_public_keys(text);
    if (!keys) throw config_error(where, fmt::format("{}: {}", what, keys.error().what), keys.error().hint);
    for (auto& k : *keys) {
      if (!trust.find(k.id)) trust.accepted.push_back(std::move(k));
    }
  };
  for (const std::string& k : spec.verify_keys) add(k, "cache.verify_keys", spec.where);
  if (const auto text = env.get(verify_env); text && !text->empty()) add(*text, "$" + verify_env, Location{});
  return trust;
}

std::string describe_trust(const remote::IndexTrust& trust) {
  if (!trust.verifying()) return "row indexes are not signed: every writer of the remote is believed";
  std::vector<std::string> ids;
  for (const auto& k : trust.accepted) ids.push_back(k.id);
  std::string line = trust.signer ? fmt::format("indexes signed by key {}; ", trust.signer->pub.id) : "";
  return line + fmt::format("only indexes signed by key {} are used", fmt::join(ids, ", "));
}

}  // namespace fabuild
