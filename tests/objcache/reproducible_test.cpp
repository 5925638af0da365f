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

// Two compiles' module ids of one FlashAttention 2 kernel file (its tail: nvcc's <8 hex>_<pid>),
// as mangled names and as an anonymous namespace's: one text after pinning, the same length.
TEST(PinNvccModuleIds, ARandomTailBecomesOneOfTheSameLengthEverywhere) {
  const auto object = [](const std::string& tail) {
    const std::string id = "_INTERNAL_8e47b44e_37_flash_fwd_hdim192_fp16_causal_sm80_cu_" + tail;
    return std::string(
               "\x7f"
               "ELF\0",
               5) +
           "_ZN" + std::to_string(id.size()) + id + "4cuda3std3__45__cpo5beginE" + std::string("\0", 1) + "_ZN" +
           std::to_string(id.size()) + id + "4cuda3std3__420unreachable_sentinelE" + std::string("\0", 1) +
           "_GLOBAL__N__8e47b44e_37_flash_fwd_hdim192_fp16_causal_sm80_cu_" + tail + "6ignoreE";
  };
  std::string a = object("efda4e04_19401");
  std::string b = object("9042a7b7_19399");
  const std::size_t size = a.size();
  EXPECT_EQ(pin_nvcc_module_ids(a), 3u);
  EXPECT_EQ(pin_nvcc_module_ids(b), 3u);
  EXPECT_EQ(a.size(), size);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.find("efda4e04_19401"), std::string::npos);
  EXPECT_EQ(pin_nvcc_module_ids(a), 0u) << "already pinned";
}

// Only when the fat binary holds SASS alone, which fatbinary does not compress: with PTX, device
// debug images, compression asked for or relocatable device code, the id is also in compressed
// device code.
TEST(PinNvccModuleIds, OnlyForAFatBinaryOfSassAlone) {
  using Args = std::vector<std::string>;
  EXPECT_TRUE(module_ids_pinnable(Args{"-c", "k.cu", "-gencode", "arch=compute_90,code=sm_90", "--threads", "1"}));
  EXPECT_TRUE(module_ids_pinnable(
      Args{"-gencode=arch=compute_80,code=sm_80", "--generate-code=arch=compute_90a,code=[sm_90a]"}));
  EXPECT_TRUE(module_ids_pinnable(Args{"-arch=sm_90", "-code=sm_90"}));
  EXPECT_FALSE(module_ids_pinnable(
      Args{"-gencode", "arch=compute_90,code=sm_90", "-gencode", "arch=compute_90,code=compute_90"}))
      << "PTX";
  EXPECT_FALSE(module_ids_pinnable(Args{"-gencode=arch=compute_90,code=[sm_90,compute_90]"})) << "PTX";
  EXPECT_FALSE(module_ids_pinnable(Args{"-arch=sm_90"})) << "sm_90 and compute_90";
  EXPECT_FALSE(module_ids_pinnable(Args{"-arch", "native"}));
  EXPECT_FALSE(module_ids_pinnable(Args{"-c", "k.cu"})) << "nvcc's default arch, with PTX";
  EXPECT_FALSE(module_ids_pinnable(Args{"-gencode", "arch=compute_90,code=sm_90", "-G"}));
  EXPECT_FALSE(module_ids_pinnable(Args{"-gencode", "arch=compute_90,code=sm_90", "-Xfatbin", "-compress-all"}));
  EXPECT_FALSE(module_ids_pinnable(Args{"-gencode", "arch=compute_90,code=sm_90", "--compress-mode=size"}));
  EXPECT_FALSE(module_ids_pinnable(Args{"-gencode", "arch=compute_90,code=sm_90", "-rdc", "true"}));
  EXPECT_FALSE(module_ids_pinnable(Args{"-gencode", "arch=compute_90,code=sm_90", "-dc"}));
  EXPECT_TRUE(module_ids_pinnable(Args{"-gencode", "arch=compute_90,code=sm_90", "-rdc=false"}));
}

TEST(PinNvccModuleIds, AnIdNamedAfterAKernelStays) {
  // A unit whose first external entity is a __global__ function: its name is the tail.
  std::string object = "_ZN35_INTERNAL_069be49f_7_anon_cu__Z1kPi4cuda3std3__45__cpo5beginE";
  const std::string before = object;
  EXPECT_EQ(pin_nvcc_module_ids(object), 0u);
  EXPECT_EQ(object, before);
}

}  // namespace
}  // namespace fabuild::objcache
