# cmake -P: install BUILD_DIR into WORK_DIR/prefix, build the consumer
# project against that prefix only, run it, and check --async from the
# prefix (tests/app/async_checks.cmake). Each step's failure fails the
# test with the step's own output.
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "install_consumer: `${ARGN}` failed (${status}):\n${out}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

step(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
# The installed spinrpc-server starts, and where it is a static PIE (no
# NEEDED library) it carries no RUNPATH or RPATH: glibc's static-PIE
# start-up aborts before main on one (app/CMakeLists.txt).
step(${prefix}/bin/spinrpc-server --version)
find_program(READELF readelf)
if(READELF)
  step(${READELF} -d ${prefix}/bin/spinrpc-server)
  if(NOT step_output MATCHES "\\(NEEDED\\)" AND step_output MATCHES "\\((RUNPATH|RPATH)\\)")
    message(FATAL_ERROR "install consumer: the static spinrpc-server carries a search path:\n${step_output}")
  endif()
endif()
# The prefix alone: no package registry, no system-wide spinrpc.
step(${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${WORK_DIR}/build -G ${GENERATOR}
     -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
     -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF -DCMAKE_BUILD_TYPE=${BUILD_TYPE}
     -DCMAKE_CXX_COMPILER=${CXX} "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
     "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}"
     "-DCMAKE_TOOLCHAIN_FILE=${TOOLCHAIN_FILE}" "-Dsimdjson_DIR=${simdjson_DIR}")
step(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
step(${WORK_DIR}/build/consumer)
message(STATUS "${step_output}")

# --async from the prefix: the installed spinrpc-server (through
# spinrpc-server-async beside it when it is static), and an embedder of
# run_server_main, which serves it in-process.
set(ASYNC_CHECKS_DIR ${WORK_DIR}/async)
file(MAKE_DIRECTORY ${ASYNC_CHECKS_DIR})
include(${CMAKE_CURRENT_LIST_DIR}/../app/async_checks.cmake)
check_async_echo(${prefix}/bin/spinrpc-server)
check_async_echo(${WORK_DIR}/build/file-length-server)
message(STATUS "install consumer: --async ok")

# The trace merger goes to bin with the server (docs/TRACE.md), executable.
if(NOT EXISTS ${prefix}/bin/spinrpc-trace-merge OR IS_DIRECTORY ${prefix}/bin/spinrpc-trace-merge)
  message(FATAL_ERROR "install consumer: ${prefix}/bin/spinrpc-trace-merge is not installed")
endif()
file(READ ${prefix}/bin/spinrpc-trace-merge merge_head LIMIT 20)
if(NOT merge_head MATCHES "^#!/usr/bin/env node")
  message(FATAL_ERROR "install consumer: spinrpc-trace-merge does not start with its node shebang")
endif()
message(STATUS "install consumer: spinrpc-trace-merge ok")
