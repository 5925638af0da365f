#include "cli/report.h"

#include <fmt/format.h>

#include <exception>

#include "util/error.h"

namespace fabuild {

int report_errors(const std::function<int()>& body) {
  try {
    return body();
  } catch (const UserError& e) {
    const std::string where = e.where().str();
    fmt::print(stderr, "fabuild: error: {}{}\n", where.empty() ? "" : where + ": ", e.message());
    if (!e.hint().empty()) fmt::print(stderr, "  hint: {}\n", e.hint());
    return e.code();
  } catch (const std::exception& e) {
    // A bug, not a user error: say so plainly instead of aborting.
    fmt::print(stderr, "fabuild: internal error: {}\n  hint: please report this with the matrix file\n", e.what());
    return kExitCellFailed;
  }
}

}  // namespace fabuild
