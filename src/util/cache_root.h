#pragma once

// Where fabuild keeps what it makes once per machine (Python environments, toolkits, sources
// and downloads, the object cache, the Visual Studio capture): $FABUILD_CACHE_DIR, else
// $XDG_CACHE_HOME/fabuild (Windows: %LOCALAPPDATA%\fabuild unless XDG_CACHE_HOME is set), else
// $HOME/.cache/fabuild. A relative XDG_CACHE_HOME is ignored, as the XDG spec says; an empty
// value counts as unset. cli's System asks it once, from the environment it read.

#include <filesystem>

#include "util/environment.h"

namespace fabuild {

// Throws UserError (exit 2) when none is set.
std::filesystem::path fabuild_cache_root(const Environment& env);

}  // namespace fabuild
