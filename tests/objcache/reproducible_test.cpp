// nvcc's temporary file names out of an object (objcache/reproducible.h).

#include "objcache/reproducible.h"

#include <gtest/gtest.h>

namespace fabuild::objcache {
namespace {

TEST(PinNvccTempNames, ThePidAndCounterBecomeZerosAndNothingElseMoves) {
  std::string object = std::string(
                           "\x7f"
                           "ELF\0\0",
                           6) +
                       "tmpxft_000010b8_00000000-6_flash_fwd_hdim32.cudafe1.cpp" + std::string("\0", 1) +
                       "tmpxft_0000abcd_00000001-6_x.cudafe1.cpp";
  const std::size_t size = object.size();
  EXPECT_EQ(pin_nvcc_temp_names(object), 2u);
  EXPECT_EQ(object.size(), size);
  EXPECT_NE(object.find("tmpxft_00000000_00000000-6_flash_fwd_hdim32.cudafe1.cpp"), std::string::npos);
  EXPECT_NE(object.find("tmpxft_00000000_00000000-6_x.cudafe1.cpp"), std::string::npos);
  EXPECT_EQ(pin_nvcc_temp_names(object), 0u) << "already pinned";
}

TEST(PinNvccTempNames, WhatIsNotSuchANameStays) {
  for (std::string s : {std::string("tmpxft_"), std::string("tmpxft_0000abcd"), std::string("tmpxft_0000ABCD_00000000"),
                        std::string("tmpxft_0000abcd-00000000"), std::string("tmpxft_0000abcd_0000")}) {
    const std::string before = s;
    EXPECT_EQ(pin_nvcc_temp_names(s), 0u) << before;
    EXPECT_EQ(s, before);
  }
}

}  // namespace
}  // namespace fabuild::objcache
