#pragma once

// The steps that give a cell its own source tree in its staging directory (staging/src): a
// copy of a prepared tree, the sdist through pip, or a recursive git clone; then the matrix's
// patches for its version, each checked to apply exactly (docs/packages.md, "Patches"). The
// moment the source is in place, the start of the build for its manifest entry, becomes the
// fact "build_started".

#include <filesystem>
#include <vector>

#include "app/plan.h"
#include "engine/runner.h"
#include "provision/container.h"
#include "provision/python_env.h"

namespace fabuild {

struct SourceSteps {
  const PlannedCell* cell;
  const SourceSpec* spec;          // the cell's source (Plan::source_of)
  std::string matrix_dir;          // a relative git URL is from here
  const PythonEnv* env;            // its Python, for `pip download`
  std::filesystem::path prepared;  // a tree ready to copy; empty: fetched by the cell (pip, git)
  std::filesystem::path staging;
  std::filesystem::path tree;  // staging/src
  bool container = false;      // the cell runs in a container: the prepared tree is mounted read-only
};

// Appends the steps, and for a container cell the mount of the prepared tree.
void add_source_steps(CellRun& run, const SourceSteps& s, std::vector<Mount>& mounts);

// The patch command for one file: GNU patch, strict (no fuzz, no reversed or already applied
// hunks, no reject or backup files left in the tree).
std::vector<std::string> patch_argv(const PatchFile& patch);

// An abi3 cell's source names its limited-API floor in its setup.py. A git or sdist source is
// read only once fetched: a floor other than the one the plan used fails the cell in this step,
// before its compile, rather than at verification (a source directory's setup.py is read at plan
// time, app/plan.cpp). `setup_dir` holds the package's setup.py.
Step abi3_floor_step(const Cell& cell, const std::filesystem::path& setup_dir);
// The step's verdict: a Failure when the source's floor is not the plan's.
Expected<void> check_abi3_floor(const Cell& cell, const std::filesystem::path& setup_dir);

}  // namespace fabuild
