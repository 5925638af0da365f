#pragma once

// What every command does around its work: errors printed once, as
// "fabuild: error: <where>: <what>" and "  hint: <what to do>", and their exit codes.

#include <functional>

namespace fabuild {

// Runs `body` and returns its exit code; a UserError is printed and gives its code, anything
// else is reported as an internal error (exit 1), never an abort.
int report_errors(const std::function<int()>& body);

}  // namespace fabuild
