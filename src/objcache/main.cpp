// fabuild-cc: the compiler wrapper behind fabuild's object cache (objcache/wrapper.h).
// Built statically; this file is its alone (the objcache layer leaves main.cpp out).
#include <string>
#include <vector>

#include "objcache/wrapper.h"

#ifdef _WIN32
#include <windows.h>

#include "util/windows_api.h"

// Arguments and environment as UTF-16 from Windows, UTF-8 inside (util/windows_api.h).
int wmain(int argc, wchar_t** argv) {
  std::vector<std::string> args;
  for (int i = 0; i < argc; ++i) args.push_back(fabuild::win32::narrow(argv[i]));
  std::vector<std::string> env;
  if (wchar_t* block = GetEnvironmentStringsW()) {
    for (const wchar_t* e = block; *e != L'\0'; e += std::wstring_view(e).size() + 1) {
      if (*e != L'=') env.push_back(fabuild::win32::narrow(e));  // not cmd's "=C:=C:\x" entries
    }
    FreeEnvironmentStringsW(block);
  }
  std::vector<const char*> environ_utf8;
  for (const auto& e : env) environ_utf8.push_back(e.c_str());
  environ_utf8.push_back(nullptr);
  return fabuild::objcache::wrapper_main(args, environ_utf8.data());
}
#else
extern char** environ;

// OpenSSL's static libcrypto can load modules and resolve host names, which a static binary
// could only do with the shared glibc of the build machine (the linker warns). fabuild-cc
// hashes and nothing else: the link wraps those calls (-Wl,--wrap, CMakeLists.txt) into these,
// which say "not available".
extern "C" {
void* __wrap_dlopen(const char*, int) { return nullptr; }
int __wrap_getaddrinfo(const char*, const char*, const void*, void**) { return -4; }  // EAI_FAIL
void* __wrap_gethostbyname(const char*) { return nullptr; }
}

int main(int argc, char** argv) {
  return fabuild::objcache::wrapper_main(std::vector<std::string>(argv, argv + argc), environ);
}
#endif
