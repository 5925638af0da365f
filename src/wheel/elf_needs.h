#pragma once

// What an ELF shared object needs of the system it is loaded on: the symbol versions it takes
// from each library it links (its version needs, SHT_GNU_verneed, read with libelf), e.g.
// libc.so.6 -> {GLIBC_2.14, GLIBC_2.32}, libstdc++.so.6 -> {GLIBCXX_3.4.21, CXXABI_1.3.9}.
// The highest GLIBC_ version among them is the oldest glibc the object loads on: below it the
// loader stops with "version `GLIBC_2.32' not found", the most common failure of a prebuilt
// wheel; that floor is also what manylinux_2_X means (PEP 600). Only fabuild's Linux builds read
// ELF (elf_needs_posix.cpp); a win_amd64 wheel's modules are PE images and need no glibc.

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "util/expected.h"

namespace fabuild {

// Needed library file ("libc.so.6") -> the version names needed from it ("GLIBC_2.32").
using VersionNeeds = std::map<std::string, std::set<std::string>>;

// The object's version needs; empty when it has none (nothing versioned, or linked statically).
// nullopt when the file is not ELF at all (a linker script named .so), and always on Windows,
// whose fabuild reads no ELF. A Failure, naming the file, when it cannot be opened or its version
// needs cannot be read.
Expected<std::optional<VersionNeeds>> elf_version_needs(const std::filesystem::path& object);

// The oldest system an object (or a wheel's objects together) loads on, as version numbers
// without their prefix; "" where it needs no versioned symbol of that library.
struct SystemFloor {
  std::string glibc;    // "2.32": the highest GLIBC_x.y from glibc's libraries (libc, libm, ld-linux...)
  std::string glibcxx;  // "3.4.21": the highest GLIBCXX_x.y.z from libstdc++ (the compiler's runtime)

  bool operator==(const SystemFloor&) const = default;
};

// The floor of one object's needs. Versions compare as numbers: 2.9 < 2.17 < 2.28.
SystemFloor system_floor(const VersionNeeds& needs);

// `floor` raised to `other` where `other` needs more: the floor of a wheel's objects together.
void raise_floor(SystemFloor& floor, const SystemFloor& other);

// The floor of every ELF shared object under `dir` (files named *.so or *.so.N: the extension
// modules of an unpacked wheel and any library it carries), and which object sets the glibc
// floor. Fails as elf_version_needs does.
struct TreeFloor {
  SystemFloor floor;
  std::size_t objects = 0;           // ELF objects read; 0 for a win_amd64 wheel (PE images)
  std::filesystem::path glibc_from;  // the object that needs floor.glibc
};
Expected<TreeFloor> tree_floor(const std::filesystem::path& dir);

// Whether dotted version `a` is lower than `b`, number by number ("2.9" < "2.17", "2.3" <
// "2.3.4"); a version that is not dotted numbers is lower than any that is.
bool version_lower(const std::string& a, const std::string& b);

}  // namespace fabuild
