#pragma once

// What the remote tier's tests share: a local object cache filled as fabuild-cc leaves one.

#include <string>
#include <utility>
#include <vector>

#include "objcache/store.h"
#include "util/hash.h"

namespace fabuild::remote {

// A local cache holding `n` compiled objects, as fabuild-cc leaves them; returns their keys.
inline std::vector<std::pair<std::string, std::string>> fill(const objcache::Store& store, int n) {
  EXPECT_TRUE(store.prepare());
  std::vector<std::pair<std::string, std::string>> used;
  for (int i = 0; i < n; ++i) {
    const std::string manifest = hex(sha256_of("manifest" + std::to_string(i)));
    const std::string result = hex(sha256_of("result" + std::to_string(i)));
    EXPECT_TRUE(store.put_result(
        result, objcache::Result{"object bytes " + std::to_string(i), "", "warning " + std::to_string(i)}));
    objcache::ManifestEntry e;
    e.result = result;
    e.deps = {{"/src/k" + std::to_string(i) + ".cu", std::string(64, '0')}};
    EXPECT_TRUE(store.add_to_manifest(manifest, e));
    used.emplace_back(manifest, result);
  }
  return used;
}

}  // namespace fabuild::remote
