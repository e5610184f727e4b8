# sluice_link_probe(target): links every object of the room library `target` (whole archive)
# with only the libraries the room declares, into a small executable built with the rest of the
# tree. A room that calls into a room above it (against the layering in docs/architecture.md)
# leaves undefined symbols, and the build fails here instead of linking by luck in the final
# binary. tools/check_layering.py checks the includes the same way.
function(sluice_link_probe target)
  set(probe ${target}_link_probe)
  add_executable(${probe} ${PROJECT_SOURCE_DIR}/cmake/link_probe_main.cc)
  target_link_libraries(${probe} PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,${target}>")
  set_target_properties(${probe} PROPERTIES RUNTIME_OUTPUT_DIRECTORY
                        ${PROJECT_BINARY_DIR}/link_probes)
endfunction()
