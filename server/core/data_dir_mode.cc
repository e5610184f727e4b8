#include "server/core/data_dir_mode.h"

#include <ostream>
#include <string>
#include <string_view>

#include "server/core/config_compat.h"

namespace sluice::server {

namespace {

const char* ModeName(DataDirMode mode) {
  switch (mode) {
    case DataDirMode::kCluster:
      return "cluster";
    case DataDirMode::kStandalone:
      return "standalone";
    case DataDirMode::kUnset:
      break;
  }
  return "standalone (recorded before the marker)";
}

constexpr const char* kUsage = "usage: sluice-server --convert-data-dir cluster|standalone --dir D";

// For a cluster data dir: the first db other than 0 that holds keys, and how many; 0 when none.
int DbWithKeys(Store& store, int64_t* count, std::ostream& err) {
  for (int db = 1; db < kNumDatabases; ++db) {
    Result<int64_t> n = store.DbSize(db);
    if (!n.ok()) {
      err << "sluice-server: cannot count the keys of db " << db << ": " << n.status().ToString()
          << "\n";
      *count = -1;
      return db;
    }
    if (*n > 0) {
      *count = *n;
      return db;
    }
  }
  return 0;
}

}  // namespace

DataDirMode DataDirModeOf(const Config& config) {
  const CompatOption* option = FindCompatOption("cluster-enabled");
  const bool cluster = option != nullptr && GetCompatValue(config, *option) == "yes";
  return cluster ? DataDirMode::kCluster : DataDirMode::kStandalone;
}

bool IsConvertDataDir(int argc, const char* const* argv) {
  return argc > 1 && std::string_view(argv[1]) == "--convert-data-dir";
}

int ConvertDataDir(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  std::string_view target_name, dir;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    if (flag == "--convert-data-dir") {
      target_name = argv[i + 1];
    } else if (flag == "--dir") {
      dir = argv[i + 1];
    } else {
      dir = {};
      break;
    }
  }
  if (argc % 2 == 0 || dir.empty() || (target_name != "cluster" && target_name != "standalone")) {
    err << "sluice-server: " << kUsage << "\n";
    return 1;
  }
  const DataDirMode target =
      target_name == "cluster" ? DataDirMode::kCluster : DataDirMode::kStandalone;
  Options options;
  options.path = std::string(dir);
  options.active_expiry = false;
  options.idle_flush_after_s = 0;
  auto opened = Store::Open(options);
  if (!opened.ok()) {
    err << "sluice-server: cannot open data directory '" << dir
        << "': " << opened.status().ToString() << "\n";
    return 1;
  }
  Store& store = **opened;
  Result<DataDirMode> mode = store.GetDataDirMode();
  if (!mode.ok()) {
    err << "sluice-server: " << mode.status().ToString() << "\n";
    return 1;
  }
  if (*mode == target) {
    out << "data directory " << dir << " is already a " << target_name << " data dir\n";
    return 0;
  }
  Result<int64_t> keys = store.DbSize(0);
  out << "converting data directory " << dir << ": " << ModeName(*mode) << " -> " << target_name
      << " (" << (keys.ok() ? *keys : 0) << " keys in db 0)\n"
      << std::flush;
  if (target == DataDirMode::kCluster) {
    int64_t count = 0;
    if (int db = DbWithKeys(store, &count, err); db != 0) {
      if (count >= 0) {
        err << "sluice-server: refusing to convert " << dir << " to cluster: db " << db << " holds "
            << count << " keys, and a cluster node serves db 0 only (move or delete them first)\n";
      }
      return 1;
    }
  }
  if (Status s = store.SetDataDirMode(target); !s.ok()) {
    err << "sluice-server: cannot record the mode: " << s.ToString() << "\n";
    return 1;
  }
  out << "converted: " << dir << " is now a " << target_name << " data dir\n";
  return 0;
}

}  // namespace sluice::server
