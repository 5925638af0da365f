#include "util/entry_cache.h"

#include <gtest/gtest.h>

#include <fstream>

#include "../support/scratch_dir.h"
#include "util/file.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using std::chrono::hours;

class EntryCache : public ::testing::Test {
 protected:
  // An entry of `bytes` bytes (a directory with one file), last used `age` ago.
  void entry(const std::string& name, std::size_t bytes, hours age) {
    const fs::path dir = root() / name;
    fs::create_directories(dir);
    std::ofstream(dir / "data") << std::string(bytes, 'x');
    ASSERT_TRUE(set_last_write_time(dir, now - age));
  }
  fs::path root() const { return scratch.path() / "cache"; }
  bool has(const std::string& name) const { return fs::exists(root() / name); }

  test::ScratchDir scratch{"entry-cache"};
  fs::file_time_type now = fs::file_time_type::clock::now();
};

TEST_F(EntryCache, OldEntriesGoThenTheLeastRecentlyUsedUntilItFits) {
  entry("ancient", 100, hours(24 * 40));
  entry("old", 300, hours(24 * 10));
  entry("older", 300, hours(24 * 12));
  entry("today", 300, hours(2));
  entry(".staging", 5000, hours(24 * 100));  // not an entry
  const EntryCacheReport r = trim_entry_cache(root(), {700, hours(24 * 30)}, now);
  EXPECT_FALSE(has("ancient"));  // past the age limit
  EXPECT_FALSE(has("older"));    // the least recently used, while over 700 bytes
  EXPECT_TRUE(has("old"));
  EXPECT_TRUE(has("today"));
  EXPECT_TRUE(has(".staging"));
  EXPECT_EQ(r.removed, 2u);
  EXPECT_EQ(r.removed_bytes, 400u);
  EXPECT_EQ(r.entries, 2u);
  EXPECT_EQ(r.bytes, 600u);
}

// What another run may be using right now stays, whatever the limits.
TEST_F(EntryCache, AnEntryUsedWithinADayIsNeverRemoved) {
  entry("busy", 1000, hours(1));
  const EntryCacheReport r = trim_entry_cache(root(), {10, hours(0)}, now);
  EXPECT_TRUE(has("busy"));
  EXPECT_EQ(r.removed, 0u);
  EXPECT_EQ(r.bytes, 1000u);
}

TEST_F(EntryCache, MarkingAnEntryUsedKeepsItAndAMissingCacheIsEmpty) {
  entry("venv", 10, hours(24 * 90));
  mark_used(root() / "venv");
  EXPECT_EQ(trim_entry_cache(root(), {0, hours(24 * 30)}).removed, 0u);
  EXPECT_TRUE(has("venv"));
  const EntryCacheReport none = trim_entry_cache(scratch.path() / "absent", {1, hours(1)}, now);
  EXPECT_EQ(none.entries, 0u);
  EXPECT_EQ(none.removed, 0u);
}

}  // namespace
}  // namespace fabuild
