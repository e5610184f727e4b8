// Replacing a file durably: what SAVE's dump.rdb, CONFIG REWRITE, ACL SAVE and the function
// libraries' file all need, written once.
#pragma once

#include <string>
#include <string_view>

namespace sluice::server {

// Writes `data` to `path` so that a crash leaves either the old file or the new one, never a
// part of it: a temporary file beside it (`path` + ".tmp-<pid>"), fsync, rename over `path`,
// fsync of the directory. Returns 0, or the errno of the step that failed (the temporary file is
// removed then). Blocking I/O: call it off the I/O threads' hot path (saves, admin commands).
int WriteFileDurably(const std::string& path, std::string_view data);

// Removes `path` and fsyncs its directory, so the removal survives a crash. Returns 0 (also when
// the file was already gone) or the errno of the step that failed.
int RemoveFileDurably(const std::string& path);

}  // namespace sluice::server
