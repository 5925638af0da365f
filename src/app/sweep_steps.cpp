#include "app/sweep_steps.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "provision/python_env.h"
#include "source/archive.h"
#include "util/json_read.h"
#include "util/text.h"
#include "util/version.h"

namespace fabuild {

namespace {

constexpr const char* kProofFact = "torch_proof_";

struct Reported {
  FiledWheel::TorchProof proof;
  std::vector<std::string> ops;
};

std::optional<Reported> reported(const Facts& facts, const std::string& series) {
  const auto text = fact(facts, kProofFact + series);
  if (!text) return std::nullopt;
  Reported r;
  r.proof.series = series;
  const std::optional<nlohmann::json> j = parse_json(*text);
  if (!j || !j->is_object()) {
    r.proof.detail = "the check's report could not be read: " + text->substr(0, 200);
    return r;
  }
  r.proof.torch = json_field_or<std::string>(*j, "torch", "");
  r.proof.cuda = json_field_or<std::string>(*j, "cuda", "");
  r.proof.ok = json_field_or(*j, "ok", false);
  r.proof.detail = json_field_or<std::string>(*j, "detail", "");
  r.proof.gpu = json_field_or<std::string>(*j, "gpu", "");
  if (const auto ops = json_field<nlohmann::json>(*j, "ops"); ops && ops->is_array()) {
    for (const auto& op : *ops) {
      if (op.is_string()) r.ops.push_back(op.get<std::string>());
    }
  }
  return r;
}

bool older(const std::string& a, const std::string& b) {
  const auto x = Version::parse(a);
  const auto y = Version::parse(b);
  return x && y ? *x < *y : a < b;
}

}  // namespace

void add_sweep_steps(CellRun& run, const std::vector<SweepTorch>& torches, const std::filesystem::path& smoke,
                     const std::string& module) {
  for (const SweepTorch& t : torches) {
    Step step{"torch " + t.series,
              torch_sweep_argv(t.python, smoke.string(), module, t.series),
              smoke.parent_path().string(),
              {},
              {}};
    step.reports_facts = true;
    run.steps.push_back(std::move(step));
  }
}

std::vector<std::string> reported_ops(const Facts& facts, const std::string& series) {
  const auto r = reported(facts, series);
  return r && r->proof.ok ? r->ops : std::vector<std::string>();
}

std::vector<FiledWheel::TorchProof> sweep_proofs(const Facts& facts, const std::string& built_with,
                                                 const std::vector<std::string>& filed_ops) {
  std::vector<std::string> series;
  for (const auto& [name, value] : facts) {
    if (name.starts_with(kProofFact)) series.push_back(name.substr(std::string(kProofFact).size()));
  }
  std::sort(series.begin(), series.end(), older);
  const auto here = reported(facts, built_with);
  const bool known = (here && here->proof.ok) || !filed_ops.empty();
  const std::vector<std::string> base = here && here->proof.ok ? here->ops : filed_ops;
  std::vector<FiledWheel::TorchProof> proofs;
  for (const std::string& s : series) {
    Reported r = *reported(facts, s);
    if (r.proof.ok && known && r.ops != base) {
      std::vector<std::string> changed;
      for (const auto& op : base) {
        if (std::find(r.ops.begin(), r.ops.end(), op) == r.ops.end()) changed.push_back(op);
      }
      r.proof.ok = false;
      r.proof.detail = fmt::format("its ops register differently than under torch {}: {}", built_with,
                                   changed.empty() ? join(r.ops, "; ") : join(changed, "; "));
    }
    proofs.push_back(std::move(r.proof));
  }
  return proofs;
}

std::vector<std::string> unproven(const FiledWheel& filed, const std::vector<std::string>& sweep) {
  std::vector<std::string> out;
  for (const std::string& s : sweep) {
    const bool known = std::any_of(filed.torch_proofs.begin(), filed.torch_proofs.end(),
                                   [&](const FiledWheel::TorchProof& p) { return p.series == s; });
    if (!known) out.push_back(s);
  }
  return out;
}

void add_reverify_steps(CellRun& run, const std::filesystem::path& wheelhouse, const std::string& id,
                        const FiledWheel& filed, const std::vector<SweepTorch>& torches, const std::string& module,
                        const std::string& built_with) {
  const std::filesystem::path smoke = std::filesystem::path(run.staging_dir) / "smoke";
  const std::filesystem::path wheel = wheelhouse / filed.wheel;
  run.steps.push_back(Step{"unpack", {}, {}, {}, [wheel, smoke](StepContext&) -> StepResult {
                             if (auto done = extract_archive(wheel, smoke); !done) {
                               return fail("cannot unpack the filed wheel: " + done.error().message());
                             }
                             return {};
                           }});
  add_sweep_steps(run, torches, smoke, module);
  run.steps.push_back(Step{"record", {}, {}, {}, [wheelhouse, id, filed, built_with](StepContext& ctx) -> StepResult {
                             FiledWheel entry = filed;
                             // The proofs of this run replace those of the same series; the
                             // torch it was built against is held to its filed schemas.
                             Facts facts = ctx.facts;
                             for (const auto& p : sweep_proofs(facts, built_with, filed.torch_ops)) {
                               std::erase_if(entry.torch_proofs, [&](const auto& q) { return q.series == p.series; });
                               entry.torch_proofs.push_back(p);
                             }
                             std::sort(entry.torch_proofs.begin(), entry.torch_proofs.end(),
                                       [](const auto& a, const auto& b) { return older(a.series, b.series); });
                             if (auto recorded = record_filed(wheelhouse, id, entry); !recorded) {
                               return fail("cannot record its proofs: " + recorded.error().what);
                             }
                             std::vector<std::string> checked;
                             for (const auto& [name, value] : facts) {
                               if (name.starts_with(kProofFact)) checked.push_back(name.substr(12));
                             }
                             ctx.facts[kFactChecked] = join(checked, ",");
                             return {};
                           }});
  std::vector<std::string> series;
  for (const SweepTorch& t : torches) series.push_back(t.series);
  run.steps.push_back(proofs_step(series, built_with, filed.torch_ops));
}

Step proofs_step(const std::vector<std::string>& series, const std::string& built_with,
                 const std::vector<std::string>& filed_ops) {
  return Step{"torch", {}, {}, {}, [series, built_with, filed_ops](StepContext& ctx) -> StepResult {
                const std::vector<FiledWheel::TorchProof> proofs = sweep_proofs(ctx.facts, built_with, filed_ops);
                for (const std::string& s : series) {
                  if (std::none_of(proofs.begin(), proofs.end(), [&](const auto& p) { return p.series == s; }))
                    return fail(fmt::format("torch {}: the check reported nothing", s));
                }
                FiledWheel proven;
                proven.torch_proofs = proofs;
                for (const auto& p : proofs) {
                  if (p.ok) continue;
                  const auto filed = proven_series(proven);
                  return fail(fmt::format("torch {}: {}; filed for torch {}", p.series, p.detail,
                                          filed.empty() ? std::string("none") : join(filed, ", ")));
                }
                return {};
              }};
}

}  // namespace fabuild
