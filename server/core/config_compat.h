// Redis 7.0's redis.conf parameters that Sluice accepts, stores and shows but does not act on
// (encoding thresholds, eviction, RDB/AOF knobs, cluster settings, ...): one table with each
// parameter's name, alias, kind, Redis's default and bounds, so CONFIG GET/SET, the config file
// and CONFIG REWRITE treat them as Redis does, with Redis's validation errors. The values live in
// Config::compat (canonical name -> value as CONFIG GET shows it; absent: Redis's default).
// Replication (replicaof, repl-*, replica-*, min-replicas-*) and TLS (tls-*) options belong to
// their own rooms and are not in this table.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/core/config.h"
#include "sluice/encoding_limits.h"

namespace sluice::server {

struct CompatOption {
  enum class Kind : uint8_t {
    kBool,            // yes|no
    kString,          // any text ("" allowed)
    kNullableString,  // any text; "" means unset (CONFIG REWRITE leaves it out)
    kEnum,            // one of `names`
    kEnumFlags,       // several of `names`, space separated (shutdown-on-sigint)
    kInt,             // signed integer in [lo, hi]
    kUInt,            // unsigned integer in [lo, hi] (a negative one wraps, as Redis)
    kMemory,          // signed memory value (100mb) in [lo, hi]
    kUMemory,         // unsigned memory value in [lo, hi]
    kMemoryPercent,   // memory value or "n%" (maxmemory-clients)
    kOctal,           // octal integer (unixsocketperm)
    kSave,            // "seconds changes [seconds changes ...]" or ""
    kOomValues,       // three integers in -2000..2000
    kPercentiles,     // doubles in 0..100, space separated
  };
  static constexpr uint8_t kImmutable = 1;  // CONFIG SET refuses it (the file may set it)
  static constexpr uint8_t kHidden = 2;     // CONFIG GET shows it only when asked by name
  static constexpr uint8_t kProtected = 4;  // CONFIG SET needs enable-protected-configs

  const char* name;
  const char* alias;  // Redis's other name (slave-*, *-ziplist-*), or nullptr
  Kind kind;
  uint8_t flags;
  const char* default_value;  // as CONFIG GET shows it
  int64_t lo;
  uint64_t hi;
  // kEnum/kEnumFlags: the names, comma separated, in Redis's order; "relative>yes" is a name
  // shown as another ("relative" reads back as "yes").
  const char* names;
};

// Every parameter of the table, in Redis's order.
const std::vector<CompatOption>& CompatOptions();
// By name or alias, case-insensitive; nullptr when not in the table.
const CompatOption* FindCompatOption(std::string_view name);

// Validates `value` as Redis's CONFIG SET would and stores its canonical form in
// config.compat. Returns Redis's reason on a bad value (config unchanged).
std::optional<std::string> SetCompatValue(Config& config, const CompatOption& option,
                                          std::string_view value);
// The value CONFIG GET shows.
std::string GetCompatValue(const Config& config, const CompatOption& option);

// The lines CONFIG REWRITE writes for the option (`name value`, with Redis's quoting and memory
// units; save: one line per pair, or `save ""`), and whether they must be written when the file
// does not mention the option (the value is not the default). Empty when the option must not be
// written (an unset nullable string).
struct CompatRewrite {
  std::vector<std::string> lines;
  bool force = false;
};
CompatRewrite RewriteCompatOption(const Config& config, const CompatOption& option);

// Redis's quoting of a string value in a config file (sdscatrepr): "..." with \n \r \t \a \b,
// \" \\ and \xHH escapes.
std::string QuoteConfigValue(std::string_view value);
// Redis's memory form for a config file: 1gb, 512mb, 4kb or plain bytes.
std::string FormatConfigMemory(int64_t bytes);

// The collection encoding thresholds of `config` (hash-max-listpack-*, set-max-intset-entries,
// zset-max-listpack-*, aliases included) for the engine (SetEncodingLimits).
EncodingLimits EncodingLimitsOf(const Config& config);

}  // namespace sluice::server
