#include "objcache/depfile.h"

#include <gtest/gtest.h>

namespace fabuild::objcache {
namespace {

TEST(Depfile, ReadsWhatGccWrites) {
  const auto d =
      parse_depfile("/b/k.o: /s/k.cu /usr/include/stdio.h \\\n /p/with\\ space.h /p/h\\#ash.h \\\n /p/dol$$lar.h\n");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->target, "/b/k.o");
  EXPECT_EQ(d->deps, (std::vector<std::string>{"/s/k.cu", "/usr/include/stdio.h", "/p/with space.h", "/p/h#ash.h",
                                               "/p/dol$lar.h"}));
}

TEST(Depfile, WrittenDepfilesReadBackTheSame) {
  const Depfile d{"/b/with space/k.o", {"/s/k.cu", "/p/a b.h", "/p/c#d.h", "/p/$x.h"}};
  const auto back = parse_depfile(write_depfile(d));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->target, d.target);
  EXPECT_EQ(back->deps, d.deps);
}

TEST(Depfile, DuplicatesAndPhonyRulesAreDropped) {
  const auto d = parse_depfile("k.o : a.h b.h a.h\na.h:\nb.h:\n");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->target, "k.o");
  EXPECT_EQ(d->deps, (std::vector<std::string>{"a.h", "b.h"}));
}

TEST(Depfile, NoRuleIsNothing) {
  EXPECT_FALSE(parse_depfile(""));
  EXPECT_FALSE(parse_depfile("just words\n"));
}

}  // namespace
}  // namespace fabuild::objcache
