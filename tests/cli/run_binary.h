#pragma once

// Runs the real fabuild binary for black-box tests: argv as given (no shell), stdout and
// stderr captured, exit code mapped as a shell does.

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace fabuild::test {

struct Result {
  int code = -1;
  std::string out;
  std::string err;
};

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A fabuild started in the background, for tests that signal it.
struct Background {
  pid_t pid = -1;
  std::filesystem::path out;
  std::filesystem::path err;
};

inline Background spawn_fabuild(std::vector<std::string> args, const std::string& cwd,
                                const std::vector<std::string>& extra_env = {}) {
  static int counter = 0;
  const auto dir = std::filesystem::temp_directory_path() /
                   ("fabuild-bg-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::filesystem::create_directories(dir);
  Background bg{-1, dir / "out", dir / "err"};
  args.insert(args.begin(), FABUILD_BINARY);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // extra_env's variables replace the inherited ones of the same name.
  std::vector<std::string> env_strings(extra_env);
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const auto name = entry.substr(0, entry.find('=') + 1);
    if (std::none_of(extra_env.begin(), extra_env.end(), [&](const std::string& x) { return x.starts_with(name); }))
      env_strings.emplace_back(entry);
  }
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, bg.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, bg.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  posix_spawn(&bg.pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  return bg;
}

// Waits up to `limit` for it to exit; -1 if it did not (it is then killed). Its output files are removed.
inline Result wait_fabuild(const Background& bg, std::chrono::milliseconds limit) {
  Result r;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (waitpid(bg.pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(bg.pid, SIGKILL);
      waitpid(bg.pid, &status, 0);
      r.code = -1;
      r.out = slurp(bg.out);
      r.err = slurp(bg.err);
      std::filesystem::remove_all(bg.out.parent_path());
      return r;
    }
    usleep(20000);
  }
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(bg.out);
  r.err = slurp(bg.err);
  std::filesystem::remove_all(bg.out.parent_path());  // the test keeps what it read, not the files
  return r;
}

inline Result run_fabuild(std::vector<std::string> args, const std::string& cwd = FABUILD_SOURCE_DIR) {
  const Background bg = spawn_fabuild(std::move(args), cwd);
  return wait_fabuild(bg, std::chrono::minutes(5));
}

}  // namespace fabuild::test
