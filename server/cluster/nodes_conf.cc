// nodes.conf in Redis's format: one CLUSTER NODES line per node (handshake nodes left out),
// then "vars currentEpoch <n> lastVoteEpoch <n>". Loaded at start; rewritten (temp file,
// fsync, rename: WriteFileDurably) whenever the state changed (dirty_).
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "server/cluster/cluster.h"
#include "server/core/durable_file.h"
#include "server/core/logging.h"

namespace sluice::server::cluster {

namespace {

std::vector<std::string> Split(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

std::string PathOf(const ClusterSettings& s) {
  return !s.config_file.empty() && s.config_file[0] == '/' ? s.config_file
                                                           : s.dir + "/" + s.config_file;
}

bool ParseInt(const std::string& s, int64_t* v) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  *v = std::strtoll(s.c_str(), &end, 10);
  return errno == 0 && *end == '\0';
}

}  // namespace

// One node line: id ip:port@cport[,hostname] flags master ping pong epoch link slots...
bool Cluster::ParseNodesLine(const std::vector<std::string>& argv) {
  if (argv.size() < 8) return false;
  Node* n = Lookup(argv[0]);
  if (n == nullptr) n = CreateNode(argv[0], 0);
  std::string addr = argv[1];
  if (size_t comma = addr.find(','); comma != std::string::npos) {
    n->hostname = addr.substr(comma + 1);
    addr.resize(comma);
  }
  const size_t colon = addr.rfind(':'), at = addr.find('@');
  if (colon == std::string::npos) return false;
  n->ip = addr.substr(0, colon);
  n->port = std::atoi(addr.substr(colon + 1).c_str());
  n->cport = at == std::string::npos ? n->port + 10000 : std::atoi(addr.substr(at + 1).c_str());
  std::istringstream flags(argv[2]);
  for (std::string f; std::getline(flags, f, ',');) {
    if (f == "myself") {
      myself_ = n;
      n->flags |= kFlagMyself;
    } else if (f == "master") {
      n->flags |= kFlagMaster;
    } else if (f == "slave") {
      n->flags |= kFlagSlave;
    } else if (f == "fail?") {
      n->flags |= kFlagPfail;
    } else if (f == "fail") {
      n->flags |= kFlagFail;
      n->fail_time = NowMs();
    } else if (f == "handshake") {
      n->flags |= kFlagHandshake;
    } else if (f == "noaddr") {
      n->flags |= kFlagNoAddr;
    } else if (f == "nofailover") {
      n->flags |= kFlagNoFailover;
    } else if (f != "noflags") {
      return false;
    }
  }
  if (argv[3] != "-") {
    Node* master = Lookup(argv[3]);
    if (master == nullptr) master = CreateNode(argv[3], 0);
    n->master = master;
    AddReplica(master, n);
  }
  int64_t v = 0;
  if (ParseInt(argv[4], &v) && v != 0) n->ping_sent = NowMs();
  if (ParseInt(argv[5], &v) && v != 0) n->pong_received = NowMs();
  if (!ParseInt(argv[6], &v)) return false;
  n->config_epoch = static_cast<uint64_t>(v);
  for (size_t i = 8; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.size() > 2 && a.front() == '[') {
      const size_t dash = a.find('-');
      const int slot = std::atoi(a.c_str() + 1);
      const bool importing = a[dash + 1] == '<';
      const std::string other = a.substr(dash + 3, a.size() - dash - 4);
      Node* o = Lookup(other);
      if (o == nullptr) o = CreateNode(other, 0);
      if (slot < 0 || slot >= kSlots) return false;
      (importing ? importing_from_ : migrating_to_)[slot] = o;
      continue;
    }
    const size_t dash = a.find('-');
    int64_t start = 0, end = 0;
    if (!ParseInt(a.substr(0, dash), &start)) return false;
    end = start;
    if (dash != std::string::npos && !ParseInt(a.substr(dash + 1), &end)) return false;
    if (start < 0 || end >= kSlots || start > end) return false;
    for (int64_t j = start; j <= end; ++j) AddSlot(n, static_cast<int>(j));
  }
  return true;
}

std::string Cluster::Load() {
  std::lock_guard lock(mu_);
  const std::string path = PathOf(settings_);
  std::ifstream in(path);
  bool loaded = false;
  if (in) {
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
      ++number;
      std::vector<std::string> argv = Split(line);
      if (argv.empty()) continue;
      if (argv[0] == "vars") {
        for (size_t i = 1; i + 1 < argv.size(); i += 2) {
          int64_t v = 0;
          if (!ParseInt(argv[i + 1], &v))
            return "Unrecoverable error: corrupted cluster config file";
          if (argv[i] == "currentEpoch") current_epoch_ = static_cast<uint64_t>(v);
          if (argv[i] == "lastVoteEpoch") last_vote_epoch_ = static_cast<uint64_t>(v);
        }
        continue;
      }
      if (!ParseNodesLine(argv)) {
        return "Unrecoverable error: corrupted cluster config file \"" + line + "\".";
      }
      loaded = true;
    }
    if (loaded && myself_ == nullptr) {
      return "Myself node not present in cluster config file " + path;
    }
  }
  if (!loaded) {
    myself_ = CreateNode("", kFlagMyself | kFlagMaster);
    LogInfo("No cluster configuration found, I'm " + myself_->name);
  } else {
    LogInfo("Node configuration loaded, I'm " + myself_->name);
  }
  // The ports are this process's (a node restarted on another port announces it).
  settings_.AnnouncedPorts(&myself_->port, &myself_->pport, &myself_->cport);
  myself_->hostname = settings_.announce_hostname;
  if (!settings_.announce_ip.empty()) myself_->ip = settings_.announce_ip;
  current_epoch_ = std::max(current_epoch_, MaxEpoch());
  if (int err = SaveLocked(); err != 0) {
    return "Cannot save the cluster configuration " + path + ": " + std::strerror(err);
  }
  UpdateState();
  return "";
}

int Cluster::SaveLocked() {
  std::string text;
  for (const auto& [name, n] : nodes_) {
    if (n->flags & kFlagHandshake) continue;
    text += Description(n.get()) + "\n";
  }
  text += "vars currentEpoch " + std::to_string(current_epoch_) + " lastVoteEpoch " +
          std::to_string(last_vote_epoch_) + "\n";
  dirty_ = false;
  const int err = WriteFileDurably(PathOf(settings_), text);
  if (err != 0) LogError("Could not save the cluster config: " + std::string(std::strerror(err)));
  return err;
}

void Cluster::SaveIfDirty() {
  if (dirty_) SaveLocked();
}

}  // namespace sluice::server::cluster
