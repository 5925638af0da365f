#pragma once

// A compile on a busier machine takes more CPU time: its cores share caches, memory bandwidth and
// a power budget with the others' compiles. A row's record keeps how busy the machine that
// measured each unit was (UnitCost::busy: every processor of it, 0 to 1), and a plan times the
// units at the load it plans for, not the one they happened to be recorded at.
//
// Measured on the GPU machine's 16-core form (docs/performance.md, "A loaded machine's
// compiles"): one FlashAttention 2 kernel compiled 1, 4, 8, 12 and 16 at once took 1.00, 1.22,
// 1.09, 1.09 and 1.22 times its CPU time alone (machine 6 %, 25 %, 48 %, 68 % and 91 % busy);
// the 72 kernels of a minimal FA2 row built at 8 and at 16 cores (51 % and 100 % busy) took a
// median 1.05 times the CPU at 16 (their sum 1.05); two rows' records taken half as loaded as
// their next nights ran took 1.16 and 1.18 times the CPU then. A line through them:
// 1 + kContention × busy, kContention 0.2 (0.5 -> 1.0 busy: 1.09 times).

#include <cstddef>
#include <string>

#include "costs/row_costs.h"

namespace fabuild {

inline constexpr double kContention = 0.2;

// How slow a compile is on a machine `busy` busy (clamped to 0..1), against an idle one's.
double contention(double busy);

// The record with every unit's times (CPU and wall) as on a machine `busy` busy, each unit's
// busy then `busy`; a unit whose record does not say how busy its machine was, as recorded.
RowCosts at_busy(const RowCosts& record, double busy);

// The CPU-weighted mean of the load its units were recorded at; nullopt where none says.
std::optional<double> recorded_busy(const RowCosts& record);

// What the plan says of `rows` rows' records, recorded on machines `least` to `most` busy:
// "2 of them recorded on a machine 51-100 % busy, timed as a runner's own compiles load it (1.09
// times the CPU at most)".
std::string loads_said(std::size_t rows, double least, double most);

}  // namespace fabuild
