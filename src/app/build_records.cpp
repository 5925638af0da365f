#include "app/build_records.h"

#include "app/remote_cache.h"
#include "app/remote_trust.h"
#include "app/render.h"
#include "engine/cell_env.h"
#include "util/hash.h"

namespace fabuild {

namespace {

using nlohmann::json;

const char* kind_name(SourceSpec::Kind kind) {
  switch (kind) {
    case SourceSpec::Kind::kPath:
      return "path";
    case SourceSpec::Kind::kSdist:
      return "sdist";
    case SourceSpec::Kind::kGit:
      return "git";
    case SourceSpec::Kind::kPip:
      break;
  }
  return "pip";
}

}  // namespace

json planned_build_record(const Plan& plan, const PlannedCell& cell, const SourceSpec& source,
                          const std::optional<SourceEpoch>& epoch, const std::optional<std::string>& user_epoch,
                          const Environment& env, const FabuildIdentity& self) {
  json record;
  record["fabuild"] = {{"version", self.version}, {"sha256", self.sha256}};
  const nlohmann::ordered_json planned = cell_json(plan, cell);
  json matrix;
  for (const char* key :
       {"id", "package", "version", "torch", "backend", "cuda", "rocm", "python", "abi_tag", "platform", "cxx11_abi",
        "archs", "profile", "switches_off", "label", "provision", "stable_floor"}) {
    if (planned.contains(key)) matrix[key] = planned[key];
  }
  record["matrix"] = std::move(matrix);
  json src{{"kind", kind_name(source.kind)}};
  if (!source.location.empty()) src["location"] = source.location;
  if (!source.ref.empty()) src["ref"] = source.ref;
  if (!source.sha256.empty()) src["sha256"] = source.sha256;
  if (source.kind == SourceSpec::Kind::kPip) src["requirement"] = planned.value("source", "");
  if (epoch && !epoch->commit.empty()) src["commit"] = epoch->commit;
  record["source"] = std::move(src);
  json vars = json::object();
  for (const auto& [name, value] : cell_build_env(cell.cell)) vars[name] = value;
  record["env"] = std::move(vars);
  if (user_epoch) {
    record["source_date_epoch"] = {{"seconds", *user_epoch}, {"from", "SOURCE_DATE_EPOCH in fabuild's environment"}};
  } else if (epoch) {
    record["source_date_epoch"] = {{"seconds", std::to_string(epoch->seconds)}, {"from", epoch->why}};
  }
  if (const auto run = ci_run(env); !run.empty()) record["ci"] = run;
  return record;
}

std::string completed_build_record(json record, const Facts& facts) {
  if (!record.is_object()) return "";
  if (const auto commit = fact(facts, kFactSourceCommit)) record["source"]["commit"] = *commit;
  if (const auto sha = fact(facts, kFactSourceSha256)) record["source"]["sha256"] = *sha;
  if (const auto tree = fact(facts, kFactSourceTreeSha256)) record["source"]["tree_sha256"] = *tree;
  if (!record.contains("source_date_epoch")) {
    if (const auto when = fact(facts, std::string(kEnvFactPrefix) + kSourceDateEpoch)) {
      const bool git = record["source"].value("kind", "") == "git";
      record["source_date_epoch"] = {{"seconds", *when},
                                     {"from", git ? "the commit's time (git log)" : "the sdist's newest file"}};
    }
  }
  if (const auto text = fact(facts, kFactRemoteFetch)) {
    const json fetched = json::parse(*text, nullptr, false);
    if (fetched.is_object() && fetched.contains("indexes_used")) {
      record["object_cache"]["remote_writers"] = fetched["indexes_used"];  // writer -> signing key id ("" unsigned)
      record["object_cache"]["remote_objects_taken"] = fetched.value("objects", 0);
    }
  }
  return record.dump();
}

FabuildIdentity fabuild_identity(const std::filesystem::path& self) {
  std::string sha;  // unknown ("") when it cannot be read: the record says so
  if (!self.empty()) {
    if (const auto sum = sha256_of_file(self)) sha = hex(*sum);
  }
  return FabuildIdentity{FABUILD_VERSION, sha};
}

}  // namespace fabuild
