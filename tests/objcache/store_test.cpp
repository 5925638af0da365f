#include "objcache/store.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>

#include "../support/scratch_dir.h"

namespace fabuild::objcache {
namespace {

namespace fs = std::filesystem;
using test::ScratchDir;

std::string key(char c) { return std::string(64, c); }
// Four hex digits of i, to make distinct 64-character keys.
std::string fmt_index(std::size_t i) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (int shift = 12; shift >= 0; shift -= 4) out += digits[(i >> shift) & 15];
  return out;
}

TEST(Store, AResultReadsBackAsStored) {
  ScratchDir dir("objcache-store");
  Store store(dir.path());
  EXPECT_TRUE(store.prepare());
  EXPECT_TRUE(fs::exists(dir.path() / "CACHEDIR.TAG"));
  const Result r{std::string("\0\x7f"
                             "ELF",
                             5),
                 "out\n", "warning: x\n"};
  const auto bytes = store.put_result(key('a'), r);
  ASSERT_TRUE(bytes);
  EXPECT_GT(*bytes, r.object.size());
  const auto back = store.result(key('a')).result;
  ASSERT_TRUE(back);
  EXPECT_EQ(back->object, r.object);
  EXPECT_EQ(back->out, r.out);
  EXPECT_EQ(back->err, r.err);
  EXPECT_FALSE(store.result(key('b')).result);
}

// A cache that cannot be written (here its tmp/ is a file; a full disk alike) says so as a value:
// the wrapper counts the compile as not stored, the remote's fetch as not taken.
TEST(Store, WritesThatCannotBeDoneAreFailures) {
  ScratchDir dir("objcache-store");
  Store store(dir.path());
  EXPECT_TRUE(store.prepare());
  fs::remove_all(dir.path() / "tmp");
  std::ofstream(dir.path() / "tmp") << "not a directory";
  const auto put = store.put_result(key('a'), Result{"object bytes", "", ""});
  ASSERT_FALSE(put);
  EXPECT_NE(put.error().what, "");
  EXPECT_FALSE(store.add_to_manifest(key('m'), ManifestEntry{key('a'), {}, {}}));
  const auto adopted = store.adopt_result(key('a'), "not a result");
  ASSERT_TRUE(adopted);
  EXPECT_FALSE(*adopted);  // refused before anything is written
  EXPECT_FALSE(store.merge_manifest(key('m'), {ManifestEntry{key('a'), {}, {}}}));
  EXPECT_FALSE(store.result(key('a')).result);
}

TEST(Store, ADamagedResultIsRemovedAndReported) {
  ScratchDir dir("objcache-store");
  Store store(dir.path());
  EXPECT_TRUE(store.prepare());
  EXPECT_TRUE(store.put_result(key('a'), Result{"object bytes", "", ""}));
  const fs::path path = store.result_path(key('a'));
  std::string text = ScratchDir::read(path);
  text[text.size() - 3] ^= 1;  // one bit of the object
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  const StoredResult flipped = store.result(key('a'));
  EXPECT_FALSE(flipped.result);
  EXPECT_TRUE(flipped.damaged);
  EXPECT_FALSE(fs::exists(path));
  // Truncated: the same.
  EXPECT_TRUE(store.put_result(key('a'), Result{"object bytes", "", ""}));
  fs::resize_file(path, 10);
  const StoredResult truncated = store.result(key('a'));
  EXPECT_FALSE(truncated.result);
  EXPECT_TRUE(truncated.damaged);
}

TEST(Store, ManifestsKeepTheNewestEntriesOnce) {
  ScratchDir dir("objcache-store");
  Store store(dir.path());
  EXPECT_TRUE(store.prepare());
  for (std::size_t i = 0; i < kMaxManifestEntries + 3; ++i) {
    ManifestEntry e;
    e.result = std::string(60, 'r') + fmt_index(i);
    e.deps = {{"@SOURCE@", key('s')}, {"/usr/include/stdio.h", key('h')}};
    EXPECT_TRUE(store.add_to_manifest(key('m'), e));
  }
  ManifestEntry again;
  again.result = std::string(60, 'r') + fmt_index(kMaxManifestEntries + 1);
  EXPECT_TRUE(store.add_to_manifest(key('m'), again));
  const auto entries = store.manifest(key('m')).entries;
  ASSERT_EQ(entries.size(), kMaxManifestEntries);
  EXPECT_EQ(entries.front().result, again.result);
  EXPECT_EQ(entries[1].result, std::string(60, 'r') + fmt_index(kMaxManifestEntries + 2));
  EXPECT_EQ(entries[1].deps.size(), 2U);
}

TEST(Store, ADamagedManifestIsEmptyAndReported) {
  ScratchDir dir("objcache-store");
  Store store(dir.path());
  EXPECT_TRUE(store.prepare());
  fs::create_directories(store.manifest_path(key('m')).parent_path());
  std::ofstream(store.manifest_path(key('m'))) << "{\"version\": 1, \"entries\": [{\"result\": 3";
  const StoredManifest damaged = store.manifest(key('m'));
  EXPECT_TRUE(damaged.entries.empty());
  EXPECT_TRUE(damaged.damaged);
  // Storing replaces it.
  EXPECT_TRUE(store.add_to_manifest(key('m'), ManifestEntry{key('r'), {}, {}}));
  EXPECT_EQ(store.manifest(key('m')).entries.size(), 1U);
}

TEST(Store, TrimRemovesTheLeastRecentlyUsedFirst) {
  ScratchDir dir("objcache-store");
  Store store(dir.path());
  EXPECT_TRUE(store.prepare());
  const std::string object(1000, 'x');
  for (char c : {'a', 'b', 'c', 'd'}) EXPECT_TRUE(store.put_result(key(c), Result{object, "", ""}));
  // a is the oldest, then b; c was used just now.
  const auto now = fs::file_time_type::clock::now();
  fs::last_write_time(store.result_path(key('a')), now - std::chrono::hours(3));
  fs::last_write_time(store.result_path(key('b')), now - std::chrono::hours(2));
  fs::last_write_time(store.result_path(key('d')), now - std::chrono::hours(1));
  store.touch(key('m'), key('c'));
  const std::uint64_t size = cache_size(dir.path());
  EXPECT_GT(size, 4000U);
  const TrimReport nothing = trim(dir.path(), size);
  EXPECT_EQ(nothing.files_removed, 0U);
  const TrimReport r = trim(dir.path(), size / 2);
  EXPECT_LE(r.bytes_after, size / 2 / 10 * 9);
  EXPECT_FALSE(fs::exists(store.result_path(key('a'))));
  EXPECT_FALSE(fs::exists(store.result_path(key('b'))));
  EXPECT_TRUE(fs::exists(store.result_path(key('c'))));
  EXPECT_EQ(cache_size(dir.path()), r.bytes_after);
}

}  // namespace
}  // namespace fabuild::objcache
