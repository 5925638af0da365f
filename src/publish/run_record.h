#pragma once

// The record of a build run, kept as report.json at the wheelhouse root: every cell of the run
// (its outcome, when it started and how long it took, its MAX_JOBS and NVCC_THREADS, what it
// was built on, its wheel or its log), the work before the cells, and the last record of each
// cell an earlier run settled that this one did not select. The page, summary.md and
// `fabuild index` are made from it, so they can be made again at any time.

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "wheel/manifest.h"

namespace fabuild {

inline constexpr const char* kReportName = "report.json";

struct CellRecord {
  std::string id;
  std::string status;             // "ok", "up to date", "failed", "timeout", "cancelled", "not run"
  std::string detail;             // what happened when it did not succeed: "build: exit 1"
  std::optional<double> start_s;  // seconds from the start of the run; absent when it did not start
  double duration_s = 0;
  int max_jobs = 0;
  int nvcc_threads = 0;
  double memory_gb = 0;  // its share of the memory budget while it held it
  // How long it held that share: until its compile ended, when it gave it back; absent: all its
  // duration_s.
  std::optional<double> held_s;
  // A CI job's setup, from its start (FABUILD_JOB_STARTED) to its first compile: on the first cell
  // of each row the job built; absent outside CI.
  std::optional<double> job_setup_s;
  std::string toolchain;                        // what it was built on: a container image, or the host's toolkit
  std::map<std::string, std::string> versions;  // nvcc, compiler, python, torch, as filed
  std::map<std::string, std::string> needs;     // glibc, glibcxx: what its wheel needs of the system, as filed
  std::map<std::string, std::string> gpu_code;  // module -> its SASS and PTX archs, as filed
  std::string wheel;                            // relative to the wheelhouse; "" when none is filed...
  bool library = false;                         // ...or a library cell's archive ("library" in report.json)
  std::string sha256;                           // hex
  std::uint64_t size = 0;
  // Its build record beside it, relative to the wheelhouse ("<wheel>.build.json",
  // wheel/build_record.h), as published; "" when it has none.
  std::string build_record;
  std::string log;       // relative to the wheelhouse: "logs/<id>.log"; "" when none
  std::string dir;       // "fa2.8.3/torch2.8/cu128": where its wheel is filed
  std::string python;    // "cp312"
  std::string platform;  // "linux_x86_64"
  std::string run;       // of an earlier cell: when the run that settled it started
  // A stable-ABI wheel's window floor and the torch releases its wheel was checked under, as
  // filed (docs/stable-abi.md); `checked` lists those this run checked a filed wheel under,
  // without compiling it.
  std::string stable_floor;
  std::vector<FiledWheel::TorchProof> torch_proofs;
  std::vector<std::string> checked;

  [[nodiscard]] bool built() const { return status == "ok" || status == "up to date"; }
  [[nodiscard]] bool failed() const { return status == "failed" || status == "timeout"; }
};

struct RunRecord {
  std::string started;  // UTC, ISO 8601: "2025-11-22T03:04:05Z"
  std::string matrix;   // the matrix file
  double elapsed_s = 0;
  double budget_cores = 0;
  double budget_memory_gb = 0;
  int exit_code = 0;
  std::vector<CellRecord> cells;        // every cell of this run, in plan order
  std::vector<CellRecord> preparation;  // work before the cells (Python environments)
  std::vector<CellRecord> earlier;      // cells of earlier runs that this one did not select
  // The torch releases the index had when the plan was made (docs/stable-abi.md), with those
  // earlier runs saw that it no longer lists; empty when the index was not asked.
  struct TorchSeen {
    std::string version;     // "2.13.0"
    std::string cuda;        // its CUDA build: "13.0"
    std::string first_seen;  // when the run that first saw it started
    bool listed = true;      // false: withdrawn from the index since
  };
  std::string torch_index;
  std::vector<TorchSeen> torch_releases;
  std::vector<std::string> new_torch;  // releases this run saw first, when an earlier run had looked
  // The remote object cache of the run (docs/security.md): whether it wrote, why, which row
  // indexes it believed, and what it sent, kept local (read-only) and refused.
  struct RemoteUse {
    std::string url;
    bool write = true;
    std::string why;    // "read-only: untrusted, a pull_request run on GitHub Actions ..."
    std::string trust;  // "only indexes signed by key ... are used", or that none are signed
    std::uint64_t sent = 0, kept = 0, indexes_refused = 0;
    bool dropped = false;  // given up for the rest of the run after repeated failures
  };
  std::optional<RemoteUse> remote;
};

std::string report_json(const RunRecord& run);
// Parses report.json; a Failure naming `file` (with line and column for bad JSON).
[[nodiscard]] Expected<RunRecord> parse_report(const std::string& text, const std::filesystem::path& file);
// wheelhouse/report.json, or nullopt when there is none.
[[nodiscard]] Expected<std::optional<RunRecord>> read_report(const std::filesystem::path& wheelhouse);

// `run` with `earlier` filled from the previous record: each cell it knew of that `run` does
// not have keeps its last record (and when that was).
RunRecord with_earlier(RunRecord run, const std::optional<RunRecord>& previous);

// `run`'s torch releases with the previous record's history: each release keeps when it was first
// seen, one the index no longer lists stays (listed: false), and new_torch says what is new
// since a run that looked too.
RunRecord with_torch_history(RunRecord run, const std::optional<RunRecord>& previous);

// "2025-11-22T03:04:05Z" for now.
std::string utc_now_iso8601();

}  // namespace fabuild
