#pragma once

// Finding a program as execvp would: the first executable regular file named `program` in a
// ':'-separated PATH; a name with a '/' is taken as it is. Windows (path_search_win32.cpp): a
// ';'-separated PATH, and "nvcc" is found as nvcc.exe.

#include <string>

namespace fabuild {

// "" when it is not found (or not executable); an empty PATH searches /bin:/usr/bin.
std::string find_in_path(const std::string& program, const std::string& path_env);

}  // namespace fabuild
