#include "app/recorded_costs.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "costs/borrowed.h"
#include "matrix/select.h"
#include "remote/guard.h"
#include "util/hash.h"

namespace fabuild {

namespace {

// A row's record, as this machine and the remote have it, asked once per key.
class Records {
 public:
  Records(const RemoteCacheSettings& remote, const System& system) : system_(system) {
    if (!remote.url.empty() && system.open_remote) {
      if (auto opened = system.open_remote(remote.url, system.env.value(remote.token_env))) store_ = *opened;
    }
  }
  // Why the remote was given up while the records were read; "" when it answered.
  [[nodiscard]] std::string trouble() const { return store_ ? store_->dropped_note() : std::string(); }

  struct Found {
    RowCosts record;
    std::string digest;  // the remote's record's SHA-256; "": none there
  };
  const Found& of(const std::string& key) {
    const auto known = found_.find(key);
    if (known != found_.end()) return known->second;
    Found f{read_row_costs(*system_.files, row_costs_path(system_.cache_dir(), key)).value_or(RowCosts{}), ""};
    if (store_) {
      if (const auto text = fetch_row_costs(*store_, key)) {
        f.digest = hex(sha256_of(*text));
        if (const auto theirs = row_costs_from_json(*text)) add_theirs(f.record, *theirs);
      }
    }
    return found_.emplace(key, std::move(f)).first->second;
  }

 private:
  const System& system_;
  std::shared_ptr<remote::GuardedStore> store_;
  std::map<std::string, Found> found_;
};

}  // namespace

CiCosts ci_costs(const std::vector<Cell>& cells, const RemoteCacheSettings& remote,
                 const std::vector<Version>& torch_series, const System& system) {
  CiCosts costs;
  costs.remote = !remote.url.empty();
  Records records(remote, system);
  const auto take = [&](const std::string& key, const Records::Found& found) {
    if (!found.digest.empty()) costs.digests[key] = found.digest;
    costs.rows.emplace(key, found.record);
  };
  for (const auto& row : rows_of(cells)) {
    const Cell& first = cells[row.front()];
    const std::string key = remote_row_key(first);
    if (costs.rows.count(key) != 0) continue;
    if (const auto& own = records.of(key); !own.record.empty()) {
      take(key, own);
      continue;
    }
    if (!may_borrow(first)) continue;
    const std::vector<Version> order = borrow_order(first, torch_series);
    for (std::size_t i = 0; i < order.size() && i < kSiblingsAsked; ++i) {
      const Version& series = order[i];
      const auto& theirs = records.of(remote_row_key(sibling_for(first, series)));
      if (theirs.record.kernel_cpu_s() <= 0) continue;
      take(key, theirs);
      costs.borrowed.emplace(key, series);
      break;
    }
  }
  costs.remote_trouble = records.trouble();
  return costs;
}

}  // namespace fabuild
