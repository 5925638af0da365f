// A .whl as a hostile build could write it: arbitrary bytes handed to inspect_wheel (libarchive
// reading a zip) and verify_wheel. Either the wheel is read, with only safe member paths, or it
// is refused with a UserError; verify_wheel never throws. The bytes go through a memfd, so the
// fuzzer touches no disk.

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "util/error.h"
#include "wheel/inspect.h"
#include "wheel/verify.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const int fd = ::memfd_create("fuzz.whl", MFD_CLOEXEC);
  if (fd < 0) std::abort();
  for (std::size_t done = 0; done < size;) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n <= 0) std::abort();
    done += static_cast<std::size_t>(n);
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  fabuild::InspectLimits limits;
  limits.max_total_bytes = 8 << 20;  // small caps keep each run quick; the logic is the same
  limits.max_dist_info_file_bytes = 1 << 20;
  limits.max_members = 1000;
  if (const fabuild::Expected<fabuild::WheelContents> contents = fabuild::inspect_wheel(path, limits); contents) {
    for (const auto& m : contents->members) {
      if (!fabuild::safe_member_path(m.path)) std::abort();
    }
    (void)contents->tags();
    (void)contents->root_is_purelib();
  } else if (contents.error().what.empty()) {
    std::abort();
  }
  fabuild::WheelExpectation expected;
  expected.dist_name = "flash_attn";
  expected.version = "2.8.3+cu128torch2.8cxx11abiTRUE";
  expected.python_tag = expected.abi_tag = "cp312";
  expected.platform_tag = "linux_x86_64";
  (void)fabuild::verify_wheel(path, expected);
  ::close(fd);
  return 0;
}
