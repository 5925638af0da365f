// PEP 427 file names: parse_wheel_name either refuses with a Failure or returns parts that
// rebuild the very name it was given, none of which could leave its directory.

#include <cstdint>
#include <cstdlib>
#include <string>

#include "util/error.h"
#include "wheel/wheel_name.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string name(reinterpret_cast<const char*>(data), size);
  if (const fabuild::Expected<fabuild::WheelName> parsed = fabuild::parse_wheel_name(name); parsed) {
    const fabuild::WheelName& w = *parsed;
    const std::string again =
        w.distribution + "-" + w.version + (w.build.empty() ? "" : "-" + w.build) + "-" + w.tag() + ".whl";
    if (again != name) std::abort();
    for (const std::string* part : {&w.distribution, &w.version, &w.python_tag, &w.abi_tag, &w.platform_tag}) {
      if (part->empty() || part->find('/') != std::string::npos || part->find("..") != std::string::npos) std::abort();
    }
    if (!w.local_label().empty() && w.public_version() + "+" + w.local_label() != w.version) std::abort();
    (void)fabuild::same_version(w.version, w.public_version());
  } else if (parsed.error().what.empty()) {
    std::abort();
  }
  (void)fabuild::normalize_project_name(name);
  return 0;
}
