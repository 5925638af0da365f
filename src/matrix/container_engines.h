#pragma once

// The container engines fabuild drives, one row each: everything that tells their
// docker-compatible command lines apart. A new docker-compatible CLI is one more row here; the
// matrix loader takes its names from this table and provision/container builds argv from it.

#include <span>
#include <string>
#include <string_view>

namespace fabuild {

struct EngineKind {
  std::string_view name;       // as `container.engine` and PATH spell it
  bool has_daemon;             // `version` must reach a server before the engine is usable
  bool keep_id_when_rootless;  // run by a user: `--userns=keep-id` keeps the user's uid inside
};

// In the order `container.engine: auto` tries them.
std::span<const EngineKind> engine_kinds();
const EngineKind* engine_kind(std::string_view name);  // nullptr: not an engine fabuild knows
std::string engine_names();                            // "docker, podman": for messages

}  // namespace fabuild
