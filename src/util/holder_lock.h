#pragma once

// An exclusive lock on a file that names its holder: who holds a wheelhouse (wheel/
// wheelhouse_lock.h), who is making a shared cache entry (util/entry_lock.h). The holder writes
// its pid, host, start and what it is doing into the file once the lock is its own; one who is
// turned away reads that to say whom it waits for. The lock is File's (flock(2), LockFileEx on
// one byte far past the content, which stays readable): the system drops it when the holder
// dies, however it dies, so nothing stale is left to clean up by hand.

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "util/file.h"

namespace fabuild {

// Who holds (or last held) a lock, as its holder wrote it.
struct LockHolder {
  long pid = 0;
  std::string host;
  std::string since;  // UTC, ISO 8601
  std::string what;   // the holder's command, or what it is doing

  // "pid 4242 on buildbox since 2025-01-01T10:00:00Z (fabuild matrix.yaml)"
  [[nodiscard]] std::string describe() const;
};

class HolderLock {
 public:
  // The lock on `file` (created, with its directory, if missing), or nullopt when another
  // process holds it; a Failure when the file cannot be made, locked or signed.
  [[nodiscard]] static Expected<std::optional<HolderLock>> try_take(const std::filesystem::path& file,
                                                                    const std::string& what);
  // Waits for it; calls `waiting` once, with the holder, when it must wait.
  [[nodiscard]] static Expected<HolderLock> take(const std::filesystem::path& file, const std::string& what,
                                                 const std::function<void(const LockHolder&)>& waiting = {});

 private:
  explicit HolderLock(File file) : file_(std::move(file)) {}
  File file_;  // closing it releases the lock
};

// What the lock file says; pid 0 when it is missing or unreadable.
LockHolder read_lock_holder_file(const std::filesystem::path& file);

// The same, read a few times while it names a process that is gone from this host: a new
// holder may have taken the lock and not yet written its name over the last one's.
LockHolder current_lock_holder(const std::filesystem::path& file);

}  // namespace fabuild
