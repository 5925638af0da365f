#include "util/entry_cache.h"

#include <gtest/gtest.h>

#include <fstream>

#include "../support/scratch_dir.h"
#include "util/entry_lock.h"
#include "util/file.h"
#include "util/holder_lock.h"

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

// An entry unused since it was last measured is not walked again (its size comes from .sizes);
// one used since (mark_used), or a memo that cannot be read, is.
TEST_F(EntryCache, AnEntryIsMeasuredAgainOnlyWhenItWasUsedSince) {
  entry("env", 100, hours(48));
  const auto then = fs::last_write_time(root() / "env");
  EXPECT_EQ(trim_entry_cache(root(), {0, hours(24 * 30)}, now).bytes, 100u);
  EXPECT_TRUE(fs::exists(root() / ".sizes"));
  std::ofstream(root() / "env" / "more") << std::string(50, 'y');
  ASSERT_TRUE(set_last_write_time(root() / "env", then));  // grown, but not marked used
  EXPECT_EQ(trim_entry_cache(root(), {0, hours(24 * 30)}, now).bytes, 100u);
  mark_used(root() / "env");
  EXPECT_EQ(trim_entry_cache(root(), {0, hours(24 * 30)}, now).bytes, 150u);
  std::ofstream(root() / "env" / "again") << std::string(25, 'z');
  std::ofstream(root() / ".sizes") << "{not json";
  EXPECT_EQ(trim_entry_cache(root(), {0, hours(24 * 30)}, now).bytes, 175u);
}

// What another run may be using right now stays, whatever the limits.
TEST_F(EntryCache, AnEntryUsedWithinADayIsNeverRemoved) {
  entry("busy", 1000, hours(1));
  const EntryCacheReport r = trim_entry_cache(root(), {10, hours(0)}, now);
  EXPECT_TRUE(has("busy"));
  EXPECT_EQ(r.removed, 0u);
  EXPECT_EQ(r.bytes, 1000u);
}

// An entry a live run uses or makes stays, however old: its locks (util/entry_lock.h) are held.
// Once they are let go, the same trim removes it.
TEST_F(EntryCache, AnEntryThatARunUsesOrMakesIsNeverRemoved) {
  entry("used", 100, hours(24 * 90));
  entry("made", 100, hours(24 * 90));
  entry("free", 100, hours(24 * 90));
  {
    const auto use = EntryUse::take(root() / "used");
    ASSERT_TRUE(use.has_value());
    const auto make = HolderLock::try_take(entry_make_lock(root() / "made"), "making it");
    ASSERT_TRUE(make.has_value());
    ASSERT_TRUE(make->has_value());
    EXPECT_FALSE(EntryRemoval::try_take(root() / "used").has_value());
    EXPECT_FALSE(EntryRemoval::try_take(root() / "made").has_value());
    const EntryCacheReport r = trim_entry_cache(root(), {0, hours(24)}, now);
    EXPECT_TRUE(has("used"));
    EXPECT_TRUE(has("made"));
    EXPECT_FALSE(has("free"));
    EXPECT_EQ(r.removed, 1u);
    // Two runs use one entry at once: a shared hold.
    EXPECT_TRUE(EntryUse::take(root() / "used").has_value());
  }
  const EntryCacheReport r = trim_entry_cache(root(), {0, hours(24)}, now);
  EXPECT_FALSE(has("used"));
  EXPECT_FALSE(has("made"));
  EXPECT_EQ(r.removed, 2u);
  EXPECT_TRUE(fs::exists(entry_make_lock(root() / "made"))) << "a lock file is never removed";
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
