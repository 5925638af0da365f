#pragma once

// A view of a cell's staging directory at a path named after one compile (NormalForm::view): a
// symbolic link to the directory, held while nvcc compiles through it, so that the paths nvcc's
// device code keeps (-lineinfo, -G) name the view, the same from any directory (docs/security.md,
// "Reproducible wheels"). The same compile in another staging directory names the same view, so
// the holder keeps a lock beside it (<view>.lock) while the compiler runs: the other waits. The
// views' directory is made for everyone (mode 1777, as /tmp), for the path is the same for every
// user; the link goes when it is let go, the lock file (empty) stays.

#include <filesystem>
#include <string>

#include "util/expected.h"
#include "util/file.h"

namespace fabuild::objcache {

class StagingView {
 public:
  // `view` (absolute) made a link to `target`, after any other holder has let it go.
  static Expected<StagingView> open(const std::filesystem::path& view, const std::filesystem::path& target);

  StagingView(StagingView&& other) noexcept;
  StagingView& operator=(StagingView&&) = delete;
  StagingView(const StagingView&) = delete;
  StagingView& operator=(const StagingView&) = delete;
  ~StagingView();  // the link removed, then the lock dropped

 private:
  StagingView(File lock, std::filesystem::path link) : lock_(std::move(lock)), link_(std::move(link)) {}
  File lock_;
  std::filesystem::path link_;  // "" once moved from
};

}  // namespace fabuild::objcache
