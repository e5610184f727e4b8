// The recorded library script bodies (server/scripting/native/library_scripts/<file>), read from
// the source tree for the native-scripts tests. The including file must be compiled with
// SLUICE_SOURCE_DIR defined (tests/server/CMakeLists.txt).
#pragma once

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace sluice::server::testing {

inline std::string Body(const std::string& file) {
  std::ifstream in(
      std::string(SLUICE_SOURCE_DIR) + "/server/scripting/native/library_scripts/" + file,
      std::ios::binary);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace sluice::server::testing
