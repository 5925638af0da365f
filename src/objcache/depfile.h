#pragma once

// Make-style dependency files as gcc (-MD -MF) and nvcc (-MD -MF) write them:
//   out.o: src.cu /usr/include/stdio.h <backslash-newline>
//    /path/with<backslash-space>space.h
// One rule; a backslash before a space or '#' escapes it, "$$" is a dollar, and a backslash
// before a newline continues the line.

#include <optional>
#include <string>
#include <vector>

namespace fabuild::objcache {

struct Depfile {
  std::string target;
  std::vector<std::string> deps;  // in the order written, duplicates removed
};

// nullopt when `text` holds no "target: deps" rule.
std::optional<Depfile> parse_depfile(const std::string& text);

// `target: deps`, one dependency per line, escaped as above.
std::string write_depfile(const Depfile& depfile);

}  // namespace fabuild::objcache
