// fabuild-cc: the compiler wrapper behind fabuild's object cache (objcache/wrapper.h).
// Built statically; this file is its alone (the objcache layer leaves main.cpp out).
#include <string>
#include <vector>

#include "objcache/wrapper.h"

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
