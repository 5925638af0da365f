#pragma once

// Real processes for the wrapper's tests: fabuild-cc (FABUILD_CC_BINARY) in front of the real
// g++ and nvcc, in scratch "cells" laid out as fabuild's are (a staging source tree and a
// virtualenv whose site-packages holds torch's headers).

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../support/scratch_dir.h"

extern char** environ;

namespace fabuild::objcache::test {

namespace fs = std::filesystem;

struct Ran {
  int code = -1;
  std::string out;
  std::string err;
};

// Starts argv (argv[0] searched on PATH) in `cwd` with this process's environment plus `env`
// (the given entries win: glibc's getenv takes the first of a name), its stdout and stderr into
// `<output>.out` and `<output>.err`. Its pid; -1 when it could not start.
inline pid_t spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env, const fs::path& cwd,
                   const fs::path& output) {
  const std::string out = output.string() + ".out";
  const std::string err = output.string() + ".err";
  std::vector<std::string> strings(env);
  for (char** e = environ; *e != nullptr; ++e) strings.emplace_back(*e);
  std::vector<char*> envp;
  for (auto& e : strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args(argv);
  std::vector<char*> c_args;
  for (auto& a : args) c_args.push_back(a.data());
  c_args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  pid_t pid = -1;
  if (posix_spawnp(&pid, c_args[0], &actions, nullptr, c_args.data(), envp.data()) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

// Its exit code; 128+N when signal N killed it; -1 for no process.
inline int wait_for(pid_t pid) {
  if (pid <= 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Runs argv to its end (see spawn), with what it wrote.
inline Ran run(const std::vector<std::string>& argv, const std::vector<std::string>& env, const fs::path& cwd,
               const fs::path& scratch) {
  static int counter = 0;
  const fs::path output = scratch / ("run-" + std::to_string(counter++));
  Ran r;
  r.code = wait_for(spawn(argv, env, cwd, output));
  r.out = fabuild::test::ScratchDir::read(output.string() + ".out");
  r.err = fabuild::test::ScratchDir::read(output.string() + ".err");
  return r;
}

inline void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// One cell's paths: <root>/<name>/stage/src (the source copy) and
// <root>/<name>/venv/lib/python<py>/site-packages/torch/include (torch's headers).
struct Cell {
  fs::path root;
  fs::path src;
  fs::path torch_include;
  fs::path build;  // torch's build/temp.* directory: the compiler's working directory

  Cell(const fs::path& base, const std::string& name, const std::string& py) {
    root = base / name;
    src = root / "stage" / "src";
    torch_include = root / "venv" / "lib" / ("python" + py) / "site-packages" / "torch" / "include";
    build = src / "build" / ("temp.linux-x86_64-cpython-" + py);
    fs::create_directories(build);
  }
};

// The lines of a tally file, each split at tabs.
inline std::vector<std::vector<std::string>> tally_lines(const fs::path& tally) {
  std::vector<std::vector<std::string>> lines;
  std::ifstream in(tally);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> fields;
    std::size_t start = 0;
    for (std::size_t tab = line.find('\t'); tab != std::string::npos; tab = line.find('\t', start)) {
      fields.push_back(line.substr(start, tab - start));
      start = tab + 1;
    }
    fields.push_back(line.substr(start));
    lines.push_back(fields);
  }
  return lines;
}

}  // namespace fabuild::objcache::test
