#pragma once

// libcurl's global initialisation, once per process, by whichever thread first needs it: each
// layer that speaks HTTP (source downloads, the object cache's remote tier) calls this before
// its first handle. curl_global_init is not safe to race, and cells download in parallel.
// Header-only: only layers that link libcurl include it.

#include <curl/curl.h>

#include <mutex>

namespace fabuild {

inline void init_curl_once() {
  static std::once_flag once;  // one for the process: an inline function's static is shared
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

}  // namespace fabuild
