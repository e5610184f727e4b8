// Redis's error text for introspection and runtime-configuration replies added after errors.h
// (kept apart so that adding one does not rebuild every command family).
#pragma once

#include "sluice/status.h"

namespace sluice::server {

Status GetKeysInvalidArgs();  // "ERR Invalid arguments specified for command"
// CONFIG SET port / bind when the new listeners cannot be bound (Redis's updatePort / applyBind).
Status PortListenFailed();
Status BindFailed();
// OBJECT IDLETIME under an LFU maxmemory-policy.
Status LfuSelected();

}  // namespace sluice::server
