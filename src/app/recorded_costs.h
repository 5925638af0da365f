#pragma once

// The recorded unit costs of a plan's rows (costs/ci_estimate.h's CiCosts): this machine's
// records in fabuild's cache, completed by the remote cache's (app/remote_cache.h) when one is
// set. The one place the plan gathers what the cost model reads.

#include <vector>

#include "app/remote_cache.h"
#include "app/system.h"
#include "costs/ci_estimate.h"
#include "matrix/cell.h"
#include "util/version.h"

namespace fabuild {

// The recorded unit costs of the cells' rows: this machine's records, completed by the remote's
// (when `remote` names one; a remote that does not answer adds nothing). A row with neither
// borrows the record of its nearest sibling among `torch_series` (the matrix's, resolved:
// costs/borrowed.h), from here or the remote.
CiCosts ci_costs(const std::vector<Cell>& cells, const RemoteCacheSettings& remote,
                 const std::vector<Version>& torch_series, const System& system);

}  // namespace fabuild
