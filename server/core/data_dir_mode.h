// The data dir's mode (standalone or cluster, sluice/store.h's DataDirMode): which mode this
// server's configuration asks for, and the offline conversion of a data dir from one mode to the
// other (`sluice-server --convert-data-dir cluster|standalone --dir D`). Keys are stored under
// their hash slot in both modes, so a conversion only checks the keys (a cluster node serves
// db 0 only) and rewrites the marker.
#pragma once

#include <iosfwd>

#include "server/core/config.h"
#include "sluice/store.h"

namespace sluice::server {

// kCluster when cluster-enabled is yes, else kStandalone.
DataDirMode DataDirModeOf(const Config& config);

// True when argv asks for the conversion (argv[1] is --convert-data-dir).
bool IsConvertDataDir(int argc, const char* const* argv);

// Runs the conversion: `--convert-data-dir cluster|standalone --dir D`. Writes progress lines
// to `out` and the reason of a refusal to `err`. Returns the process's exit code: 0 converted
// (or already in that mode), 1 refused (usage, the data dir cannot be opened, or, for cluster,
// keys in a db other than 0).
int ConvertDataDir(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace sluice::server
