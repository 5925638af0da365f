#include "util/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace fabuild {

void init_logging(bool verbose, bool quiet) {
  auto logger = spdlog::stderr_color_mt("fabuild");
  if (verbose) {
    logger->set_pattern("[%H:%M:%S.%e] fabuild: %^%l%$: %v");
    logger->set_level(spdlog::level::debug);
  } else {
    logger->set_pattern("fabuild: %^%l%$: %v");
    logger->set_level(quiet ? spdlog::level::err : spdlog::level::info);
  }
  spdlog::set_default_logger(logger);
}

}  // namespace fabuild
