# Cross-compiling fabuild for Windows x86_64 with Debian's mingw-w64 (posix thread model:
# std::thread and std::mutex as the rest of fabuild uses them). The libraries come from
# scripts/mingw-deps.sh; pass its prefix as -DFABUILD_MINGW_PREFIX=... (scripts/windows-test.sh
# does). Binaries are linked statically, so that they run under Wine or on Windows with no
# DLLs beside them.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(triple x86_64-w64-mingw32)
set(CMAKE_C_COMPILER ${triple}-gcc-posix)
set(CMAKE_CXX_COMPILER ${triple}-g++-posix)
set(CMAKE_RC_COMPILER ${triple}-windres)
set(CMAKE_AR ${triple}-gcc-ar-posix CACHE FILEPATH "")
set(CMAKE_RANLIB ${triple}-gcc-ranlib-posix CACHE FILEPATH "")

# Passed on to the compiler checks that CMake runs in projects of their own.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES FABUILD_MINGW_PREFIX)
set(CMAKE_FIND_ROOT_PATH /usr/${triple} ${FABUILD_MINGW_PREFIX})
set(CMAKE_PREFIX_PATH ${FABUILD_MINGW_PREFIX})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

set(CMAKE_EXE_LINKER_FLAGS_INIT "-static -static-libgcc -static-libstdc++")