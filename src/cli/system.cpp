#include "cli/system.h"

#include <chrono>
#include <map>
#include <memory>
#include <mutex>

#include <spdlog/spdlog.h>

#include "costs/job_setup.h"
#include "publish/run_record.h"
#include "remote/guard.h"
#include "util/cache_root.h"
#include "util/host_info.h"
#include "util/processes.h"

namespace fabuild {

System real_system() {
  System s;
  s.env = Environment::of_this_process();
  s.make_supervisor = [] { return make_process_supervisor(); };
  s.commands = std::make_shared<ProcessCommandRunner>();
  s.files = std::make_shared<RealFiles>();
  s.stdout_is_terminal = stdout_is_terminal();
  s.cache_dir = [env = s.env] { return fabuild_cache_root(env); };
  s.self = self_executable();
  s.machine = [] { return detect_resources(); };
  s.platform = host_platform_tag();
  s.utc_now = utc_now_iso8601;
  s.steady_now = [] { return std::chrono::steady_clock::now(); };
  s.kill_tagged = kill_processes_with_environment;
  if (const auto started = s.env.get("FABUILD_JOB_STARTED"); started && !started->empty()) {
    const auto now = [] {
      return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
    };
    if (const auto elapsed = job_elapsed_since(*started, now()); elapsed) {
      s.job_elapsed_s = [started = *started, now]() -> std::optional<double> {
        const auto e = job_elapsed_since(started, now());
        return e ? std::optional<double>(*e) : std::nullopt;
      };
    } else {
      spdlog::warn("{}: the job's setup time is not recorded; {}", elapsed.error().what, elapsed.error().hint);
    }
  }
  // One remote per address for the whole run, behind one guard: a remote that failed while the
  // plan read its records is not waited on again by the build (docs/performance.md, "Sharing the
  // cache between machines").
  auto opened = std::make_shared<std::map<std::string, std::shared_ptr<remote::GuardedStore>>>();
  auto mutex = std::make_shared<std::mutex>();
  s.open_remote = [opened, mutex](const std::string& url,
                                  const std::string& token) -> Expected<std::shared_ptr<remote::GuardedStore>> {
    const std::lock_guard lock(*mutex);
    const std::string key = url + '\n' + token;
    if (const auto it = opened->find(key); it != opened->end()) return it->second;
    auto store = remote::open_store(url, token);
    if (!store) return tl::make_unexpected(store.error());
    auto guarded = std::make_shared<remote::GuardedStore>(std::shared_ptr<remote::Store>(std::move(*store)),
                                                          remote::GuardLimits{});
    return opened->emplace(key, std::move(guarded)).first->second;
  };
  return s;
}

}  // namespace fabuild
