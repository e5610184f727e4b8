// CONFIG REWRITE, minimal: rewrites the config file's replication line (`replicaof host port`,
// or none on a primary), keeping every other line as it is. Sentinel sends it with every
// REPLICAOF so a restarted node keeps its role. A general rewrite of every option can replace
// this function.
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "server/commands/server_commands.h"
#include "server/core/args.h"
#include "server/core/errors.h"
#include "server/core/server_state.h"

namespace sluice::server {

namespace {

// The line's first word, lower-cased.
std::string FirstWord(const std::string& line) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string::npos) return "";
  size_t j = line.find_first_of(" \t", i);
  std::string w = line.substr(i, j == std::string::npos ? std::string::npos : j - i);
  for (char& c : w) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return w;
}

}  // namespace

void ConfigRewrite(CommandContext& ctx, Args) {
  const Config config = ctx.server.config();
  if (config.config_file.empty()) return ReplyError(ctx.out, ConfigNoFile());
  std::ifstream in(config.config_file);
  if (!in) return ReplyError(ctx.out, ConfigRewriteFailed(std::strerror(errno)));
  std::string text;
  for (std::string line; std::getline(in, line);) {
    const std::string w = FirstWord(line);
    if (w == "replicaof" || w == "slaveof") continue;
    text += line;
    text += '\n';
  }
  in.close();
  if (!config.replicaof.empty()) text += "replicaof " + config.replicaof + "\n";
  const std::string tmp = config.config_file + ".rewrite.tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return ReplyError(ctx.out, ConfigRewriteFailed(std::strerror(errno)));
    out << text;
    out.flush();
    if (!out) return ReplyError(ctx.out, ConfigRewriteFailed(std::strerror(errno)));
  }
  if (std::rename(tmp.c_str(), config.config_file.c_str()) != 0) {
    return ReplyError(ctx.out, ConfigRewriteFailed(std::strerror(errno)));
  }
  ctx.out.Simple("OK");
}

}  // namespace sluice::server
