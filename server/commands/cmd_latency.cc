// LATENCY LATEST | HISTORY | RESET | GRAPH | DOCTOR | HISTOGRAM | HELP over the server's latency
// monitor (server/core/latency.h), fed by the connections with the commands that take at least
// latency-monitor-threshold ms ("command", or "fast-command" for O(1) commands, as Redis).
#include <cstdlib>
#include <string>
#include <vector>

#include "server/commands/commands.h"
#include "server/commands/server_commands.h"
#include "server/core/args.h"
#include "server/core/command_latency.h"
#include "server/core/config_compat.h"
#include "server/core/errors.h"
#include "server/core/latency.h"
#include "server/core/server_state.h"

namespace sluice::server {

namespace {

int64_t NowSeconds() { return ServerState::RealNowMs() / 1000; }

void LatencyLatest(CommandContext& ctx, Args) {
  const std::vector<LatencyMonitor::Latest> latest = ctx.server.latency().LatestAll();
  ctx.out.Array(latest.size());
  for (const LatencyMonitor::Latest& l : latest) {
    ctx.out.Array(4);
    ctx.out.Bulk(l.event);
    ctx.out.Integer(l.last.time);
    ctx.out.Integer(l.last.latency_ms);
    ctx.out.Integer(l.max_ms);
  }
}

void LatencyHistory(CommandContext& ctx, Args args) {
  const std::vector<LatencyMonitor::Sample> samples = ctx.server.latency().History(args[2]);
  ctx.out.Array(samples.size());
  for (const LatencyMonitor::Sample& s : samples) {
    ctx.out.Array(2);
    ctx.out.Integer(s.time);
    ctx.out.Integer(s.latency_ms);
  }
}

void LatencyReset(CommandContext& ctx, Args args) {
  std::vector<std::string_view> events(args.begin() + 2, args.end());
  ctx.out.Integer(ctx.server.latency().Reset(events));
}

void LatencyGraph(CommandContext& ctx, Args args) {
  std::string graph;
  if (!ctx.server.latency().Graph(args[2], NowSeconds(), &graph)) {
    return ReplyError(ctx.out, LatencyNoSamples(args[2]));
  }
  ctx.out.Verbatim("txt", graph);
}

void LatencyDoctor(CommandContext& ctx, Args) {
  ctx.out.Verbatim("txt",
                   ctx.server.latency().Doctor(ctx.server.latency_threshold_ms(), NowSeconds()));
}

// One command's entry of LATENCY HISTOGRAM: name -> {calls, histogram_usec {usec: count}}.
void ReplyCommandHistogram(CommandContext& ctx, const std::string& name, const LatencyCounts& h) {
  ctx.out.Bulk(name);
  ctx.out.Map(2);
  ctx.out.Bulk("calls");
  ctx.out.Integer(static_cast<int64_t>(h.total));
  ctx.out.Bulk("histogram_usec");
  const auto buckets = LatencyBuckets(h);
  ctx.out.Map(buckets.size());
  for (const auto& [usec, count] : buckets) {
    ctx.out.Integer(usec);
    ctx.out.Integer(static_cast<int64_t>(count));
  }
}

// LATENCY HISTOGRAM [command ...]: every command (and subcommand) called since the start or
// CONFIG RESETSTAT; with names, those commands (a container: its subcommands), unknown names
// and commands never called skipped, as Redis.
void LatencyHistogram(CommandContext& ctx, Args args) {
  const std::vector<LatencyCounts> sums = SumCommandLatencies();
  const std::vector<CommandSpec>& all = ctx.server.commands().all();
  std::vector<const CommandSpec*> shown;
  auto add = [&](const CommandSpec& spec) {
    if (spec.id < sums.size() && sums[spec.id].total > 0) shown.push_back(&spec);
  };
  if (args.size() == 2) {
    for (const CommandSpec& spec : all) add(spec);
  }
  for (size_t i = 2; i < args.size(); ++i) {
    const CommandSpec* spec = ctx.server.commands().Find(args[i]);
    if (spec == nullptr) continue;
    add(*spec);
    if (spec->name.find('|') != std::string::npos) continue;
    const std::string prefix = spec->name + "|";
    for (const CommandSpec& sub : all) {
      if (sub.name.compare(0, prefix.size(), prefix) == 0) add(sub);
    }
  }
  ctx.out.Map(shown.size());
  for (const CommandSpec* spec : shown) ReplyCommandHistogram(ctx, spec->name, sums[spec->id]);
}

void LatencyHelp(CommandContext& ctx, Args) {
  static constexpr const char* kLines[] = {
      "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "DOCTOR",
      "    Return a human readable latency analysis report.",
      "GRAPH <event>",
      "    Return an ASCII latency graph for the <event> class.",
      "HISTORY <event>",
      "    Return time-latency samples for the <event> class.",
      "LATEST",
      "    Return the latest latency samples for all events.",
      "RESET [<event> ...]",
      "    Reset latency data of one or more <event> classes.",
      "    (default: reset all data for all event classes)",
      "HISTOGRAM [COMMAND ...]",
      "    Return a cumulative distribution of latencies in the format of a histogram for the "
      "specified command names.",
      "    If no commands are specified then all histograms are replied.",
      "HELP",
      "    Prints this help.",
  };
  ctx.out.Array(std::size(kLines));
  for (const char* line : kLines) ctx.out.Simple(line);
}

}  // namespace

void LatencyStatsSection(CommandContext& ctx, const Config& config, std::string& out) {
  out += "# Latencystats\r\n";
  if (!LatencyTrackingEnabled()) return;
  std::vector<double> percentiles;
  if (const CompatOption* o = FindCompatOption("latency-tracking-info-percentiles")) {
    const std::string text = GetCompatValue(config, *o);
    const char* p = text.c_str();
    char* end = nullptr;
    for (double v = std::strtod(p, &end); end != p; v = std::strtod(p, &end)) {
      percentiles.push_back(v);
      p = end;
    }
  }
  const std::vector<LatencyCounts> sums = SumCommandLatencies();
  for (const CommandSpec& spec : ctx.server.commands().all()) {
    if (spec.id >= sums.size() || sums[spec.id].total == 0) continue;
    out += "latency_percentiles_usec_" + spec.name + ":" +
           FormatLatencyPercentiles(sums[spec.id], percentiles) + "\r\n";
  }
}

void RegisterLatencyCommands(CommandTable& table) {
  constexpr uint32_t kFlags = kAdmin | kNoScript | kLoading | kStale;
  table.Add(MakeSpec("server", "latency", -2, 0, {}, nullptr,
                     "A container for latency diagnostics commands", "2.8.13", "subcommand"));
  table.Add(MakeSpec("server", "latency|latest", 2, kFlags, {}, LatencyLatest,
                     "Return the latest latency samples for all events.", "2.8.13", ""));
  table.Add(MakeSpec("server", "latency|history", 3, kFlags, {}, LatencyHistory,
                     "Return timestamp-latency samples for the event.", "2.8.13", "event"));
  table.Add(MakeSpec("server", "latency|reset", -2, kFlags, {}, LatencyReset,
                     "Reset latency data for one or more events.", "2.8.13",
                     "[event [event ...]]"));
  table.Add(MakeSpec("server", "latency|graph", 3, kFlags, {}, LatencyGraph,
                     "Return a latency graph for the event.", "2.8.13", "event"));
  table.Add(MakeSpec("server", "latency|doctor", 2, kFlags, {}, LatencyDoctor,
                     "Return a human readable latency analysis report.", "2.8.13", ""));
  table.Add(MakeSpec("server", "latency|histogram", -2, kFlags, {}, LatencyHistogram,
                     "Return the cumulative distribution of latencies of a subset of commands or "
                     "all.",
                     "7.0.0", "[command [command ...]]"));
  table.Add(MakeSpec("server", "latency|help", 2, kLoading | kStale, {}, LatencyHelp,
                     "Show helpful text about the different subcommands.", "2.8.13", ""));
}

}  // namespace sluice::server
