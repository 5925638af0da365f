#pragma once

// fabuild's exit codes (docs/cli.md). 2 and 3 follow cibuildwheel; 130/143 follow the shell
// convention for death by SIGINT/SIGTERM, as ninja does.
namespace fabuild {

enum ExitCode : int {
  kExitOk = 0,
  kExitCellFailed = 1,
  kExitBadConfig = 2,
  kExitNoCellSelected = 3,
  kExitWheelhouseBusy = 4,  // another run holds the wheelhouse's lock (wheel/wheelhouse_lock.h)
  kExitInterrupted = 130,
  kExitTerminated = 143,
};

}  // namespace fabuild
