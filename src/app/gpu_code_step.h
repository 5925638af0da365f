#pragma once

// The GPU code a built wheel carries, checked against the cell's archs before it is filed
// (docs/host-builds.md, "Verification"): a module compiled from objects of another arch's build
// (a poisoned or mistaken cache) imports fine and fails only on the GPU it was meant for.

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "app/cell_findings.h"
#include "engine/runner.h"
#include "matrix/cell.h"

namespace fabuild {

// What cuobjdump lists of one module: SASS archs ("sm_90a") and PTX ones.
struct ModuleCode {
  std::vector<std::string> sass;
  std::vector<std::string> ptx;
};

// What is wrong with `modules` for the cell's archs, "" when nothing: every asked arch must be
// in the SASS of each module that has GPU code; where the package's build takes the arch list
// (archs_env: every unit compiled for exactly those), an arch it did not ask for is wrong too.
std::string gpu_code_mismatch(const Cell& cell, const std::map<std::string, ModuleCode>& modules);

// The listing, a process in the cell's site (py/gpu_code.py with the environment's `python`,
// the toolkit's `cuobjdump` when it has one), then the check of the fact it reports, which fails
// the cell with both lists and keeps them in `findings` for the manifest.
void add_gpu_code_steps(CellRun& run, const Cell& cell, const std::string& python, const std::filesystem::path& smoke,
                        const std::string& cuobjdump, std::shared_ptr<CellFindings> findings);

}  // namespace fabuild
