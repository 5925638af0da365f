#pragma once

// manifest.json at the wheelhouse root: which wheel each cell filed, its digest and size, how
// long it took and what built it. A re-run reads it to tell a cell whose wheel is filed and
// intact from one that must be built again.
//
//   {"cells": {"<cell id>": {"wheel": "fa2.8.3/torch2.8/cu128/flash_attn-...whl",
//                            "sha256": "<hex>", "size": 123, "build_seconds": 61.5,
//                            "versions": {"nvcc": "12.8.93", "python": "3.12.7", ...},
//                            "image": {"name": "pytorch/manylinux2_28-builder:cuda12.8",
//                                      "id": "sha256:<hex>", "digest": "repo@sha256:<hex>"}}}}
//                            (image: container cells only; digest: pulled images only)
//                            "object_cache": {"hits": 16, "misses": 1, "stored_bytes": 812, ...}
//                            "patches": {"fix.patch": "<sha256>"}, "exports": {"mha_fwd": "flash::mha_fwd(...)"}
//                            "needs": {"glibc": "2.28", "glibcxx": "3.4.21"}  (its ELF modules': elf_needs.h)
//                            "stable_floor": "2.10", "torch_proofs": [{"series": "2.11", "torch": "2.11.0+cu130",
//                                                "ok": true, "detail": "...", "gpu": "..."}]  (docs/stable-abi.md)
//   A library cell (docs/library.md) names its archive under "library" instead of "wheel":
//              "<cell id>": {"library": "fa3.0.0/lib/cu130/minimal/flash_attn_3-...tar.gz", "sha256": ...}

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "util/expected.h"

namespace fabuild {

inline constexpr const char* kManifestName = "manifest.json";

struct FiledWheel {
  std::string wheel;     // the filed file, relative to the wheelhouse, "/"-separated: a wheel...
  bool library = false;  // ...or a library cell's archive (its key in the manifest is "library")
  std::string sha256;    // hex
  std::uint64_t size = 0;
  double build_seconds = 0;
  std::map<std::string, std::string> versions;  // free-form: nvcc, compiler, python, torch, ...
  std::string image;                            // the container image it was built in ("" on the host)...
  std::string image_id;                         // ...and that image's id (sha256:...), which names its exact content...
  std::string image_digest;                     // ...and its registry digest (repo@sha256:...) when it was pulled
  // Its compiles through the object cache: hits, misses, uncacheable, errors, stored_bytes,
  // hit_bytes (docs/performance.md); empty when the cache was off.
  std::map<std::string, std::uint64_t> object_cache;
  // The patch files applied to its source, by name as the matrix gives it -> their sha256; a
  // re-run with other patches builds it again.
  std::map<std::string, std::string> patches;
  // The C++ entry points its extension library exports -> their signatures (docs/cpp-consumers.md).
  std::map<std::string, std::string> exports;
  // What its ELF modules need of the system a user installs it on (wheel/elf_needs.h): "glibc"
  // -> "2.28" (the oldest glibc it loads on, manylinux_2_28), "glibcxx" -> "3.4.21" (libstdc++'s
  // GLIBCXX_ version). Empty: unknown (filed before fabuild recorded it) or none (win_amd64).
  std::map<std::string, std::string> needs;
  // The GPU code of its compiled modules, checked against its archs before filing: module ->
  // "sm_80, sm_90, PTX sm_90" (cuobjdump's listing). Empty: not read.
  std::map<std::string, std::string> gpu_code;
  // A stable-ABI wheel's window (docs/stable-abi.md): the oldest torch it loads on ("2.10", its
  // source's TORCH_TARGET_VERSION); "" for a wheel of one torch series.
  std::string stable_floor;
  // The torch releases it was loaded under (a stable-ABI wheel's sweep, `fabuild verify --torch`),
  // oldest first; a release it failed under ends its proven range there.
  struct TorchProof {
    std::string series;  // "2.13"
    std::string torch;   // as installed: "2.13.0+cu130"
    std::string cuda;    // its CUDA build, as torch.version.cuda says: "13.0"
    bool ok = false;
    std::string detail;  // what was checked, or the loader's message
    std::string gpu;     // the GPU check's result; "" = not run (no GPU there)
    bool operator==(const TorchProof&) const = default;
  };
  std::vector<TorchProof> torch_proofs;
  // The torch ops its module registers, with their schemas, under the torch it was built against:
  // what a later torch's check is held to.
  std::vector<std::string> torch_ops;
  // What made it (wheel/build_record.h): a JSON object's text with the cell, the source, the
  // fabuild version, the variables, the remote's writers and the CI run; "" for an entry filed
  // before fabuild recorded it.
  std::string build;

