#include "util/processes.h"
#include "util/windows_api.h"

namespace fabuild {

long current_pid() { return static_cast<long>(GetCurrentProcessId()); }

bool process_alive(long pid) {
  if (pid <= 0) return false;
  const win32::Handle process(OpenProcess(SYNCHRONIZE, FALSE, static_cast<DWORD>(pid)));
  if (!process) return GetLastError() == ERROR_ACCESS_DENIED;  // there, but not ours to open
  return WaitForSingleObject(process.get(), 0) == WAIT_TIMEOUT;
}

bool kill_process(long pid) {
  const win32::Handle process(OpenProcess(PROCESS_TERMINATE, FALSE, static_cast<DWORD>(pid)));
  return process && TerminateProcess(process.get(), 1);
}

std::vector<long> processes_with_environment(const std::string&, const std::string&) { return {}; }

std::uint64_t resident_kb_with_descendants(long) { return 0; }

}  // namespace fabuild
