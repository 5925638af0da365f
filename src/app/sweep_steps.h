#pragma once

// A wheel checked under each torch release it claims (docs/stable-abi.md): one process step per
// release, each in that torch's Python environment, made before the cell as its build's is.
// What each finds is a fact (torch_proof_<series>); filing turns them into the manifest's
// proofs, and the step after filing fails the cell for a release the wheel failed under: the
// wheel stays filed for the releases before it.

#include <filesystem>
#include <string>
#include <vector>

#include "engine/facts.h"
#include "engine/runner.h"
#include "wheel/manifest.h"

namespace fabuild {

// The fact a run that checks a filed wheel (no compile) reports: the torch series it checked,
// comma-separated, for the run's record and summary.
inline constexpr const char* kFactChecked = "checked_torch";

// One torch release of a sweep, and the interpreter of its environment.
struct SweepTorch {
  std::string series;  // "2.13"
  std::string python;
};

// The check of the wheel unpacked in `smoke` (its compiled `module`) under each of `torches`.
void add_sweep_steps(CellRun& run, const std::vector<SweepTorch>& torches, const std::filesystem::path& smoke,
                     const std::string& module);

// The proofs the sweep reported, oldest series first. A release whose module registers ops
// with other schemas than under `built_with` (the torch it was built against) fails there:
// a later torch that registers an op differently breaks its callers.
// `filed_ops`: the schemas a filed wheel recorded under `built_with`, when this run did not check
// it there.
std::vector<FiledWheel::TorchProof> sweep_proofs(const Facts& facts, const std::string& built_with,
                                                 const std::vector<std::string>& filed_ops = {});

// The ops (with schemas) the check under `series` reported; empty when it reported none.
std::vector<std::string> reported_ops(const Facts& facts, const std::string& series);

// A filed wheel checked again, with no compile, under releases its proofs lack (a torch
// published since it was filed): it is unpacked, checked under each of `torches`, the proofs are
// added to its manifest entry, and the cell fails as proofs_step says.
void add_reverify_steps(CellRun& run, const std::filesystem::path& wheelhouse, const std::string& id,
                        const FiledWheel& filed, const std::vector<SweepTorch>& torches, const std::string& module,
                        const std::string& built_with);

// The releases of `sweep` (series) that `filed` has no proof for, failed ones included.
std::vector<std::string> unproven(const FiledWheel& filed, const std::vector<std::string>& sweep);

// Fails when a proof of `series` failed or is missing: "torch 2.15: <the loader's message>;
// filed for torch 2.11, 2.12".
Step proofs_step(const std::vector<std::string>& series, const std::string& built_with,
                 const std::vector<std::string>& filed_ops = {});

}  // namespace fabuild