  bool operator==(const FiledWheel&) const = default;
};

// The torch series a wheel is proven for: its proofs that passed, oldest first, up to the first
// that failed (a later torch that loads it again does not make the range whole).
std::vector<std::string> proven_series(const FiledWheel& entry);

// `more` added to `proofs`, oldest series first; where both check one series, a failure stands
// over a pass (the same wheel under the same torch: the failure is the finding).
void merge_proofs(std::vector<FiledWheel::TorchProof>& proofs, const std::vector<FiledWheel::TorchProof>& more);

// Adds or replaces one cell's entry and keeps every other cell (and any key fabuild does not
// know), under a lock on the wheelhouse so that concurrent cells do not lose each other's
// entries; the file is replaced whole. A manifest that is not valid is a Failure naming it
// (with line and column for bad JSON) and is left untouched, never silently discarded; so is
// one that cannot be locked or written.
[[nodiscard]] Expected<void> record_filed(const std::filesystem::path& wheelhouse, const std::string& cell_id,
                                          const FiledWheel& entry);

// The cell's entry, or nullopt when the manifest or the entry does not exist. Throws
// UserError for a manifest that is not valid.
std::optional<FiledWheel> find_filed(const std::filesystem::path& wheelhouse, const std::string& cell_id);

enum class FiledState {
  kMissing,  // the wheel is not at the recorded path
  kIntact,   // it is there with the recorded size and sha256
  kChanged,  // it is there but different: rebuild (and never trust it)
};

// Reads the wheel in full to compare its digest.
FiledState check_filed(const std::filesystem::path& wheelhouse, const FiledWheel& entry);

// Every cell's entry, checked as find_filed checks one; empty when there is no manifest. A
// manifest that is not valid is a Failure naming it, with line and column for bad JSON.
[[nodiscard]] Expected<std::map<std::string, FiledWheel>> read_manifest(const std::filesystem::path& wheelhouse);
// The same where a manifest that cannot be used stops the command: throws the UserError (exit 1)
// that prints the Failure.
std::map<std::string, FiledWheel> manifest_entries(const std::filesystem::path& wheelhouse);

// How many times this process has parsed a manifest file (reads and read-modify-writes): a
// run reads its wheelhouse's once to find what is filed (tests hold it to that).
std::size_t manifest_parses();

// One cell's entry in another wheelhouse's manifest, to be copied as written there (with any
// key fabuild does not know).
struct FiledCopy {
  std::filesystem::path from;  // that wheelhouse
  std::string cell_id;
  std::string stale_sha256;  // the digest of the entry there it replaces, one whose wheel was gone
  // When set: the entry's torch proofs, gathered from every part that checked the wheel (CI's
  // verify jobs), in place of the one entry's own.
  std::optional<std::vector<FiledWheel::TorchProof>> proofs;
};

// Adds the entries to the manifest of `wheelhouse` in one replacement of the file, under its
// lock. An entry there for one of the cells with another wheel or digest is replaced only when
// it is the stale one named; otherwise it is a Failure and nothing is written: merging
// wheelhouses checks that beforehand, so it means the manifest changed meanwhile. Returns how
// many entries were new or different.
[[nodiscard]] Expected<std::size_t> copy_filed(const std::filesystem::path& wheelhouse,
                                               const std::vector<FiledCopy>& entries);

}  // namespace fabuild
