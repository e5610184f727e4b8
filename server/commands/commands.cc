#include "server/commands/commands.h"

namespace sluice::server {

void RegisterAllCommands(CommandTable& table) {
  RegisterServerCommands(table);
  RegisterReplicationCommands(table);
  RegisterClusterCommands(table);
  RegisterConnectionCommands(table);
  RegisterClusterClientCommands(table);
  RegisterStringCommands(table);
  RegisterKeyCommands(table);
  RegisterLimiterCommands(table);
  RegisterTransactionCommands(table);
  RegisterScriptingCommands(table);
  RegisterFunctionCommands(table);
  RegisterHashCommands(table);
  RegisterSetCommands(table);
  RegisterListCommands(table);
  RegisterZSetCommands(table);
  RegisterPubSubCommands(table);
  RegisterAclCommands(table);
  RegisterKeyspaceCommands(table);
  RegisterModuleCommands(table);
  RegisterSortCommands(table);
  RegisterGeoCommands(table);
  RegisterClientPauseCommands(table);
  RegisterTrackingCommands(table);
  RegisterPersistenceCommands(table);
  RegisterSlowlogCommands(table);
  RegisterLatencyCommands(table);
  RegisterMemoryCommands(table);
  RegisterBitmapCommands(table);
  RegisterHyperLogLogCommands(table);
  RegisterLcsCommand(table);
  RegisterDumpCommands(table);
  RegisterStreamCommands(table);
}

}  // namespace sluice::server
