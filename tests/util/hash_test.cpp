#include "util/hash.h"

#include <gtest/gtest.h>

#include <fstream>

#include "../support/scratch_dir.h"

namespace fabuild {
namespace {

TEST(Hash, KnownDigests) {
  EXPECT_EQ(hex(sha256_of("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hex(sha256_of("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // As a wheel's RECORD writes it: urlsafe base64 without padding.
  EXPECT_EQ(base64url_nopad(sha256_of("")), "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU");
}

TEST(Hash, FilesInChunks) {
  test::ScratchDir dir("fabuild-hash");
  const auto path = dir.path() / "big";
  std::string data(200000, 'x');
  std::ofstream(path, std::ios::binary) << data;
  EXPECT_EQ(sha256_of_file(path).value(), sha256_of(data));
  const auto missing = sha256_of_file(dir.path() / "missing");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().what.find("missing"), std::string::npos) << missing.error().what;
}

}  // namespace
}  // namespace fabuild
