#include "util/processes.h"

#include <chrono>
#include <thread>

namespace fabuild {

std::vector<long> kill_processes_with_environment(const std::string& name, const std::string& prefix) {
  std::vector<long> killed;
  for (int round = 0; round < 2; ++round) {
    const std::vector<long> pids = processes_with_environment(name, prefix);
    for (long pid : pids) {
      if (kill_process(pid) && round == 0) killed.push_back(pid);
    }
    if (pids.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return killed;
}

}  // namespace fabuild
