// Objects on probation (objcache/probation.h): what a fetch put there stays until a build proves
// it, a failure evicts what is left and nothing else, and the list holds only cache paths.

#include "objcache/probation.h"

#include <gtest/gtest.h>

#include <fstream>

#include "../support/scratch_dir.h"

namespace fabuild::objcache {
namespace {

namespace fs = std::filesystem;
using test::ScratchDir;

std::string key(char c) { return std::string(64, c); }

// A cache holding three results, a, b and c, and row r's list.
class ProbationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    EXPECT_TRUE(store.prepare());
    for (char c : {'a', 'b', 'c'}) EXPECT_TRUE(store.put_result(key(c), Result{"object", "", ""}));
  }
  ScratchDir dir{"objcache-probation"};
  const Store store{dir.path()};
  const Probation row{store, key('r')};
  const std::string a = row.path_of(store.result_path(key('a')));
  const std::string b = row.path_of(store.result_path(key('b')));
};

TEST_F(ProbationTest, ObjectsStayOnProbationUntilABuildProvesThem) {
  EXPECT_EQ(a, "results/aa/" + key('a').substr(2));
  EXPECT_TRUE(row.add({a, b}));
  EXPECT_TRUE(row.add({b}));  // listed once
  EXPECT_EQ(row.paths(), (std::vector<std::string>{a, b}));
  EXPECT_TRUE(Probation(store, key('s')).paths().empty());  // another row's list is its own
  EXPECT_EQ(row.prove({a}), std::size_t{1});
  EXPECT_EQ(row.paths(), std::vector<std::string>{b});
  EXPECT_EQ(row.prove({b}), std::size_t{0});
  EXPECT_FALSE(fs::exists(dir.path() / "probation" / key('r')));  // nothing left: no file
  EXPECT_TRUE(store.result(key('a')).result.has_value());         // proving removes nothing
}

TEST_F(ProbationTest, AFailureEvictsWhatIsStillOnProbationAndNothingElse) {
  EXPECT_TRUE(row.add({a, b}));
  EXPECT_EQ(row.prove({a}), std::size_t{1});
  EXPECT_EQ(row.evict(), std::vector<std::string>{b});
  EXPECT_TRUE(store.result(key('a')).result.has_value());  // proven: kept
  EXPECT_FALSE(store.result(key('b')).result.has_value());
  EXPECT_TRUE(store.result(key('c')).result.has_value());  // never on probation
  EXPECT_TRUE(row.paths().empty());
  EXPECT_TRUE(row.evict()->empty());
}

// The list is read back from disk: a line that is not a cache path below the cache is never
// removed, whatever wrote it.
TEST(Probation, OnlyCachePathsBelowTheCacheAreEvicted) {
  ScratchDir dir("objcache-probation");
  const Store store(dir.path() / "cache");
  EXPECT_TRUE(store.prepare());
  std::ofstream(dir.path() / "precious") << "x";
  const Probation row(store, key('r'));
  EXPECT_TRUE(row.add({"../precious", "results/../../precious", "/etc/passwd", "tmp/x"}));
  EXPECT_TRUE(row.paths().empty());
  fs::create_directories(store.dir() / "probation");
  std::ofstream(store.dir() / "probation" / key('r')) << "../precious\nresults/../../precious\n";
  EXPECT_TRUE(row.evict()->empty());
  EXPECT_TRUE(fs::exists(dir.path() / "precious"));
}

}  // namespace

// A list that cannot be locked or written is a Failure the caller reads, not an exception: the
// objects stay as they were.
TEST(Probation, AListItCannotWriteIsAFailureNotAnException) {
  ScratchDir dir("objcache-probation-blocked");
  const Store store(dir.path() / "cache");
  EXPECT_TRUE(store.prepare());
  std::ofstream(store.dir() / "probation") << "a file where the list's directory goes";
  const Probation row(store, key('r'));
  const Expected<void> added = row.add({"results/aa/" + key('a').substr(2)});
  ASSERT_FALSE(added);
  EXPECT_FALSE(added.error().what.empty());
  EXPECT_EQ(row.prove({}), std::size_t{0});  // no list: nothing on probation
  EXPECT_TRUE(row.evict()->empty());
}

}  // namespace fabuild::objcache
