#pragma once

// The entries of the caches that several fabuild processes share (util/entry_cache.h: Python
// environments, CUDA toolkits from PyPI, unpacked sources, downloads). Two lock files beside
// each entry, named with a leading '.' so that a trim neither counts nor removes them:
//  - `.NAME.make`, exclusive (util/holder_lock.h): held by the one process that makes the
//    entry, which writes there what it does; the others wait for it and say for whom. An entry
//    is ready only when its maker's last act marked it so: one that dies leaves no lock and
//    nothing that looks ready, and the next holder makes it again.
//  - `.NAME.use`, shared: held by every run that uses the entry, for as long as it runs.
// A trim removes an entry only when it holds both exclusively, without waiting: never one that
// a live run is making or using. The lock files stay: removing one that a waiter has open would
// let two processes hold "the" lock at once.

#include <filesystem>
#include <optional>

#include "util/file.h"

namespace fabuild {

std::filesystem::path entry_make_lock(const std::filesystem::path& entry);  // DIR/.NAME.make
std::filesystem::path entry_use_lock(const std::filesystem::path& entry);   // DIR/.NAME.use

// A run's hold on an entry it uses. Waits while a trim holds the entry (one removal); nullopt
// when the lock file cannot be made (a read-only cache: nothing there can be trimmed either).
class EntryUse {
 public:
  static std::optional<EntryUse> take(const std::filesystem::path& entry);

 private:
  explicit EntryUse(File file) : file_(std::move(file)) {}
  File file_;  // closing it releases the lock
};

// Both of an entry's locks, exclusive: what a trim holds while it removes the entry.
class EntryRemoval {
 public:
  // nullopt when anyone makes or uses the entry, or its locks cannot be made.
  static std::optional<EntryRemoval> try_take(const std::filesystem::path& entry);

 private:
  EntryRemoval(File make, File use) : make_(std::move(make)), use_(std::move(use)) {}
  File make_;
  File use_;
};

}  // namespace fabuild
