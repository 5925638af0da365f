#pragma once

// The numbers a setting takes, and what is wrong with one that is not among them: one wording for
// a flag and a matrix key alike ("must be at most 65536, not 1e6").

#include <string>
#include <string_view>

namespace fabuild {

// From `least` to `most`; whole ones only when `whole`.
struct NumberRange {
  double least;
  double most;
  bool whole = false;
};
// What is wrong with `text` as a number of `range`, or "" when nothing is: "must be at most 65536,
// not 1e6", "takes a finite number, not 'nan'", "takes a number, not 'lots'". Bounds are said in
// plain digits, never in exponent form.
std::string number_complaint(std::string_view text, const NumberRange& range);

}  // namespace fabuild
