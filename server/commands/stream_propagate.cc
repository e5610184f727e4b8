// The stream commands' effects for replication: stream_propagate.h.
#include "server/commands/stream_propagate.h"

#include <string>
#include <vector>

#include "server/core/args.h"
#include "server/core/client_state.h"
#include "server/core/notify.h"
#include "server/core/replication_hook.h"
#include "sluice/transaction.h"

namespace sluice::server {

void PropagateAddOrTrim(Args args, const StreamAddArgs& parsed, std::optional<StreamId> id,
                        const StreamTrimOutcome& trimmed) {
  if (!WantsEffects()) return;
  const StreamTrim& trim = parsed.options.trim;
  std::string threshold;
  if (trim.by != StreamTrim::By::kNone && trim.approx) {
    if (trim.by == StreamTrim::By::kMaxLen) {
      threshold = std::to_string(trimmed.length);
    } else {
      // The first entry left; when none is, the ID after the last one (removes them all).
      StreamId first = trimmed.length > 0 ? trimmed.first_id : trimmed.last_id;
      if (trimmed.length == 0) first.Increment();
      threshold = first.ToString();
    }
  }
  std::vector<std::string> argv;
  argv.reserve(args.size());
  const size_t options_end = id ? parsed.id_pos : args.size();
  argv.emplace_back(args[0]);
  argv.emplace_back(args[1]);
  for (size_t i = 2; i < options_end; ++i) {
    std::string_view opt = args[i];
    if (EqualsIgnoreCase(opt, "maxlen") || EqualsIgnoreCase(opt, "minid")) {
      argv.emplace_back(opt);
      if (args[i + 1] == "~" || args[i + 1] == "=") ++i;
      ++i;  // the threshold
      if (trim.approx) {
        argv.emplace_back("=");
        argv.push_back(threshold);
      } else {
        argv.emplace_back(args[i]);
      }
    } else if (EqualsIgnoreCase(opt, "limit")) {
      ++i;  // an exact trim takes no LIMIT
    } else {
      argv.emplace_back(opt);
    }
  }
  if (id) {
    argv.push_back(id->ToString());
    for (size_t i = parsed.id_pos + 1; i < args.size(); ++i) argv.emplace_back(args[i]);
  }
  PropagateAs(std::move(argv));
}

StreamGroupChange* WantGroupChange(StreamGroupChange* change) {
  return WantsEffects() || NotifyEnabled(kNotifyStream) ? change : nullptr;
}

void PropagateGroupChange(std::string_view key, std::string_view group, std::string_view consumer,
                          const StreamGroupChange& change, std::span<const StreamId> dropped) {
  if (!WantsEffects()) return;
  const std::string k(key), grp(group);
  if (change.consumer_created) {
    PropagateAs({"XGROUP", "CREATECONSUMER", k, grp, std::string(consumer)});
  }
  const std::string last = change.last_delivered.ToString();
  for (const StreamPendingEntry& e : change.pending) {
    PropagateAs({"XCLAIM", k, grp, e.consumer, "0", e.id.ToString(), "TIME",
                 std::to_string(e.delivery_ms), "RETRYCOUNT", std::to_string(e.delivery_count),
                 "FORCE", "JUSTID", "LASTID", last});
  }
  for (StreamId id : dropped) PropagateAs({"XACK", k, grp, id.ToString()});
  if (change.group_moved) {
    PropagateAs(
        {"XGROUP", "SETID", k, grp, last, "ENTRIESREAD", std::to_string(change.entries_read)});
  }
  // Nothing else changed that a replica keeps (the consumer's seen time aside): nothing to send.
  t_effect_override.set = true;
}

}  // namespace sluice::server
