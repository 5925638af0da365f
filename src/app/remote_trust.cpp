#include "app/remote_trust.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "app/ci_providers.h"
#include "util/error.h"

namespace fabuild {

namespace {

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
  if (const CiProvider* p = running_ci_provider(env)) {
    WriteDecision d = p->trusted(env, files);
    d.why = (d.write ? "writes: trusted, " : "read-only: untrusted, ") + d.why;
    return d;
  }
  return {true, "writes: a run outside CI (whoever runs it holds the remote's token)"};
}

std::map<std::string, std::string> ci_run(const Environment& env) {
  const CiProvider* p = running_ci_provider(env);
  if (p == nullptr) return {};
  std::map<std::string, std::string> run{{"provider", std::string(p->system)}};
  for (const char* name : p->run_ids) {
    if (const auto v = env.get(name)) run[name] = *v;
  }
  return run;
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
