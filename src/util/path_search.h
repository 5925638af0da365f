#pragma once

// Finding a program as execvp would, the one search every caller uses: the supervisors for the
// processes they start (from the child's PATH and working directory), the environment's
// find_program, the compiler wrapper. POSIX: the first executable regular file in a
// ':'-separated PATH. Windows (path_search_win32.cpp): a ';'-separated PATH, each directory
// trying the name with each PATHEXT extension, then as written if it has one.

#include <string>

#include "util/expected.h"

namespace fabuild {

// `name` holds no directory. A relative PATH entry is taken from `cwd` ("": fabuild's own), and
// the program found is returned as the entry spells it. `pathext` (Windows): ""  = the usual
// ".COM;.EXE;.BAT;.CMD". The failure says what was searched: "ninja: No such file or directory
// (searched PATH=/usr/bin:/bin)", or "Permission denied" for a file found but not executable.
Expected<std::string> search_path(const std::string& name, const std::string& path_env, const std::string& cwd = {},
                                  const std::string& pathext = {});

// "" when it is not found (or not executable); a name with a directory is checked as it is; an
// empty PATH searches /bin:/usr/bin.
std::string find_in_path(const std::string& program, const std::string& path_env);

}  // namespace fabuild
