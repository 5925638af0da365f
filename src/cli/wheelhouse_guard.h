#pragma once

// The wheelhouse lock (wheel/wheelhouse_lock.h) for the commands that write a wheelhouse
// outside a build: `fabuild index` rewrites its pages and indexes, `fabuild merge` files wheels
// and rewrites SHA256SUMS and the manifest. A build holds the lock until it has published, so
// these wait for it, or refuse (exit 4) naming it, as a second build would.

#include <memory>
#include <ostream>
#include <string>

#include "wheel/wheelhouse_lock.h"

namespace fabuild {

// Locks `dir` when it exists (a command that would refuse a missing directory must not create
// it to lock it); nullptr when it does not.
std::unique_ptr<WheelhouseLock> lock_wheelhouse_for(const std::string& dir, const std::string& command, bool wait,
                                                    std::ostream& out);

}  // namespace fabuild
