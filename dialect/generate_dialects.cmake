# Turns the table of API dialects (node/dialects.json) into the C++ table
# dialect/api_dialect.cpp serves: one ApiDialect initializer per dialect,
# oldest first, which api_dialect.cpp includes inside its array. Run by the build (dialect/CMakeLists.txt) whenever the JSON
# or this script changes:
#
#   cmake -DINPUT=node/dialects.json -DOUTPUT=<build>/generated/dialect/dialects.inc -P generate_dialects.cmake
#
# Enumerated values are written as the enumerators of the same name, so a
# value the C++ does not know fails the compile of api_dialect.cpp. Strings
# are joined with string(APPEND), never as CMake lists, so a ";" in one
# stays a character.
cmake_minimum_required(VERSION 3.19)  # string(JSON)

if(NOT INPUT OR NOT OUTPUT)
  message(FATAL_ERROR "generate_dialects.cmake: give -DINPUT=<dialects.json> -DOUTPUT=<dialects.inc>")
endif()
file(READ "${INPUT}" json)

# A C++ string literal of `value`.
function(cxx_string out value)
  string(REPLACE "\\" "\\\\" value "${value}")
  string(REPLACE "\"" "\\\"" value "${value}")
  set(${out} "\"${value}\"" PARENT_SCOPE)
endfunction()

# `{"a", "b"}` from the JSON array of strings at dialect `i`'s `member`.
function(cxx_strings out i member)
  string(JSON count LENGTH "${json}" dialects ${i} ${member})
  set(items "")
  if(count GREATER 0)
    math(EXPR last "${count} - 1")
    foreach(k RANGE ${last})
      string(JSON item GET "${json}" dialects ${i} ${member} ${k})
      cxx_string(literal "${item}")
      if(k GREATER 0)
        string(APPEND items ", ")
      endif()
      string(APPEND items "${literal}")
    endforeach()
  endif()
  set(${out} "{${items}}" PARENT_SCOPE)
endfunction()

# `{{"name", "help"}, …}` from dialect `i`'s flags.
function(cxx_flags out i)
  string(JSON count LENGTH "${json}" dialects ${i} flags)
  set(items "")
  if(count GREATER 0)
    math(EXPR last "${count} - 1")
    foreach(k RANGE ${last})
      string(JSON name GET "${json}" dialects ${i} flags ${k} name)
      string(JSON help GET "${json}" dialects ${i} flags ${k} help)
      cxx_string(name "${name}")
      cxx_string(help "${help}")
      if(k GREATER 0)
        string(APPEND items ", ")
      endif()
      string(APPEND items "{${name}, ${help}}")
    endforeach()
  endif()
  set(${out} "{${items}}" PARENT_SCOPE)
endfunction()

# true/false from a JSON boolean.
function(cxx_bool out i member)
  string(JSON value GET "${json}" dialects ${i} ${member})
  if(value)
    set(${out} true PARENT_SCOPE)
  else()
    set(${out} false PARENT_SCOPE)
  endif()
endfunction()

# The checked releases as --version names them: "typescript 7.1.0-beta,
# 7.1.0-dev.20261105.1" (a package's name once for a run of its releases).
function(releases_text out i)
  string(JSON count LENGTH "${json}" dialects ${i} checked)
  if(count EQUAL 0)
    set(${out} "no release checked" PARENT_SCOPE)
    return()
  endif()
  math(EXPR last "${count} - 1")
  set(text "")
  set(previous "")
  foreach(k RANGE ${last})
    string(JSON package GET "${json}" dialects ${i} checked ${k} package)
    string(JSON version GET "${json}" dialects ${i} checked ${k} version)
    if(k GREATER 0)
      string(APPEND text ", ")
    endif()
    if(package STREQUAL previous)
      string(APPEND text "${version}")
    else()
      string(APPEND text "${package} ${version}")
    endif()
    set(previous "${package}")
  endforeach()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

string(JSON dialect_count LENGTH "${json}" dialects)
math(EXPR last_dialect "${dialect_count} - 1")
set(body "")
foreach(i RANGE ${last_dialect})
  string(JSON name GET "${json}" dialects ${i} name)
  cxx_string(name "${name}")
  releases_text(releases ${i})
  cxx_string(releases "${releases}")
  string(JSON prefix GET "${json}" dialects ${i} transport_error_prefix)
  cxx_string(prefix "${prefix}")
  string(JSON initialize GET "${json}" dialects ${i} initialize)
  string(JSON case_rule GET "${json}" dialects ${i} case_rule)
  string(JSON pipe GET "${json}" dialects ${i} pipe)
  string(JSON unicode GET "${json}" dialects ${i} unicode)
  cxx_bool(normalizes_cwd ${i} normalizes_cwd)
  cxx_bool(batch_requests ${i} batch_requests)
  cxx_strings(callback_items ${i} callback_items)
  cxx_flags(flags ${i})
  string(APPEND body
    "    {\n"
    "        .version = ApiVersion{${i}},\n"
    "        .name = ${name},\n"
    "        .typescript_releases = ${releases},\n"
    "        .transport_error_prefix = ${prefix},\n"
    "        .initialize = InitializeShape::${initialize},\n"
    "        .case_rule = CaseRule::${case_rule},\n"
    "        .pipe = PipeLayout::${pipe},\n"
    "        .unicode = GoUnicodeVersion::unicode_${unicode},\n"
    "        .normalizes_cwd = ${normalizes_cwd},\n"
    "        .batch_requests = ${batch_requests},\n"
    "        .callback_items = ${callback_items},\n"
    "        .flags = ${flags},\n"
    "    },\n")
endforeach()

string(CONCAT text "// Generated from node/dialects.json by dialect/generate_dialects.cmake: edit those, not this.\n"
  "// The initializers of api_dialect.cpp's table of ApiDialect, oldest first.\n${body}")
# Written only when it changes, so that an unrelated edit of the JSON's
# notes recompiles nothing.
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUTPUT}" "${text}")
endif()
