// nvcc's temporary file names out of an object, and the anchor of its module id (objcache/reproducible.h).

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

// One anchor per compile key, a definition of its own that only this unit has.
TEST(ModuleAnchor, NamedAfterTheKeyAndDefinedHidden) {
  const ModuleAnchor a = module_anchor("0123456789abcdef0123456789abcdef");
  EXPECT_EQ(a.name, "fabuild_module_0123456789abcdef");
  EXPECT_NE(a.header.find("int fabuild_module_0123456789abcdef = 1;"), std::string::npos) << a.header;
  EXPECT_NE(a.header.find("visibility(\"hidden\")"), std::string::npos) << "not to be exported from the module";
  EXPECT_NE(module_anchor("fedcba9876543210").name, a.name);
}

}  // namespace
}  // namespace fabuild::objcache
