#pragma once

// One HTTP GET through libcurl, appended to a file from wherever the file ends. download.cpp
// owns the policy (retries, backoff, verification); this owns what one request did.

#include <cstdint>
#include <string>

#include "source/download.h"
#include "util/file.h"

namespace fabuild {

struct TransferOutcome {
  enum class Kind {
    kComplete,   // a whole 200/206 body is in the file
    kRetryable,  // the network or the server failed in a way that may pass; keep what we have
    kRestart,    // the server cannot continue from our offset: truncate and start from zero
    kFatal,      // retrying cannot help
  };
  Kind kind = Kind::kFatal;
  std::string error;           // why, for messages: "HTTP 503", "Connection reset by peer", ...
  long http_status = 0;        // of the last response; 0 if none arrived
  std::uint64_t received = 0;  // body bytes written to the file by this request
  bool range_ignored = false;  // we asked for a range and got the whole body (200)
};

// GETs `url` into `file` (open to append), which holds `offset` bytes already: asks for
// "Range: bytes=<offset>-" when offset > 0 and copes with a server that answers 200 instead.
TransferOutcome transfer_once(const std::string& url, File& file, std::uint64_t offset, const DownloadOptions& options);

}  // namespace fabuild
