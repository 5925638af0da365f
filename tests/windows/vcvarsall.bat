@echo off
rem A stand-in for Visual Studio's VC\Auxiliary\Build\vcvarsall.bat, for fabuild's Windows tests
rem under Wine, where no Visual Studio is installed. It takes the arguments the real one takes
rem (an architecture, then -vcvars_ver=VERSION), prints a banner as the real one does, and sets
rem what a build reads of the developer environment: INCLUDE, LIB and LIBPATH (new), PATH (the
rem compiler's and the SDK's directories in front of the caller's), VSINSTALLDIR,
rem VCToolsInstallDir, VCToolsVersion, WindowsSdkDir, VSCMD_VER, VSCMD_ARG_TGT_ARCH, Platform.
rem Anything it does not know ends it as the real one ends: an [ERROR:...] line and exit code 1.
rem
rem How the lead wires it, once fabuild.exe exists (scripts/windows-test.sh):
rem   1. copy this file to a directory of the Wine prefix, e.g. C:\fakevs\VC\Auxiliary\Build\;
rem   2. name it in the matrix's toolchains\host.yaml, which skips vswhere:
rem        msvc: {vcvarsall: 'C:\fakevs\VC\Auxiliary\Build\vcvarsall.bat'}
rem      (or put a vswhere.exe stand-in that prints C:\fakevs under
rem      %ProgramFiles(x86)%\Microsoft Visual Studio\Installer\);
rem   3. run `wine fabuild.exe matrix\windows.yaml --dry-run -v` with FABUILD_CACHE_DIR set to a
rem      scratch directory: the plan prints "msvc: CUDA 12.8: C:\fakevs\...\vcvarsall.bat x64,
rem      VS 17.99.0, tools 14.99.12345 (captured now)" and, under -v, "+ INCLUDE=..." and
rem      "~ PATH: 2 entries in front: ...";
rem   4. run it again: the capture now comes from the cache ("cached in ...\msvc\vcvars-....json");
rem   5. `msvc: {vcvarsall: ..., toolset: "14.0"}` makes this file fail: the plan then says
rem      "capturing the MSVC environment failed: ... exit 1 ... Toolset directory for version
rem      '14.0' was not found" (toolset "14.99" is the one it accepts).
rem fabuild runs it as `cmd.exe /d /u /c %FABUILD_VCVARS_BAT%`, a batch file of its own that does
rem   @call "%FABUILD_VCVARSALL%" %FABUILD_VCVARS_ARGS%&& set > "%FABUILD_VCVARS_OUT%"
rem (provision/msvc_env.h says why the paths travel in variables). That protocol was run by hand
rem against this file under Wine 8's cmd.exe, from paths with spaces, parentheses and an accent.

rem cmd splits %1 %2 ... at '=' too: the arguments are read from %* by spaces, as the real file does.
set "__fake_arch="
set "__fake_ver="
for /f "tokens=1,2" %%a in ("%*") do (
  set "__fake_arch=%%a"
  set "__fake_ver=%%b"
)
if /i not "%__fake_arch%"=="x64" goto :bad_arch
if "%__fake_ver%"=="" goto :start
if /i "%__fake_ver%"=="-vcvars_ver=14.99" goto :start
for /f "tokens=2 delims==" %%v in ("%__fake_ver%") do echo [ERROR:vcvars.bat] Toolset directory for version '%%v' was not found.
echo [ERROR:VsDevCmd.bat] *** VsDevCmd.bat encountered errors. Environment may be incomplete and/or incorrect. ***
set "__fake_arch="
set "__fake_ver="
exit /b 1

:bad_arch
echo [ERROR:vcvarsall.bat] Invalid argument found : %__fake_arch%
echo [ERROR:vcvarsall.bat] Error in script usage. The correct usage is: vcvarsall.bat x64 [-vcvars_ver=VERSION]
set "__fake_arch="
set "__fake_ver="
exit /b 1

:start
set "__fake_arch="
set "__fake_ver="

echo **********************************************************************
echo ** Visual Studio 2022 Developer Command Prompt v17.99.0 (fabuild's stand-in)
echo ** Copyright (c) 2022 Microsoft Corporation
echo **********************************************************************
echo [vcvarsall.bat] Environment initialized for: 'x64'

set "VSINSTALLDIR=C:\fakevs\"
set "VCINSTALLDIR=C:\fakevs\VC\"
set "VCToolsVersion=14.99.12345"
set "VCToolsInstallDir=C:\fakevs\VC\Tools\MSVC\14.99.12345\"
set "WindowsSdkDir=C:\fakevs\Windows Kits\10\"
set "WindowsSDKVersion=10.0.99999.0\"
set "VSCMD_VER=17.99.0"
set "VSCMD_ARG_TGT_ARCH=x64"
set "VSCMD_ARG_HOST_ARCH=x64"
set "Platform=x64"
set "INCLUDE=C:\fakevs\VC\Tools\MSVC\14.99.12345\include;C:\fakevs\Windows Kits\10\include\10.0.99999.0\ucrt;%INCLUDE%"
set "LIB=C:\fakevs\VC\Tools\MSVC\14.99.12345\lib\x64;C:\fakevs\Windows Kits\10\lib\10.0.99999.0\ucrt\x64;%LIB%"
set "LIBPATH=C:\fakevs\VC\Tools\MSVC\14.99.12345\lib\x64;%LIBPATH%"
set "PATH=C:\fakevs\VC\Tools\MSVC\14.99.12345\bin\HostX64\x64;C:\fakevs\Windows Kits\10\bin\10.0.99999.0\x64;%PATH%"
exit /b 0
