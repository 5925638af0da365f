#pragma once

// The CreateProcessW half of the Windows process supervisor (process_win32.cpp).

#include <string>

#include "util/expected.h"
#include "util/process.h"
#include "util/windows_api.h"

namespace fabuild::win32 {

// The program CreateProcessW is given, found as the child would be: argv[0] with a path
// separator is taken as it is (relative: to `cwd`) if it is a file; else it is searched
// (util/path_search.h) in the PATH of spec.env (the system directories when it has none) with
// its PATHEXT.
Expected<std::string> find_program(const ProcessSpec& spec);

struct Started {
  Handle process;
  Handle job;
  DWORD pid = 0;
};

// CreateProcessW, suspended until it is in a Job Object of its own that kills everything in it
// when its last handle closes (so a cell's tree dies with it, and with fabuild); a new process
// group (Ctrl-C is fabuild's to handle, Ctrl-Break reaches the group); stdin from NUL, stdout
// and stderr on `output`, no other handle inherited; exactly spec.env as its environment.
// The process and its job, or the failing call and its error.
Expected<Started> spawn(const ProcessSpec& spec, const std::string& program, HANDLE output);

}  // namespace fabuild::win32
