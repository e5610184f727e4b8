#include "server/commands/commands.h"

namespace sluice::server {

void RegisterAllCommands(CommandTable& table) {
  RegisterServerCommands(table);
  RegisterConnectionCommands(table);
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
  RegisterStreamCommands(table);
}

}  // namespace sluice::server
