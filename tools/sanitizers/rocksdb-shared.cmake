# Included by `tools/sanitize.sh tsan` through CMAKE_PROJECT_INCLUDE: makes RocksDB::rocksdb
# (Debian's static librocksdb.a) link the shared librocksdb.so instead. RocksDB is not built
# with TSan, and tsan.supp can only ignore it (called_from_lib) when it is a separate shared
# object; linked statically its code would be part of every binary and every access it makes
# through memcpy/memcmp on memory it synchronises with its own uninstrumented atomics would be
# reported as a race.
find_package(RocksDB CONFIG REQUIRED)
if(TARGET RocksDB::rocksdb-shared)
  get_target_property(_sluice_rocksdb_so RocksDB::rocksdb-shared IMPORTED_LOCATION_NONE)
  if(_sluice_rocksdb_so)
    set_target_properties(RocksDB::rocksdb PROPERTIES
      IMPORTED_LOCATION "${_sluice_rocksdb_so}"
      IMPORTED_LOCATION_NONE "${_sluice_rocksdb_so}")
    message(STATUS "sanitize: linking ${_sluice_rocksdb_so}")
  endif()
endif()
