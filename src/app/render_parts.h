#pragma once

// The pieces of the plan's rendering that render.cpp and render_library.cpp (library cells) share,
// and those with a file of their own. Internal to the app layer.

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "app/plan.h"

namespace fabuild {

// "host CUDA 13.0 (/usr/local/cuda-13.0), cmake + ninja, no torch"
std::string library_build_on(const Plan& plan, const PlannedCell& c);
void print_library_details(const Plan& plan, const PlannedCell& c, std::ostream& out);
nlohmann::ordered_json library_cell_json(const Plan& plan, const PlannedCell& c);

// What both kinds of cell print after their own lines: each patch; then the jobs, the timeout,
// the env (when there is any) and the budget's notes.
void print_patch_lines(const PlannedCell& c, std::ostream& out);
void print_jobs_lines(const PlannedCell& c, std::ostream& out);
// Their JSON counterparts: max_jobs, nvcc_threads, peak_memory_gb and env; patches and notes.
void add_jobs_json(nlohmann::ordered_json& j, const PlannedCell& c);
void add_patches_and_notes_json(nlohmann::ordered_json& j, const PlannedCell& c);

// What the cell compiles, as count_units() counted it into the plan; nullptr when it was not.
// A cell's archs as the plan shows them: "80;90", or a ROCm cell's "gfx90a;gfx942".
std::string archs_of(const Cell& cell);

const KernelUnits* units_of(const Plan& plan, const PlannedCell& c);
// The same as JSON ("units": {"total", "kernels", "available"}), added to `j` when counted.
void add_units_json(nlohmann::ordered_json& j, const Plan& plan, const PlannedCell& c);

// A host cell's toolkit decision, as JSON.
nlohmann::ordered_json toolkit_json(const Cell& cell, const ToolkitChoice& choice);

}  // namespace fabuild
