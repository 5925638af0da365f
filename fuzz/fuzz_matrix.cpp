// The matrix loader on arbitrary text: every input is either a matrix or a UserError with exit
// code 2 and a message (the loader's contract, src/matrix/loader.h). Anything else escaping —
// another exception, a crash, a sanitizer report, a hang, memory past libFuzzer's -rss_limit_mb —
// is a finding. Inputs that load are also expanded into cells, as `fabuild --list` would.

#include <cstdint>
#include <cstdlib>
#include <string>

#include "matrix/expand.h"
#include "matrix/loader.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const fabuild::MatrixSpec spec = fabuild::parse_matrix(text, "fuzz.yaml");
    (void)fabuild::expand(spec);
  } catch (const fabuild::UserError& e) {
    if (e.code() != fabuild::kExitBadConfig || e.message().empty()) std::abort();
  }
  return 0;
}
