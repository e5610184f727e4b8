// What other command families use of pub/sub (cmd_pubsub.cc).
#pragma once

#include "server/core/command.h"

namespace sluice::server {

// RESET: drops every subscription of the client, without confirmations.
void ForgetSubscriptions(CommandContext& ctx);

}  // namespace sluice::server
