#include "matrix/container_engines.h"

#include <array>

namespace fabuild {

namespace {

constexpr std::array kEngines = {
    EngineKind{"docker", true, false},
    EngineKind{"podman", false, true},  // daemonless; rootless podman maps the user's uid with keep-id
};

}  // namespace

std::span<const EngineKind> engine_kinds() { return kEngines; }

const EngineKind* engine_kind(std::string_view name) {
  for (const auto& e : kEngines) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

std::string engine_names() {
  std::string out;
  for (const auto& e : kEngines) out += (out.empty() ? "" : ", ") + std::string(e.name);
  return out;
}

}  // namespace fabuild
