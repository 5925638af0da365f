#pragma once

// A System for tests and benchmarks above the app seam (app/system.h): a fixed machine, a fixed
// clock, an environment and cache directory the test names, and no process it did not ask for.
// Anything the test needs real (a supervisor for a build, a command runner) it sets itself. Its
// files are this machine's, in the test's scratch directory; a test that checks what app does
// to files gives it a test::FakeFiles (fake_files.h).

#include <chrono>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

#include "app/system.h"

namespace fabuild::testing {

inline System fake_system(std::filesystem::path cache = "/nonexistent/fabuild-cache", int cores = 16,
                          double memory_gb = 128) {
  System s;
  s.env = Environment{{"PATH", "/usr/bin:/bin"}};
  s.make_supervisor = []() -> std::unique_ptr<ProcessSupervisor> {
    throw std::logic_error("fake_system: this test starts no processes");
  };
  s.files = std::make_shared<RealFiles>();
  s.cache_dir = [cache] { return cache; };
  s.self = "/usr/bin/fabuild";
  s.machine = [cores, memory_gb] {
    Resources r;
    r.cores = cores;
    r.memory_gb = memory_gb;
    r.cores_from = "test";
    r.memory_from = "test";
    return r;
  };
  s.utc_now = [] { return std::string("2026-11-24T12:00:00Z"); };
  s.steady_now = [] { return std::chrono::steady_clock::now(); };  // a test that times a run sets its own
  s.kill_tagged = [](const std::string&, const std::string&) { return std::vector<long>(); };  // no processes
  return s;
}

}  // namespace fabuild::testing
