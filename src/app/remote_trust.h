#pragma once

// Who may write the remote object cache, and which row indexes a run believes
// (docs/security.md). A release links objects other jobs compiled: anyone who can write the
// remote can choose what it links. So a run writes only when it is trusted, and with signing
// keys a run uses only indexes a trusted writer signed.
//
// Trust by CI provider, one row each (kProviders), as Bazel, ccache and sccache users are told
// to do it: untrusted builds read and never upload.
//   GitHub Actions  schedule, workflow_dispatch, and push to the default branch (the event
//                   payload's repository.default_branch); never pull_request(_target)
//   GitLab CI       a protected ref, not a merge request pipeline
//   Buildkite       not a pull request, on the pipeline's default branch
//   none of them    a run on a build box: whoever runs it holds the remote's token
// `cache.remote_write` (or FABUILD_CACHE_REMOTE_WRITE) true or false overrides the rule.

#include <map>
#include <string>

#include "matrix/spec.h"
#include "remote/signing.h"
#include "util/environment.h"
#include "util/files.h"

namespace fabuild {

inline constexpr const char* kRemoteWriteEnv = "FABUILD_CACHE_REMOTE_WRITE";
inline constexpr const char* kDefaultSigningKeyEnv = "FABUILD_CACHE_SIGNING_KEY";
inline constexpr const char* kDefaultVerifyKeysEnv = "FABUILD_CACHE_VERIFY_KEYS";

struct WriteDecision {
  bool write = true;
  std::string why;  // "a pull_request run on GitHub Actions (GITHUB_EVENT_NAME)": for the plan and report
};

// Whether this run writes the remote: `setting` (auto, true, false; FABUILD_CACHE_REMOTE_WRITE
// over the matrix's), and for auto the CI provider's rule. `files` reads GitHub's event payload.
// Throws a config error (exit 2) for a FABUILD_CACHE_REMOTE_WRITE that is none of the three.
WriteDecision remote_write_decision(const CacheSpec& spec, const Environment& env, const Files& files);

// The run's keys: the signing key from its variable (only a run that writes signs), the accepted
// keys from cache.verify_keys and their variable, and the signer's own. Throws a config error
// (exit 2) for a key that does not parse.
remote::IndexTrust index_trust(const CacheSpec& spec, bool writes, const Environment& env);

// The CI run this process is part of, by its provider's variables ({"provider": "GitHub Actions",
// "GITHUB_RUN_ID": ..., ...}); empty outside CI. For the build record (wheel/build_record.h).
std::map<std::string, std::string> ci_run(const Environment& env);

// "indexes signed by key 3f2a...; accepted: 3f2a..., 77c1...", or "row indexes are not signed:
// every writer of the remote is believed" for the plan.
std::string describe_trust(const remote::IndexTrust& trust);

}  // namespace fabuild
