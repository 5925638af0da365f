#pragma once

// Processes of this machine beyond a supervisor's own children: this one's id, whether another
// still runs, ending one, and finding and ending the leftovers of a run that died.
// processes_posix.cpp and processes_win32.cpp hold the calls.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace fabuild {

long current_pid();

// False only when `pid` surely runs no more on this host; a process we may not signal still runs.
bool process_alive(long pid);

// Ends `pid` at once (SIGKILL; TerminateProcess). True when it was sent.
bool kill_process(long pid);

// Processes (not this one) whose environment has `name` with a value under `prefix`: a cell's,
// and its descendants', which inherit it. POSIX reads /proc. Windows finds none and needs none:
// a cell's processes are in its Job Object, which died with the fabuild that held it.
std::vector<long> processes_with_environment(const std::string& name, const std::string& prefix);

// Kills those processes, twice: a leftover shell may start a child between the scan and its
// death (the second round 50 ms later). Returns those killed in the first round.
std::vector<long> kill_processes_with_environment(const std::string& name, const std::string& prefix);
// That call as a value: System's (app/system.h), a test's fake.
using KillTagged = std::function<std::vector<long>(const std::string& name, const std::string& prefix)>;

// The resident kB of `pid` and all its descendants now, summed (0 when it cannot be read). POSIX
// reads /proc: each task's children (Linux 3.5+ with CONFIG_PROC_CHILDREN, which Debian's,
// Ubuntu's and GitHub's runner kernels have) and each process's statm. Windows says 0: a Job
// Object counts its processes together (objcache/spawn_win32.cpp).
std::uint64_t resident_kb_with_descendants(long pid);

}  // namespace fabuild
