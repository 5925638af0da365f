#include "util/environment.h"

extern char** environ;

namespace fabuild {

Environment Environment::of_this_process() { return parse(environ); }

bool Environment::same_name(const std::string& a, const std::string& b) { return a == b; }

}  // namespace fabuild
