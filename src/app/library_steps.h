#pragma once

// The steps of a library cell (`artifact: library`, docs/library.md), on this host: the source
// (as for wheels: app/source_steps.h), the recipe configured with the cell's source tree, archs
// and profile, built (`cmake --build`, as parallel as the cell's MAX_JOBS: the runner sets
// CMAKE_BUILD_PARALLEL_LEVEL beside it) through the object cache's wrapper as CMake's compiler
// launcher, installed into the staging directory, verified (exactly the C API exported, the
// header and the CMake package there, the version the source's), a C++ program configured,
// built and run against the installed package with find_package, then packed (deterministic
// .tar.gz) and filed as wheels are (wheel/filing.h, journalled).

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/object_cache.h"
#include "app/plan.h"
#include "engine/runner.h"
#include "provision/host.h"
#include "provision/pip_toolkit.h"
#include "provision/toolkit_choice.h"
#include "util/clock.h"
#include "util/command.h"
#include "util/environment.h"
#include "util/expected.h"
#include "util/files.h"

namespace fabuild {

// What every library cell of a run builds with, found once: the recipe in fabuild's cache, the
// host's cmake and ninja, and cmake's version for the manifest.
struct LibraryTools {
  std::filesystem::path recipe;
  std::string cmake;
  std::string ninja;
  std::string cmake_version;  // "3.25.1"
};
// A Failure naming what is missing and how to get it.
Expected<LibraryTools> find_library_tools(const Environment& env, CommandRunner& runner, Files& files,
                                          const std::filesystem::path& cache_root);

struct LibraryBuild {
  const PlannedCell* cell = nullptr;
  const SourceSpec* source = nullptr;  // Plan::source_of
  std::string matrix_dir;
  std::filesystem::path prepared;  // the source tree to copy; empty: the cell clones it (git)
  const LibraryTools* tools = nullptr;
  Toolkit toolkit;
  std::string path_tail;  // PATH after the toolkit's bin directory
  std::string wheelhouse;
  // The object cache: both set, or both null (off).
  const ObjectCacheSettings* cache = nullptr;
  const CcWrapper* wrapper = nullptr;
  std::map<std::string, std::string> versions;  // nvcc, toolkit, compiler... for the manifest entry
  std::optional<PipToolkit> pip_toolkit;        // installed in this run: its nvcc build is read when filing
  std::shared_ptr<Files> files;                 // the System's: copies the source, makes the archive's directory
  SteadyNow clock;                              // the System's: the build's time in its manifest entry
};

// The build of a library cell `p` of `plan` on this host, from the source tree `source` with the
// toolkit `choice` decided; the object cache and the compiler's version are the caller's to add.
LibraryBuild host_library_build(const Plan& plan, const PlannedCell& p, const std::filesystem::path& source,
                                const LibraryTools& tools, const ToolkitChoice& choice, const std::string& path);

// The cell's run, with all its steps, and its compiles through the object cache (null when off).
struct LibraryRun {
  CellRun run;
  std::shared_ptr<CellCompiles> compiles;
};
LibraryRun library_cell_run(const LibraryBuild& build);

// The CMake arguments that say what to build: source, flavour (the package's, never guessed from
// the tree), archs, the profile's switches, profile and build type.
std::vector<std::string> recipe_arguments(const Cell& cell, const std::filesystem::path& source_tree);

}  // namespace fabuild
