# Building fabuild with MSVC on Windows (CMakePresets.json preset windows-msvc, the libraries
# from vcpkg: vcpkg.json). Included from CMakeLists.txt when the compiler is MSVC, in place of
# the GNU parts that MSVC has no equivalent for:
# - warnings: /W4 (and /WX with FABUILD_WERROR) instead of -Wall -Wextra -Wpedantic;
# - the files fabuild carries (fabuild_embed): C++ arrays instead of the assembler's .incbin;
# - fabuild-cc.exe, the object cache's wrapper for nvcc, is built beside fabuild.exe instead of
#   inside it (MSVC has no .incbin, and a wrapper of a few hundred kilobytes is too big for
#   fabuild_embed's string literals): fabuild_cc_blob is an empty blob, and fabuild.exe installs
#   the fabuild-cc.exe of its own directory (src/app/cc_wrapper_win32.cpp, docs/windows.md).
# This file has not been run from this repository's CI yet (docs/windows.md says what has).

add_compile_options(/W4 /permissive- /utf-8 /EHsc /Zc:__cplusplus /Zc:preprocessor /bigobj)
add_compile_definitions(NOMINMAX WIN32_LEAN_AND_MEAN _CRT_SECURE_NO_WARNINGS)
if(FABUILD_WERROR)
  add_compile_options(/WX)
endif()
# vcpkg's x64-windows-static triplet: the static C runtime, so that fabuild.exe is one file.
set(CMAKE_MSVC_RUNTIME_LIBRARY "MultiThreaded$<$<CONFIG:Debug>:Debug>")

# <symbol>_start (the bytes) and <symbol>_size, as the GNU variant in CMakeLists.txt defines
# them, from a C++ file written at configure time (the files are configure dependencies).
# String literals of \xHH escapes: MSVC takes up to 64 KiB in one, which the Python programs
# fabuild carries are far below.
function(fabuild_embed target)
  set(cpp "// Written by cmake/msvc.cmake (fabuild_embed) from the files fabuild carries.\n#include <cstddef>\n")
  foreach(pair IN LISTS ARGN)
    string(REPLACE "=" ";" parts "${pair}")
    list(GET parts 0 symbol)
    list(GET parts 1 file)
    set(path ${CMAKE_CURRENT_SOURCE_DIR}/${file})
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${path})
    file(READ ${path} hex HEX)
    string(LENGTH "${hex}" digits)
    math(EXPR size "${digits} / 2")
    if(size GREATER 60000)
      message(FATAL_ERROR "${file}: ${size} bytes, more than one MSVC string literal holds")
    endif()
    string(REGEX REPLACE "([0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f])"
           "\\1\"\n\"" lines "${hex}")
    string(REGEX REPLACE "([0-9a-f][0-9a-f])" "\\\\x\\1" escaped "${lines}")
    string(APPEND cpp "extern \"C\" const char ${symbol}_start[] =\n\"${escaped}\";\n"
                      "extern \"C\" const std::size_t ${symbol}_size = ${size};\n")
  endforeach()
  file(CONFIGURE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/${target}.cpp CONTENT "${cpp}" @ONLY)
  add_library(${target} STATIC ${CMAKE_CURRENT_BINARY_DIR}/${target}.cpp)
endfunction()

# fabuild-cc.exe beside fabuild.exe, and an empty blob, its end at its start (the linker's
# /ALTERNATENAME gives fabuild_cc_blob_end the address of fabuild_cc_blob_start).
file(GLOB fabuild_cc_srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/objcache/*.cpp)
list(FILTER fabuild_cc_srcs EXCLUDE REGEX "_posix\\.cpp$")
add_executable(fabuild-cc ${fabuild_cc_srcs} src/util/hash.cpp src/util/hash_win32.cpp src/util/read_whole.cpp
               src/util/path_search_win32.cpp src/util/file.cpp src/util/file_win32.cpp src/util/dir_lock_win32.cpp
               src/util/processes_win32.cpp src/util/windows_api_win32.cpp src/util/windows_command_line.cpp
               src/util/text.cpp)
target_include_directories(fabuild-cc PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
target_link_libraries(fabuild-cc PRIVATE nlohmann_json::nlohmann_json fmt::fmt tl::expected bcrypt crypt32)
file(CONFIGURE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/fabuild_cc_blob.cpp CONTENT [[
// Written by cmake/msvc.cmake: an MSVC build of fabuild carries its compiler wrapper beside it.
extern "C" const unsigned char fabuild_cc_blob_start[1] = {0};
#pragma comment(linker, "/ALTERNATENAME:fabuild_cc_blob_end=fabuild_cc_blob_start")
]])
add_library(fabuild_cc_blob STATIC ${CMAKE_CURRENT_BINARY_DIR}/fabuild_cc_blob.cpp)
