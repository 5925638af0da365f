#include "objcache/staging_view.h"

#include <system_error>
#include <utility>

namespace fabuild::objcache {

namespace fs = std::filesystem;

Expected<StagingView> StagingView::open(const fs::path& view, const fs::path& target) {
  const fs::path root = view.parent_path();
  std::error_code ec;
  if (fs::create_directories(root, ec)) {
    fs::permissions(root, fs::perms::all | fs::perms::sticky_bit, ec);
  }
  if (!fs::is_directory(root)) return fail("cannot make " + root.string() + (ec ? ": " + ec.message() : ""));
  Expected<File> lock = File::open(view.string() + ".lock", File::Mode::kReadWrite);
  if (!lock) return tl::make_unexpected(lock.error());
  if (auto held = lock->lock(); !held) return tl::make_unexpected(held.error());
  // A link left by a holder that died is replaced: a new link under another name, renamed over it.
  const fs::path fresh = view.string() + ".new";
  fs::remove(fresh, ec);
  fs::create_directory_symlink(target, fresh, ec);
  if (ec) return fail("cannot link " + fresh.string() + " to " + target.string() + ": " + ec.message());
  fs::rename(fresh, view, ec);
  if (ec) {
    fs::remove(fresh, ec);
    return fail("cannot put the link at " + view.string() + ": " + ec.message());
  }
  return StagingView(std::move(*lock), view);
}

StagingView::StagingView(StagingView&& other) noexcept
    : lock_(std::move(other.lock_)), link_(std::exchange(other.link_, {})) {}

StagingView::~StagingView() {
  if (link_.empty()) return;
  std::error_code ec;
  fs::remove(link_, ec);
}

}  // namespace fabuild::objcache
