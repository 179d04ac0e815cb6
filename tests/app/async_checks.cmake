# What `spinrpc-server --async` must do however it is built, as cmake -P
# helpers: tests/app/async_sibling.cmake (the build tree) and
# tests/install/install_and_consume.cmake (an installed prefix) include
# this, with ASYNC_CHECKS_DIR set to a scratch folder. A static
# spinrpc-server runs spinrpc-server-async from its own folder for --async
# (app/async_sibling.h); a dynamic one, and any embedder of
# run_server_main, serves it in-process.

# Runs `server args...` with `input` on stdin. Sets in the caller
# <out>_status, <out>_stdout and <out>_stderr as hex (CMake's text reads
# drop \r, which Content-Length framing needs) and <out>_said, both
# streams as text for messages. The timeout is a hang guard only.
function(async_run out server input)
  string(MD5 name "${server};${ARGN};${input}")
  set(base ${ASYNC_CHECKS_DIR}/${name})
  file(WRITE ${base}.in "${input}")
  execute_process(COMMAND ${server} ${ARGN} INPUT_FILE ${base}.in TIMEOUT 20
                  RESULT_VARIABLE status OUTPUT_FILE ${base}.out ERROR_FILE ${base}.err)
  file(READ ${base}.out stdout HEX)
  file(READ ${base}.err stderr HEX)
  file(READ ${base}.out stdout_text)
  file(READ ${base}.err stderr_text)
  set(${out}_status "${status}" PARENT_SCOPE)
  set(${out}_stdout "${stdout}" PARENT_SCOPE)
  set(${out}_stderr "${stderr}" PARENT_SCOPE)
  string(JOIN " " command ${server} ${ARGN})
  set(${out}_said "`${command}`: exit ${status}, stdout [${stdout_text}], stderr [${stderr_text}]" PARENT_SCOPE)
endfunction()

# One JSON-RPC body with its Content-Length header (docs/ASYNC.md).
function(async_message out body)
  string(LENGTH "${body}" length)
  set(${out} "Content-Length: ${length}\r\n\r\n${body}" PARENT_SCOPE)
endfunction()

# `server --api --async` echoes through JSON-RPC and exits 0 on EOF.
function(check_async_echo server)
  async_message(request [[{"jsonrpc":"2.0","id":1,"method":"echo","params":"through --async"}]])
  async_run(r ${server} "${request}" --api --async)
  async_message(expected [[{"jsonrpc":"2.0","id":1,"result":"through --async"}]])
  string(HEX "${expected}" expected_hex)
  if(NOT r_status STREQUAL "0" OR NOT r_stdout STREQUAL expected_hex OR NOT r_stderr STREQUAL "")
    message(FATAL_ERROR "${r_said}; expected exit 0 and [${expected}] alone")
  endif()
endfunction()

# `a` and `b` answer `args...` with `input` on stdin with the same bytes
# on stdout and stderr and the same exit status.
function(check_same_answer a b what input)
  async_run(x ${a} "${input}" ${ARGN})
  async_run(y ${b} "${input}" ${ARGN})
  if(what STREQUAL "stats")
    # The counters differ run to run; the line is there on both.
    if(NOT x_said MATCHES "channel stats" OR NOT y_said MATCHES "channel stats")
      message(FATAL_ERROR "--stats: no channel stats line:\n${x_said}\n${y_said}")
    endif()
    set(x_stderr "")
    set(y_stderr "")
  endif()
  if(NOT x_status STREQUAL y_status OR NOT x_stdout STREQUAL y_stdout OR NOT x_stderr STREQUAL y_stderr)
    message(FATAL_ERROR "${what}: the two differ:\n${x_said}\n${y_said}")
  endif()
endfunction()

# check_same_answer for --async cases that end well, badly and early.
function(check_same_answers a b)
  async_message(echo [[{"jsonrpc":"2.0","id":7,"method":"echo","params":{"a":[1,2]}}]])
  async_message(bad_json [[{"jsonrpc":"2.0","id":8,"method":"echo","params":[1,}]])
  check_same_answer(${a} ${b} "echo" "${echo}" --api --async)
  check_same_answer(${a} ${b} "bad JSON" "${bad_json}" --api --async)
  check_same_answer(${a} ${b} "cut short" "Content-Length: 40\r\n\r\n{\"jsonrpc\"" --api --async)
  check_same_answer(${a} ${b} "usage error" "" --api --async --no-such-flag)
  check_same_answer(${a} ${b} "help" "" --async --help)
  check_same_answer(${a} ${b} "version" "" --async --version)
  check_same_answer(${a} ${b} "stats" "${echo}" --api --async --stats --spin-us=0)
endfunction()
