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
  # `alone` asked for --async: exit 1, nothing on stdout, exactly one line
  # "spinrpc-server: --async is served by <sibling>, <why>" on stderr.
  function(expect_refused what why)
    async_run(r ${alone} "${request}" --api --async)
    set(expected "spinrpc-server: --async is served by ${WORK_DIR}/alone/spinrpc-server-async, ${why}\n")
    string(HEX "${expected}" expected_hex)
    if(NOT r_status STREQUAL "1" OR NOT r_stdout STREQUAL "" OR NOT r_stderr STREQUAL expected_hex)
      message(FATAL_ERROR "${what}: ${r_said}; expected exit 1 and [${expected}]")
    endif()
  endfunction()
  expect_refused("without its sibling" "which cannot be run: No such file or directory")
  # A "sibling" that is spinrpc-server itself (a symlink to it) is refused,
  # not exec'd forever.
  file(CREATE_LINK ${alone} ${WORK_DIR}/alone/spinrpc-server-async SYMBOLIC)
  expect_refused("with itself as its sibling" "which is this executable itself: install spinrpc-server-async there")
  file(REMOVE ${WORK_DIR}/alone/spinrpc-server-async)
  # Without --async it needs nothing beside it.
  async_run(v ${alone} "" --version)
  if(NOT v_status STREQUAL "0" OR NOT v_said MATCHES "stdout \\[spinrpc-server ")
    message(FATAL_ERROR "without its sibling: ${v_said}")
  endif()
else()
  check_async_echo(${alone})
endif()
