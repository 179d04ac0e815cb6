# cmake -P: spinrpc-server --async from the build tree (tests/app/CMakeLists.txt).
#   BIN_DIR   build/bin
#   WORK_DIR  a scratch folder, emptied first
# With a sibling (SPINRPC_STATIC_SERVER): --async works through it, gives
# the same bytes and statuses as the sibling run directly, and a
# spinrpc-server copied away from its sibling says so in one line, exit 1,
# at once. Without one: --async is served in-process, wherever the
# executable is.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/alone)
set(ASYNC_CHECKS_DIR ${WORK_DIR})
include(${CMAKE_CURRENT_LIST_DIR}/async_checks.cmake)

set(server ${BIN_DIR}/spinrpc-server)
check_async_echo(${server})
file(COPY ${server} DESTINATION ${WORK_DIR}/alone)
set(alone ${WORK_DIR}/alone/spinrpc-server)

if(EXISTS ${BIN_DIR}/spinrpc-server-async)
  check_same_answers(${server} ${BIN_DIR}/spinrpc-server-async)
  async_message(request [[{"jsonrpc":"2.0","id":1,"method":"echo","params":"x"}]])
  async_run(r ${alone} "${request}" --api --async)
  set(expected "spinrpc-server: --async is served by ${WORK_DIR}/alone/spinrpc-server-async, which cannot be run: No such file or directory\n")
  string(HEX "${expected}" expected_hex)
  if(NOT r_status STREQUAL "1" OR NOT r_stdout STREQUAL "" OR NOT r_stderr STREQUAL expected_hex)
    message(FATAL_ERROR "without its sibling: ${r_said}; expected exit 1 and [${expected}]")
  endif()
  # A "sibling" that is spinrpc-server itself (a symlink to it) is refused,
  # not exec'd forever.
  file(CREATE_LINK ${alone} ${WORK_DIR}/alone/spinrpc-server-async SYMBOLIC)
  async_run(l ${alone} "${request}" --api --async)
  set(expected "spinrpc-server: --async is served by ${WORK_DIR}/alone/spinrpc-server-async, which is this executable itself: install spinrpc-server-async there\n")
  string(HEX "${expected}" expected_hex)
  if(NOT l_status STREQUAL "1" OR NOT l_stdout STREQUAL "" OR NOT l_stderr STREQUAL expected_hex)
    message(FATAL_ERROR "with itself as its sibling: ${l_said}; expected exit 1 and [${expected}]")
  endif()
  file(REMOVE ${WORK_DIR}/alone/spinrpc-server-async)
  # Without --async it needs nothing beside it.
  async_run(v ${alone} "" --version)
  if(NOT v_status STREQUAL "0" OR NOT v_said MATCHES "stdout \\[spinrpc-server ")
    message(FATAL_ERROR "without its sibling: ${v_said}")
  endif()
else()
  check_async_echo(${alone})
endif()
