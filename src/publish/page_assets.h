#pragma once

// The matrix page's style and script, inlined into index.html so that the page needs nothing
// but itself (no network, works from file://).

namespace fabuild {

extern const char* const kPageCss;
extern const char* const kPageJs;

}  // namespace fabuild
