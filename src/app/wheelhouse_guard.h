#pragma once

// The wheelhouse lock (wheel/wheelhouse_lock.h) as every command that writes a wheelhouse takes
// it: a build until it has published; `fabuild index`, which rewrites the pages and indexes;
// `fabuild merge`, which files wheels and rewrites SHA256SUMS and the manifest. While another
// holds it they refuse (exit 4) naming it, or with `wait` say once that they wait, and wait.

#include <memory>
#include <ostream>
#include <string>

#include "util/files.h"
#include "wheel/wheelhouse_lock.h"

namespace fabuild {

// Locks `dir`, creating it.
std::unique_ptr<WheelhouseLock> lock_wheelhouse(const std::string& dir, const std::string& command, bool wait,
                                                std::ostream& out);

// Locks `dir` when it exists (a command that would refuse a missing directory must not create
// it to lock it); nullptr when it does not.
std::unique_ptr<WheelhouseLock> lock_existing_wheelhouse(const Files& files, const std::string& dir,
                                                         const std::string& command, bool wait, std::ostream& out);

}  // namespace fabuild
