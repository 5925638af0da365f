#pragma once

// Containers through an engine's command line (docker or podman), always as argv vectors: which
// engine, which image of a CUDA set's candidates (present, else pulled, else the next), and the
// argv that start a cell's container, run a process in it and remove it. Nothing here runs a
// build; the app layer puts these argv into a cell's steps (docs/containers.md).

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "matrix/cell.h"
#include "matrix/container_engines.h"
#include "matrix/spec.h"
#include "provision/host.h"
#include "util/command.h"
#include "util/expected.h"
#include "util/host_info.h"

namespace fabuild {

struct ContainerEngine {
  std::string program;               // the engine's CLI: a path found on PATH
  const EngineKind* kind = nullptr;  // its row of matrix/container_engines.h
  bool rootless = false;             // run by a user other than root
};

// The engine to use: `wanted` (a name of engine_kinds(); "" = each in turn), the first that
// answers (`version` reaches its daemon, where it has one). A Failure says what was tried and
// what to do when there is none.
Expected<ContainerEngine> find_container_engine(CommandRunner& runner, const std::string& wanted,
                                                const std::vector<std::string>& env);

// toolchains/containers.yaml: image candidates per CUDA toolkit, used where the matrix names
// none: `images: {"12.8": [a, b], default: [c]}`. A missing file is empty; a bad one a
// UserError at file:line:col.
std::map<std::string, std::vector<std::string>> load_container_images(const std::string& path);

// The candidates for `cell`, in order: the matrix's (for its CUDA toolkit, else its default),
// else toolchains/containers.yaml's, else the manylinux builder images fabuild recommends.
// "{cuda}" is expanded to the toolkit version.
std::vector<std::string> image_candidates(const Cell& cell, const ContainerSpec& spec,
                                          const std::map<std::string, std::vector<std::string>>& toolchains);

// The Python for the cell's tag in the image: container.python with {python} (cp312) and
// {python_version} (3.12) expanded, else the manylinux layout /opt/python/cp312-cp312/bin/python.
std::string python_in_image(const Cell& cell, const ContainerSpec& spec);

struct Image {
  std::string name;                            // as the matrix wrote it
  std::string id;                              // "sha256:<hex>": its exact content
  std::string digest;                          // "repo@sha256:<hex>" when it came from a registry, else ""
  std::vector<std::string> env;                // its configured environment ("PATH=...")
  std::string architecture;                    // "amd64", "arm64": what its programs run on; "" = not said
  [[nodiscard]] std::string path_env() const;  // its PATH, or the usual default
};

// The engine's name for the architecture a platform's wheels run on: "amd64", "arm64"; "" = none.
std::string image_architecture(Platform platform);

// The first candidate present (or, as `pull` allows, pulled) whose architecture is `arch` ("" =
// any): an arm64 image on an x86-64 machine would build (under emulation, if at all) wheels of
// another platform. Every attempt is in what it tried ("pytorch/...: not present; pull
// failed: ...", "x: an arm64 image; the cell builds amd64 wheels").
Probed<Image> resolve_image(CommandRunner& runner, const ContainerEngine& engine,
                            const std::vector<std::string>& candidates, PullPolicy pull,
                            const std::vector<std::string>& env, const std::string& arch = "");

struct Mount {
  std::string source;  // on the host, absolute
  std::string target;  // in the container, absolute
  bool read_only = true;
};

// One cell's container: a process that does nothing (`sleep infinity` under the engine's init)
// while the cell's steps run in it with `exec`, then removed whatever happened.
struct ContainerSettings {
  std::string name;     // unique per run and cell: container_name()
  std::string image;    // an id or a name
  std::string user;     // "uid:gid"
  std::string home;     // a writable HOME in a mount
  std::string network;  // "" = the engine's default
  std::string memory;   // --memory value, e.g. "10240m"; may hold {placeholders}
  std::string cpus;     // --cpus value
  std::vector<Mount> mounts;
  std::map<std::string, std::string> labels;
};

// "fabuild-<run>-<cell id>" with anything an engine refuses in a name replaced by '-'.
std::string container_name(const std::string& run, const std::string& cell_id);
// A short random run id ("3fa9c1d2").
std::string new_run_id();
// invoking_user(), the "uid:gid" a cell's container runs as, is util/host_info.h's.

std::vector<std::string> start_argv(const ContainerEngine& engine, const ContainerSettings& settings);
std::vector<std::string> exec_argv(const ContainerEngine& engine, const std::string& name,
                                   const std::vector<std::string>& argv,
                                   const std::vector<std::pair<std::string, std::string>>& env, const std::string& cwd);
// Stops (SIGKILL to everything in it) and removes the container; no error if it is gone.
std::vector<std::string> remove_argv(const ContainerEngine& engine, const std::string& name);

// Containers an earlier fabuild on this host left behind when it was killed (SIGKILL, a crash):
// those labelled fabuild.host=`host` whose fabuild.pid is no longer a live process. Removes
// them and returns their names. A pid alive again (reused) keeps its container: never remove
// one a running fabuild may own.
std::vector<std::string> remove_orphan_containers(CommandRunner& runner, const ContainerEngine& engine,
                                                  const std::vector<std::string>& env, const std::string& host);

// The host name containers are labelled with (fabuild.host).
std::string host_label();

// Questions asked in a throwaway container of an image (`run --rm`, no network): which Python,
// which nvcc, which torch, which compiler.
class ContainerCommandRunner : public CommandRunner {
 public:
  ContainerCommandRunner(CommandRunner& host, ContainerEngine engine, std::string image, std::vector<Mount> mounts,
                         std::vector<std::string> engine_env);
  CommandResult run(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                    std::chrono::milliseconds timeout) override;

 private:
  CommandRunner& host_;
  ContainerEngine engine_;
  std::string image_;
  std::vector<Mount> mounts_;
  std::vector<std::string> engine_env_;
};

// The same questions in a running container (`exec`).
class ContainerExecRunner : public CommandRunner {
 public:
  ContainerExecRunner(CommandRunner& host, ContainerEngine engine, std::string name,
                      std::vector<std::string> engine_env);
  CommandResult run(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                    std::chrono::milliseconds timeout) override;

 private:
  CommandRunner& host_;
  ContainerEngine engine_;
  std::string name_;
  std::vector<std::string> engine_env_;
};

}  // namespace fabuild
