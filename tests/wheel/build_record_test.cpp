// What two builds' records say differently about their inputs (wheel/build_record.h), for
// --rebuild-check to say why a rebuilt wheel is not the filed one.

#include "wheel/build_record.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fabuild {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(BuildRecord, TheDifferencesAreTheInputsNotWhatTheBuildFound) {
  const std::string filed = R"({"source": {"kind": "path", "commit": "caa2336"},
    "source_date_epoch": {"seconds": "1795841688"}, "toolchain": {"nvcc_build": "13.0.88"},
    "env": {"FLASH_ATTN_CUDA_ARCHS": "90"}, "object_cache": {"compiles": {"hits": 16}}, "ci": {"run": "1"}})";
  const std::string rebuilt = R"({"source": {"kind": "path", "commit": "d00d00d"},
    "source_date_epoch": {"seconds": "1795841688"}, "toolchain": {"nvcc_build": "13.0.88"},
    "env": {"FLASH_ATTN_CUDA_ARCHS": "90", "NVCC_APPEND_FLAGS": "-O2"}, "object_cache": {"compiles": {"hits": 0}}})";
  EXPECT_THAT(build_record_differences(filed, rebuilt),
              ElementsAre("source.commit (\"caa2336\" filed, \"d00d00d\" now)",
                          "env.NVCC_APPEND_FLAGS (none filed, \"-O2\" now)"));
  EXPECT_THAT(build_record_differences(filed, filed), IsEmpty());
  EXPECT_THAT(build_record_differences("", rebuilt), IsEmpty());  // filed before records were written
}

}  // namespace
}  // namespace fabuild
