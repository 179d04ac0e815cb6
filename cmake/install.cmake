# What `cmake --install` puts under the prefix (docs/INSTALL.md):
#   include/spinrpc/<folder>/*.h      every library's headers, folders as in the tree
#   lib/libspinrpc_*.a                the libraries: static, position-independent
#   bin/spinrpc-server                the server
#   bin/spinrpc-trace-merge           merges the trace files of a client and its servers (node)
#   bin/spinrpc-server-async          what a static spinrpc-server runs for
#                                     --async (SPINRPC_STATIC_SERVER; it
#                                     looks beside itself, so both go to bin)
#   lib/cmake/spinrpc/                spinrpcConfig.cmake and the imported targets
# Imported targets: spinrpc::<name> for each library below (the same names
# are aliases in this build) and spinrpc::spinrpc-server; spinrpcConfig.cmake
# finds the libraries' dependencies again.
include(CMakePackageConfigHelpers)

# library target -> the name users see after spinrpc::
set(spinrpc_exported
  spinrpc_protocol protocol
  spinrpc_trace trace
  spinrpc_dialect dialect
  spinrpc_descriptor descriptor
  spinrpc_stream stream
  spinrpc_wait wait
  spinrpc_settings settings
  spinrpc_channel channel
  spinrpc_transport transport
  spinrpc_server server
  spinrpc_server_main server_main
  spinrpc_client_shim client)
set(spinrpc_install_targets)
while(spinrpc_exported)
  list(POP_FRONT spinrpc_exported target name)
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  add_library(spinrpc::${name} ALIAS ${target})
  list(APPEND spinrpc_install_targets ${target})
endwhile()

install(TARGETS ${spinrpc_install_targets} spinrpc-server
  EXPORT spinrpcTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET spinrpc-server-async)
  install(TARGETS spinrpc-server-async RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

foreach(folder protocol trace dialect descriptor stream wait settings channel transport server app client-shim)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${folder}/
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/spinrpc/${folder}
    FILES_MATCHING PATTERN "*.h")
endforeach()

set(spinrpc_config_dir ${CMAKE_INSTALL_LIBDIR}/cmake/spinrpc)
install(EXPORT spinrpcTargets NAMESPACE spinrpc:: DESTINATION ${spinrpc_config_dir})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/spinrpcConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/spinrpcConfig.cmake
  INSTALL_DESTINATION ${spinrpc_config_dir})
# 0.x: a new minor version may change the API.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/spinrpcConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/spinrpcConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/spinrpcConfigVersion.cmake
  DESTINATION ${spinrpc_config_dir})

# The trace merger (docs/TRACE.md): one implementation, in JavaScript, shared
# with the npm package; it needs node on the PATH.
install(PROGRAMS ${PROJECT_SOURCE_DIR}/node/trace-merge.mjs
  DESTINATION ${CMAKE_INSTALL_BINDIR} RENAME spinrpc-trace-merge)
