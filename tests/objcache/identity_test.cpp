// A compiler's identity (objcache/identity.h), cached per name it is run as: one binary under two
// names (g++ and c++ are one file on Debian, and say so by name in --version) has an answer for
// each, whichever is asked first. Found by the shard e2e: with the gate's wider MAX_JOBS a
// kernel's compile asked for g++ (nvcc's host compiler) before the API file's asked for c++, and
// the one cached answer made the kernels' keys differ from the run that had asked the other way.

#include "objcache/identity.h"

#include <gtest/gtest.h>

#include "../support/scratch_dir.h"
#include "support.h"

namespace fabuild::objcache {
namespace {

namespace fs = std::filesystem;

TEST(Identity, EachNameOfOneBinaryHasItsOwnAnswerWhicheverIsAskedFirst) {
  fabuild::test::ScratchDir dir("objcache-identity");
  const fs::path real = dir.path() / "bin" / "compiler-12";
  test::write(real, "#!/bin/sh\necho \"$(basename \"$0\") (Test) 12.2.0\"\n");
  fs::permissions(real, fs::perms::owner_all);
  fs::create_symlink(real, dir.path() / "bin" / "g++");
  fs::create_symlink(real, dir.path() / "bin" / "c++");
  for (const bool cxx_first : {true, false}) {
    Store store(dir.path() / (cxx_first ? "cache-cxx-first" : "cache-gxx-first"));
    EXPECT_TRUE(store.prepare());
    const std::string gxx = (dir.path() / "bin" / "g++").string();
    const std::string cxx = (dir.path() / "bin" / "c++").string();
    if (cxx_first) compiler_identity(store, cxx);
    const std::string g = compiler_identity(store, gxx);
    const std::string c = compiler_identity(store, cxx);
    EXPECT_NE(g.find("\ng++ (Test)"), std::string::npos) << g;
    EXPECT_NE(c.find("\nc++ (Test)"), std::string::npos) << c;
    EXPECT_EQ(compiler_identity(store, gxx), g);  // from the cache now, the same
  }
}

}  // namespace
}  // namespace fabuild::objcache
