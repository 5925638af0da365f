#include "app/recorded_costs.h"

#include <memory>

#include "matrix/select.h"
#include "util/hash.h"

namespace fabuild {

CiCosts ci_costs(const std::vector<Cell>& cells, const RemoteCacheSettings& remote, const System& system) {
  CiCosts costs;
  costs.remote = !remote.url.empty();
  std::shared_ptr<remote::Store> store;
  if (costs.remote && system.open_remote) {
    if (auto opened = system.open_remote(remote.url, system.env.value(remote.token_env))) store = std::move(*opened);
  }
  for (const auto& row : rows_of(cells)) {
    const std::string key = remote_row_key(cells[row.front()]);
    if (costs.rows.count(key) != 0) continue;
    RowCosts record = read_row_costs(*system.files, row_costs_path(system.cache_dir(), key)).value_or(RowCosts{});
    if (store) {
      if (const auto text = fetch_row_costs(*store, key)) {
        costs.digests[key] = hex(sha256_of(*text));
        if (const auto theirs = row_costs_from_json(*text)) add_theirs(record, *theirs);
      }
    }
    if (!record.empty()) costs.rows.emplace(key, std::move(record));
  }
  return costs;
}

}  // namespace fabuild
