#pragma once

// The steps that give a cell its own source tree in its staging directory (staging/src): a
// copy of a prepared tree, the sdist through pip, or a recursive git clone; then the matrix's
// patches for its version, each checked to apply exactly (docs/packages.md, "Patches"). The
// moment the source is in place, the start of the build for its manifest entry, is the cell's
// finding `build_started` (app/cell_findings.h).

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/cell_findings.h"
#include "app/plan.h"
#include "engine/runner.h"
#include "provision/container.h"
#include "provision/python_env.h"
#include "util/files.h"

namespace fabuild {

struct SourceSteps {
  const PlannedCell* cell;
  const SourceSpec* spec;          // the cell's source (Plan::source_of)
  std::string matrix_dir;          // a relative git URL is from here
  const PythonEnv* env;            // its Python, for `pip download`
  std::filesystem::path prepared;  // a tree ready to copy; empty: fetched by the cell (pip, git)
  std::filesystem::path staging;
  std::filesystem::path tree;              // staging/src
  bool container = false;                  // the cell runs in a container: the prepared tree is mounted read-only
  std::shared_ptr<CellFindings> findings;  // where build_started goes
  std::shared_ptr<Files> files;            // the System's: lists pip's download, renames and copies trees
  bool epoch_from_source = true;           // a fetched source sets SOURCE_DATE_EPOCH (app/source_epoch.h)
};

// Appends the steps, and for a container cell the mount of the prepared tree.
void add_source_steps(CellRun& run, const SourceSteps& s, std::vector<Mount>& mounts);

// The tree's modes fixed once it is whole, patches applied (Files::fix_modes): the wheel tool
// zips each file with its mode on disk, and a copy keeps the source's (a checkout made under
// umask 0002 is rw-rw-r--), an extraction, a clone and a patch take the caller's umask. With
// the build under a fixed umask (cell_run.h, wheel_build_argv), a wheel's modes are then the
// same wherever and by whomever it is built.
Step modes_step(const std::filesystem::path& tree, std::shared_ptr<Files> files);

// The patch command for one file: GNU patch, strict (no fuzz, no reversed or already applied
// hunks, no reject or backup files left in the tree).
std::vector<std::string> patch_argv(const PatchFile& patch);

// What the plan could not read from a git or sdist source before it was fetched (a source
// directory's setup.py is read at plan time, app/plan.cpp), checked in this step before the
// compile: an abi3 cell's limited-API floor (another than the plan used fails the cell here
// rather than at verification), and the kernel switches its profile turns off that setup.py does
// not read (said in the log: the build would compile those kernels anyway). `setup_dir` holds the
// package's setup.py. For cells that need neither check there is no step (nullopt).
std::optional<Step> source_facts_step(const Cell& cell, const std::filesystem::path& setup_dir,
                                      std::shared_ptr<Files> files);
// The floor's verdict: a Failure when the source's floor is not the plan's.
Expected<void> check_abi3_floor(const Cell& cell, const std::filesystem::path& setup_dir);
// The switches `off` (FLASH_ATTENTION_DISABLE_<X> read from the environment) that the source's
// setup.py does not read; none when it cannot be read or names none.
std::vector<std::string> unread_switches(const Cell& cell, const std::filesystem::path& setup_dir,
                                         const std::vector<std::string>& off);

}  // namespace fabuild
