# Cross-compiling for linux-arm64 (glibc) on a Debian machine of another
# architecture: Debian's crossbuild-essential-arm64 and the libraries'
# :arm64 packages (scripts/build-arm64.sh installs them and configures with
# this file). Programs are found on the build machine; libraries and CMake
# package files in the target's multiarch folders (/usr/lib/aarch64-linux-gnu).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
# Test executables run through qemu-user (ctest and CMake's own checks).
find_program(SPINRPC_QEMU_AARCH64 qemu-aarch64-static qemu-aarch64)
if(SPINRPC_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${SPINRPC_QEMU_AARCH64})
endif()
