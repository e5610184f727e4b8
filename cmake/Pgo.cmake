# Profile-guided optimisation (GCC), driven by tools/setup.sh (docs/engine.md, "The profile-guided
# build"). Two cache variables, at most one of them set:
#   SLUICE_PGO_GENERATE=DIR  every object is instrumented; a program that exits normally writes
#                            its counts as .gcda files under DIR (tools/pgo-train.sh runs the
#                            server through a training workload).
#   SLUICE_PGO_USE=DIR       every object is compiled with DIR's counts: hot paths laid out
#                            together and cold ones moved aside, which is what the server's
#                            instruction cache needs (a BullMQ job missed it twice as often as
#                            redis-server did).
# Both strip this build directory from the counts' file names (-fprofile-prefix-path), so a
# profile trained in one build directory serves another. A function without counts (tests, code
# the training never ran) is optimised as without a profile (-fprofile-partial-training); one
# whose source changed since the training loses its counts (-Wno-coverage-mismatch: a warning
# at most) instead of failing the build. SLUICE_PGO_STAMP (the profile's identity, set by setup) is part
# of the compile flags so that a new profile recompiles everything. The Lua library
# (tools/build-lua.sh) takes the same options through SLUICE_PGO_LUA_CFLAGS, its counts under
# DIR/lua; its cache key hashes those flags, the stamp included.
set(SLUICE_PGO_GENERATE "" CACHE PATH "Write a training profile here (instrumented build)")
set(SLUICE_PGO_USE "" CACHE PATH "Optimise with the training profile in this directory")
set(SLUICE_PGO_STAMP "" CACHE STRING "Identity of the profile in SLUICE_PGO_USE")
set(SLUICE_PGO_LUA_CFLAGS "")

if(SLUICE_PGO_GENERATE OR SLUICE_PGO_USE)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    message(WARNING "SLUICE_PGO_* needs GCC; building without a profile")
  elseif(SLUICE_PGO_GENERATE AND SLUICE_PGO_USE)
    message(FATAL_ERROR "set SLUICE_PGO_GENERATE or SLUICE_PGO_USE, not both")
  elseif(SLUICE_PGO_GENERATE)
    # Atomic counters: the server's I/O threads run the same functions at once.
    add_compile_options(-fprofile-generate=${SLUICE_PGO_GENERATE} -fprofile-update=atomic
                        -fprofile-prefix-path=${CMAKE_BINARY_DIR})
    add_link_options(-fprofile-generate=${SLUICE_PGO_GENERATE})
    set(SLUICE_PGO_LUA_CFLAGS
        "-fprofile-generate=${SLUICE_PGO_GENERATE}/lua -fprofile-update=atomic")
  else()
    add_compile_options(-fprofile-use=${SLUICE_PGO_USE} -fprofile-partial-training
                        -fprofile-prefix-path=${CMAKE_BINARY_DIR} -Wno-missing-profile
                        -Wno-coverage-mismatch -DSLUICE_PGO_STAMP=${SLUICE_PGO_STAMP})
    set(SLUICE_PGO_LUA_CFLAGS "-fprofile-use=${SLUICE_PGO_USE}/lua -fprofile-partial-training \
-Wno-missing-profile -Wno-coverage-mismatch -DSLUICE_PGO_STAMP=${SLUICE_PGO_STAMP}")
  endif()
  # ccache cannot see which counts file an object was compiled with (-fprofile-prefix-path), so
  # it could serve an object built with another profile.
  if(CCACHE_PROGRAM AND CMAKE_CXX_COMPILER_LAUNCHER STREQUAL "${CCACHE_PROGRAM}")
    set(CMAKE_CXX_COMPILER_LAUNCHER "")
  endif()
endif()
