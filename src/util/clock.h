#pragma once

// The steady clock as a value: made once where the world is reached (cli/system.cpp, System's
// steady_now) and handed to what times its work, so a test gives it a clock of its own.

#include <chrono>
#include <functional>

namespace fabuild {

using SteadyNow = std::function<std::chrono::steady_clock::time_point()>;

}  // namespace fabuild
