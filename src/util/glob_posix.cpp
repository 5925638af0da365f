#include <fnmatch.h>

#include <string>

#include "util/text.h"

namespace fabuild {

bool glob_match(std::string_view pattern, std::string_view text) {
  const std::string p(pattern);
  const std::string t(text);
  return fnmatch(p.c_str(), t.c_str(), 0) == 0;
}

}  // namespace fabuild
