#include "app/source_epoch.h"

#include <algorithm>
#include <charconv>

namespace fabuild {

std::optional<SourceEpoch> sdist_epoch(const Files& files, const std::filesystem::path& tree) {
  if (files.kind(tree / "PKG-INFO") != Files::Kind::kFile) return std::nullopt;
  std::int64_t newest = 0;
  for (const auto& file : files.files_under(tree, {}).value_or(std::vector<std::filesystem::path>())) {
    if (const auto id = files.identity(file)) newest = std::max(newest, id->modified_ns / 1000000000);
  }
  if (newest < kZipEpoch) return std::nullopt;
  return SourceEpoch{newest, "the sdist's newest file", ""};
}

const SourceEpoch& SourceEpochs::of(const std::filesystem::path& dir) {
  if (const auto it = known_.find(dir); it != known_.end()) return it->second;
  SourceEpoch epoch{kZipEpoch, "no commit or sdist to take it from: 1980-01-01", ""};
  const CommandResult git = runner_.run({"git", "-C", dir.string(), "log", "-1", "--format=%ct %H", "--", "."},
                                        {"PATH=" + path_}, std::chrono::seconds(30));
  std::int64_t seconds = 0;
  const std::string& out = git.output;
  const auto [end, ec] = std::from_chars(out.data(), out.data() + out.size(), seconds);
  const std::string_view rest(end, static_cast<std::size_t>(out.data() + out.size() - end));
  if (git.ok() && ec == std::errc() && seconds >= kZipEpoch && rest.size() >= 41 && rest[0] == ' ') {
    epoch = SourceEpoch{seconds, "the commit's time (git log)", std::string(rest.substr(1, 40))};
  } else if (const auto sdist = sdist_epoch(files_, dir)) {
    epoch = *sdist;
  }
  return known_.emplace(dir, epoch).first->second;
}

}  // namespace fabuild
