#pragma once

// How a process step of a cell becomes the process to start: its argv with placeholders filled
// in, the cell's environment with MAX_JOBS and NVCC_THREADS from the granted share, where it
// runs, its time limit. The runner's, apart so that it reads as the loop it is.

#include <chrono>
#include <string>
#include <vector>

#include "engine/runner.h"
#include "util/environment.h"
#include "util/files.h"
#include "util/process.h"

namespace fabuild {

// `jobs`: the cell's granted MAX_JOBS. `machine_cores`: the CPUs this machine gives fabuild
// (RunSettings::machine_cores; 0: unknown, no cap). `time_left`: of the cell's timeout (ignored
// without one). `extra`: variables set last (a step started early gets FABUILD_GO).
ProcessSpec step_process(const CellRun& cell, const Step& step, int jobs, const Environment& base_env,
                         int machine_cores, std::chrono::milliseconds time_left, const EnvList& extra = {});

// The cell log's line for a process started ("fabuild: step build: [python] [setup.py] ..."),
// with a program given whole (`python -c` of a script fabuild carries) as "<a program of N
// lines>"; and the line saying what a step took. Written through `files`; a log that cannot be
// written loses the line, never the build.
void log_step_start(Files& files, const std::string& log_path, const std::string& what,
                    const std::vector<std::string>& argv);
void log_step_time(Files& files, const std::string& log_path, const std::string& step, std::chrono::milliseconds took);

// The file whose existence tells a step started early (Step::starts_with) that its turn has
// come: in the cell's staging directory, which a container cell sees at the same path.
std::string go_file(const CellRun& cell, const Step& step);

}  // namespace fabuild
