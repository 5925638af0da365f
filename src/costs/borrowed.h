#pragma once

// A row with no record of its own (the first night of a new torch series: the nightly follows
// torch, docs/stable-abi.md) compiles the same kernels as the rows of its other torch series:
// the same package version, CUDA, archs, platform, ABI, profile, env and patches. Until its own
// jobs record it, its plan (share split, job times, the memory gate) goes by the record of its
// nearest torch sibling instead of guessing; its own record replaces that from its first build on.

#include <vector>

#include "matrix/cell.h"
#include "util/version.h"

namespace fabuild {

// Whether a cell's row may plan by a sibling's record: a wheel for one torch series (not a
// library, not a stable-ABI window, not a command cell's build).
bool may_borrow(const Cell& cell);

// The torch series whose records a row of `cell`'s series may borrow, nearest first: the older
// ones newest first (the releases the row's kernels were most recently built for), then the newer
// ones oldest first; its own series and duplicates left out.
std::vector<Version> borrow_order(const Cell& cell, const std::vector<Version>& series);
// Of those, how many a row with no record asks for (here, and on the remote: a request each): a
// plan of many torch series and rows with no record yet (a first run) stays one lookup a row
// and a few more, not one per series.
inline constexpr std::size_t kSiblingsAsked = 3;

// The same cell for another torch series: what names the sibling's row (remote_row_key).
Cell sibling_for(const Cell& cell, const Version& torch);

}  // namespace fabuild
