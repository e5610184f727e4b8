// FAILOVER's PSYNC errors, Redis 7.0.15's text (defined in errors_replication.cc). Apart from
// errors.h only so that adding them did not rebuild every command; they belong with the
// replication errors declared there.
#pragma once

#include "sluice/status.h"

namespace sluice::server {

Status PsyncFailoverToPrimary();       // "ERR PSYNC FAILOVER can't be sent to a master."
Status PsyncFailoverReplidMismatch();  // "ERR PSYNC FAILOVER replid must match my replid."
Status SyncWhileFailingOver();         // "NOMASTERLINK Can't SYNC while failing over"

}  // namespace sluice::server
