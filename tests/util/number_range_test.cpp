#include "util/number_range.h"

#include <gtest/gtest.h>

namespace fabuild {
namespace {

// A budget's numbers (matrix/budget_limits.h): the reason is the real one, the bound in
// plain digits.
TEST(NumberComplaint, SaysWhatIsWrongWithTheNumberInPlainDigits) {
  const NumberRange cores{0.1, 65536};
  EXPECT_EQ(number_complaint("16", cores), "");
  EXPECT_EQ(number_complaint("1e3", cores), "") << "exponent form is a number";
  EXPECT_EQ(number_complaint("1e6", cores), "must be at most 65536, not 1e6");
  EXPECT_EQ(number_complaint("0", cores), "must be at least 0.1, not 0");
  EXPECT_EQ(number_complaint("lots", cores), "takes a number, not 'lots'");
  EXPECT_EQ(number_complaint("nan", cores), "takes a finite number, not 'nan'");
  EXPECT_EQ(number_complaint("1e30", NumberRange{0.1, 1 << 20}), "must be at most 1048576, not 1e30");
  const NumberRange jobs{1, 100000, true};
  EXPECT_EQ(number_complaint("1000000", jobs), "must be at most 100000, not 1000000");
  EXPECT_EQ(number_complaint("1.5", jobs), "takes a whole number, not 1.5");
  EXPECT_EQ(number_complaint("four", jobs), "takes a whole number, not 'four'");
}

}  // namespace
}  // namespace fabuild
