#pragma once

#include <string>
#include <utility>
#include <vector>

#include "engine/budget.h"
#include "matrix/cell.h"
#include "util/environment.h"

namespace fabuild {

// The environment a cell's build gets on top of its toolchain's (CUDA_HOME, PATH): the
// package's build contract filled from the cell, then the matrix's env:, then its profile's
// switches (docs/packages.md). Not MAX_JOBS and NVCC_THREADS: the runner sets those from the
// share the scheduler grants when the cell starts (a plan shows the forecast beside).
// A win_amd64 cell gets DISTUTILS_USE_SDK=1 and no C++11 ABI variable.
EnvList cell_build_env(const Cell& cell);

// The package switches a cell's build turns off: its profile's, and FlashAttention 3's SM80
// when its archs leave 80 out.
std::vector<std::string> switches_off(const Cell& cell);

// The variables a cell inherits from fabuild's own environment, nothing else: the basics
// (PATH, HOME, USER, LOGNAME, SHELL, LANG, LC_*, TZ, TMPDIR, TERM), TLS trust (SSL_CERT_FILE,
// SSL_CERT_DIR, REQUESTS_CA_BUNDLE), pip's and uv's configuration (PIP_*, UV_*), the container engine's
// (DOCKER_*, CONTAINER_HOST, CONTAINERS_*, XDG_RUNTIME_DIR), and on Windows the system's
// (SystemRoot, windir, ComSpec, PATHEXT, TEMP, TMP, USERPROFILE, APPDATA, ProgramFiles, ...).
Environment inherited_env(const Environment& own);

}  // namespace fabuild
