// CONFIG REWRITE's `replicaof` line (server/core/config_rewrite.h does the rest of the file):
// `replicaof host port` on a replica, no line on a primary (a `replicaof`/`slaveof` line the file
// had is blanked), as Redis's rewriteConfigReplicaOfOption. Sentinel sends CONFIG REWRITE with
// every REPLICAOF so that a restarted node keeps its role.
#include <string>

#include "server/commands/server_commands.h"
#include "server/core/config_rewrite.h"

namespace sluice::server {

void RegisterReplicaofRewrite() {
  AddConfigRewriteHook("replicaof", [](const Config& config, ConfigRewrite& rewrite) {
    if (config.replicaof.empty()) return rewrite.MarkProcessed("replicaof");
    rewrite.Rewrite("replicaof", {"replicaof " + config.replicaof}, /*force=*/true);
  });
}

}  // namespace sluice::server
