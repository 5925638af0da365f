// nvcc.exe and cl.exe stand-ins for the object cache's Windows tests (tests/windows/
// objcache_wine.py, tests/objcache/wrapper_win32_test.cpp): small programs that answer and write
// what the real ones do, so that fabuild-cc.exe is tested as nvcc's wrapper under Wine.
//
// As cl.exe (its file name cl.exe): with no arguments, the banner on stderr and the usage on
// stdout, as MSVC's does; its version from cl.version beside it (default 19.44.35207).
//
// As nvcc.exe (any other name):
//   --version   "Cuda compilation tools, release X" (X from nvcc.version beside it, else 12.8)
//   -c SRC -o OBJ [--generate-dependencies-with-compile --dependency-output D | -MD -MF D]
//   [-I DIR | -IDIR]... [-ccbin CL] [-gencode G]... [--pre-include H]... other options kept as flags
//       like nvcc with cl.exe as its host compiler: it needs cl.exe (-ccbin's, else on PATH),
//       follows #include "x" (the source's directory, then -I) and <x> (-I, then %INCLUDE%),
//       reads each pre-included H after the source's own text as nvcc lists it (the depfile
//       names it after the source), fails on #error or a missing header (exit 2, the message on
//       stderr), writes OBJ (the
//       flags and the preprocessed text: no paths, as an object without debug information) and
//       D as nvcc does on Windows: "OBJ : \", then each file read, backslashes, spaces escaped.
//       FAKE_NVCC_MS (milliseconds) stands for the compile's time.
#include <windows.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// This program's own file, whatever argv[0] says.
fs::path self() {
  wchar_t path[MAX_PATH];
  const DWORD n = GetModuleFileNameW(nullptr, path, MAX_PATH);
  return fs::path(std::wstring(path, n));
}

std::string version_beside(const char* file, const char* fallback) {
  const std::string v = read(self().parent_path() / file);
  return v.empty() ? fallback : v.substr(0, v.find_first_of("\r\n"));
}

struct Preprocessor {
  std::vector<std::string> dirs;  // -I, then %INCLUDE%
  std::vector<std::string> read_files;
  std::set<std::string> seen;
  std::string text;
  std::string error;

  bool file(const std::string& path) {
    if (!seen.insert(path).second) return true;  // #pragma once, for all
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    read_files.push_back(path);
    std::string line;
    while (std::getline(in, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.starts_with("#error")) {
        error = path + ": error: " + line.substr(7);
        return true;
      }
      if (line.starts_with("#include ") && line.size() > 11) {
        const char open = line[9];
        const std::string name = line.substr(10, line.find(open == '<' ? '>' : '"', 10) - 10);
        std::vector<std::string> where;
        if (open == '"') where.push_back(fs::path(path).parent_path().string());
        where.insert(where.end(), dirs.begin(), dirs.end());
        bool found = false;
        for (const auto& d : where) {
          const std::string candidate = d + "\\" + name;
          std::error_code ec;
          if (fs::is_regular_file(candidate, ec)) {
            found = file(candidate);
            break;
          }
        }
        if (!found) {
          error = path + ": fatal error: cannot open source file \"" + name + "\"";
          return true;
        }
        if (!error.empty()) return true;
        continue;
      }
      text += line + "\n";
    }
    return true;
  }
};

std::string escape(const std::string& path) {
  std::string out;
  for (char c : path) {
    if (c == ' ') out += '\\';
    out += c;
  }
  return out;
}

int cl_main() {
  std::fprintf(stderr, "Microsoft (R) C/C++ Optimizing Compiler Version %s for x64\n",
               version_beside("cl.version", "19.44.35207").c_str());
  std::fprintf(stderr, "Copyright (C) Microsoft Corporation.  All rights reserved.\n\n");
  std::printf("usage: cl [ option... ] filename... [ /link linkoption... ]\n");
  return 0;
}

int nvcc_main(int argc, char** argv) {
  std::string source, object, depfile, ccbin, flags;
  std::vector<std::string> pre_includes;
  Preprocessor pp;
  bool compile = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--version") {
      std::printf("nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release %s\n",
                  version_beside("nvcc.version", "12.8").c_str());
      return 0;
    }
    if (a == "-c") {
      compile = true;
    } else if (a == "-o") {
      object = next();
    } else if (a == "-MF" || a == "--dependency-output") {
      depfile = next();
    } else if (a == "-I") {
      pp.dirs.push_back(next());
    } else if (a.starts_with("-I")) {
      pp.dirs.push_back(a.substr(2));
    } else if (a == "-ccbin") {
      ccbin = next();
    } else if (a == "--pre-include" || a == "-include") {
      pre_includes.push_back(next());
    } else if (a == "-gencode" || a == "-Xcompiler" || a == "--threads") {
      flags += a + " " + next() + "\n";
    } else if (a.starts_with("-")) {
      flags += a + "\n";
    } else {
      source = a;
    }
  }
  if (!compile || source.empty() || object.empty()) {
    std::fprintf(stderr, "nvcc fatal   : the stand-in only compiles (-c SRC -o OBJ)\n");
    return 1;
  }
  // Real nvcc on Windows stops here without its host compiler.
  wchar_t found[MAX_PATH];
  const std::wstring cl = ccbin.empty() ? L"cl.exe" : std::wstring(ccbin.begin(), ccbin.end());
  if (SearchPathW(nullptr, cl.c_str(), ccbin.empty() || ccbin.find('.') == std::string::npos ? L".exe" : nullptr,
                  MAX_PATH, found, nullptr) == 0) {
    std::fprintf(stderr, "nvcc fatal   : Cannot find compiler 'cl.exe' in PATH\n");
    return 1;
  }
  if (const char* include = std::getenv("INCLUDE")) {
    std::stringstream s(include);
    for (std::string d; std::getline(s, d, ';');) {
      if (!d.empty()) pp.dirs.push_back(d);
    }
  }
  if (!pp.file(fs::absolute(source).string())) {
    std::fprintf(stderr, "cc1plus: fatal error: %s: No such file or directory\n", source.c_str());
    return 1;
  }
  for (const auto& header : pre_includes) {
    if (!pp.file(fs::absolute(header).string())) {
      std::fprintf(stderr, "cc1plus: fatal error: %s: No such file or directory\n", header.c_str());
      return 1;
    }
  }
  if (const char* ms = std::getenv("FAKE_NVCC_MS")) Sleep(static_cast<DWORD>(std::atoi(ms)));
  if (!pp.error.empty()) {
    std::fprintf(stderr, "%s\n1 error detected in the compilation of \"%s\".\n", pp.error.c_str(), source.c_str());
    return 2;
  }
  std::ofstream(object, std::ios::binary | std::ios::trunc) << "FAKE-NVCC-OBJECT\n" << flags << "--\n" << pp.text;
  if (!depfile.empty()) {
    std::ofstream d(depfile, std::ios::binary | std::ios::trunc);
    d << escape(object) << " : \\\r\n";
    for (std::size_t i = 0; i < pp.read_files.size(); ++i) {
      d << "    " << escape(pp.read_files[i]) << (i + 1 < pp.read_files.size() ? " \\\r\n" : "\r\n");
    }
  }
  std::printf("%s\n", fs::path(source).filename().string().c_str());  // as nvcc names each unit
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string name = self().stem().string();
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name == "cl" ? cl_main() : nvcc_main(argc, argv);
}
