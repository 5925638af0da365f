#include "util/spawn_posix.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "util/path_search.h"
#include "util/text.h"

namespace fabuild::posix {

namespace {

std::string message(int error) { return std::generic_category().message(error); }

}  // namespace

Expected<std::string> find_program(const ProcessSpec& spec) {
  const std::string& name = spec.argv[0];
  if (name.find('/') != std::string::npos) return name;
  std::string path = "/bin:/usr/bin";  // glibc's default when PATH is unset
  auto entry = std::find_if(spec.env.begin(), spec.env.end(), [](auto& var) { return var.starts_with("PATH="); });
  if (entry != spec.env.end()) path = entry->substr(5);
  return search_path(name, path, spec.cwd);
}

Expected<pid_t> spawn(const ProcessSpec& spec, const std::string& program, int output) {
  posix_spawnattr_t attr;
  posix_spawn_file_actions_t actions;
  if (int rc = posix_spawnattr_init(&attr); rc != 0) return fail("posix_spawnattr_init: " + message(rc));
  if (int rc = posix_spawn_file_actions_init(&actions); rc != 0) {
    posix_spawnattr_destroy(&attr);
    return fail("posix_spawn_file_actions_init: " + message(rc));
  }
  int rc = 0;
  const char* failed = nullptr;
  const auto step = [&](const char* call, int result) {
    if (rc != 0 || result == 0) return;
    rc = result;
    failed = call;
  };

  sigset_t none;
  sigset_t all;
  sigemptyset(&none);
  sigfillset(&all);
  sigdelset(&all, SIGKILL);
  sigdelset(&all, SIGSTOP);
  // SIGDEF on all of them also undoes SIG_IGN inherited by fabuild (SIGPIPE ignored for network
  // code would otherwise break `yes | head` in a build script).
  step("posix_spawnattr_setflags",
       posix_spawnattr_setflags(
           &attr, static_cast<short>(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)));
  step("posix_spawnattr_setpgroup", posix_spawnattr_setpgroup(&attr, 0));
  step("posix_spawnattr_setsigmask", posix_spawnattr_setsigmask(&attr, &none));
  step("posix_spawnattr_setsigdefault", posix_spawnattr_setsigdefault(&attr, &all));
  if (!spec.cwd.empty())
    step("posix_spawn_file_actions_addchdir_np", posix_spawn_file_actions_addchdir_np(&actions, spec.cwd.c_str()));
  step("posix_spawn_file_actions_addopen", posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0));
  step("posix_spawn_file_actions_adddup2", posix_spawn_file_actions_adddup2(&actions, output, 1));
  step("posix_spawn_file_actions_adddup2", posix_spawn_file_actions_adddup2(&actions, output, 2));
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
  // Ours are all O_CLOEXEC; this also stops one that a library opened without it.
  step("posix_spawn_file_actions_addclosefrom_np", posix_spawn_file_actions_addclosefrom_np(&actions, 3));
#endif

  Expected<pid_t> started = 0;
  if (rc != 0) {
    started = fail(fmt::format("{}: {}", failed, message(rc)));
  } else {
    std::vector<char*> argv;
    std::vector<char*> envp;
    for (const std::string& arg : spec.argv) argv.push_back(const_cast<char*>(arg.c_str()));
    for (const std::string& var : spec.env) envp.push_back(const_cast<char*>(var.c_str()));
    argv.push_back(nullptr);
    envp.push_back(nullptr);
    // It returns the error; errno is not meaningful afterwards.
    pid_t pid = 0;
    rc = posix_spawn(&pid, program.c_str(), &actions, &attr, argv.data(), envp.data());
    if (rc != 0) {
      const std::string where = spec.cwd.empty() ? "" : " in " + spec.cwd;
      started = fail(fmt::format("posix_spawn({}){}: {}", program, where, message(rc)));
    } else {
      started = pid;
    }
  }
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  return started;
}

}  // namespace fabuild::posix
