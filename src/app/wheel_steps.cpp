#include "app/wheel_steps.h"

#include <fmt/format.h>

#include <vector>

#include "app/verified_stamps.h"
#include "provision/container.h"
#include "provision/python_env.h"
#include "source/archive.h"
#include "util/read_whole.h"
#include "util/text.h"
#include "wheel/filing.h"
#include "wheel/manifest.h"

namespace fabuild {

namespace {

namespace fs = std::filesystem;

// The one .whl a build left in `dist`, or "" and why not.
std::string only_wheel(const fs::path& dist, fs::path& wheel) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dist, ec)) {
    if (e.path().extension() == ".whl") found.push_back(e.path());
  }
  if (found.size() == 1) {
    wheel = found.front();
    return {};
  }
  return found.empty() ? "the build left no .whl in " + dist.string()
                       : fmt::format("the build left {} wheels in {}; expected one", found.size(), dist.string());
}

// torch's version for the manifest: what the check noted, else asked of the environment where
// the cell ran.
std::string torch_version_of(const WheelFiling& f, const std::string& python) {
  std::string version = trim(read_whole(f.torch_seen).value_or(""));
  if (!version.empty()) return version;
  ProcessCommandRunner host;
  if (!f.place) return probe_torch(host, python).torch_version.value_or("?");
  ContainerExecRunner inside(host, f.place->engine, container_name(f.place->run_id, f.id), f.place->engine_env);
  return probe_torch(inside, python).torch_version.value_or("?");
}

}  // namespace

void add_wheel_checks(CellRun& run, const WheelChecks& c) {
  run.steps.push_back(Step{"verify", {}, {}, {}, [c](const CellRun&) {
                             if (std::string e = only_wheel(c.dist, *c.wheel); !e.empty()) return e;
                             const WheelVerdict v = verify_wheel(*c.wheel, c.expected);
                             return v.ok() ? std::string() : join(v.problems, "; ");
                           }});
  run.steps.push_back(Step{"unpack", {}, {}, {}, [c](const CellRun&) {
                             try {
                               extract_archive(*c.wheel, c.smoke);
                             } catch (const std::exception& e) {
                               return std::string("cannot unpack the wheel: ") + e.what();
                             }
                             return std::string();
                           }});
  const std::string import = fmt::format(
      "import sys; sys.path.insert(0, sys.argv[1]); import torch; import {0}; print('fabuild: imported', {0}.__file__)",
      c.extension);
  run.steps.push_back(Step{"import", {c.python, "-c", import, c.smoke.string()}, c.smoke.string(), {}, {}});
}

Step file_step(const WheelFiling& f, const WheelChecks& c) {
  return Step{"file", {}, {}, {}, [f, c](const CellRun& self) {
                try {
                  FiledWheel entry;  // wheel, sha256 and size: file_cell_wheel's
                  entry.build_seconds =
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - *f.started).count();
                  entry.versions = f.versions;
                  if (f.pip_toolkit) {
                    if (const auto installed = installed_pip_toolkit(*f.pip_toolkit)) {
                      entry.versions["nvcc_build"] = installed->build;
                    }
                  }
                  entry.versions["torch"] = torch_version_of(f, c.python);
                  entry.patches = f.patches;
                  entry.exports = *f.exports;
                  if (f.place) {
                    entry.image = f.place->image.name;
                    entry.image_id = f.place->image.id;
                    entry.image_digest = f.place->image.digest;
                  }
                  if (f.cache_report) {
                    const CacheTally compiles = read_tally(f.tally);
                    log_cache_tally(compiles, self.log_path);
                    entry.object_cache = compiles.as_map();
                    f.cache_report->cells[f.id] = compiles;
                  }
                  // Journalled: a kill midway is finished by the next run (wheel/filing.h).
                  file_cell_wheel(f.wheelhouse, f.id, *c.wheel, self.output_dir, entry);
                  // Verified just now: a re-run need not read it again (verified_stamps.h).
                  if (const auto filed = find_filed(f.wheelhouse, f.id)) {
                    VerifiedStamps stamps(f.wheelhouse);
                    stamps.stamp(f.id, *filed, c.expected);
                    stamps.save();
                  }
                } catch (const std::exception& e) {
                  return std::string(e.what());
                }
                return std::string();
              }};
}

}  // namespace fabuild
