// Also provides doctest's main() for the test_server binary (no other file may define it).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include "tests/server/harness.h"

#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "protocol/reply_writer.h"
#include "server/commands/commands.h"
#include "server/pubsub/pubsub_registry.h"
#include "server/scripting/scripting_state.h"
#include "sluice/limiter.h"
#include "sluice/transaction.h"

namespace sluice::server::testing {

namespace {
constexpr int64_t kStartMs = 1'700'000'000'000;
}  // namespace

std::string MakeTempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/sluice-test-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  return pattern;
}

Harness::Harness(HarnessOptions harness_options)
    : dir_(MakeTempDir()), clock_(std::make_shared<AdjustableClock>()) {
  clock_->SetManualNs(kStartMs * 1'000'000);
  Config config;
  config.dir = dir_;
  config.enable_debug_command = true;
  server_ = std::make_unique<ServerState>(config, clock_);
  AttachScripting(*server_);
  AttachPubSub(*server_);
  Options options;
  options.path = dir_ + "/db";
  options.clock = clock_;
  options.active_expiry = harness_options.active_expiry;
  auto opened = Store::Open(options);
  if (!opened.ok()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);  // the destructor will not run
    throw std::runtime_error("Store::Open: " + opened.status().ToString());
  }
  store_ = std::move(opened).value();
  store_->AddCommitObserver(&server_->watches());
  store_->AddCommitObserver(&server_->dirty());
  RegisterAllCommands(table_);
  server_->set_commands(&table_);
  dispatcher_ = std::make_unique<Dispatcher>(table_);
  client_.id = server_->clients().NextId();
  client_.authenticated = !server_->requirepass_set();
  client_.addr = "127.0.0.1:50000";
  client_.laddr = "127.0.0.1:6379";
  client_.created_ms = ServerState::RealNowMs();
  client_.last_interaction_ms.store(client_.created_ms, std::memory_order_relaxed);
  server_->clients().Add(&client_, nullptr);
}

Harness::~Harness() {
  server_->clients().Remove(&client_);
  store_.reset();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string Harness::Run(std::vector<std::string> args) {
  std::vector<std::string_view> views(args.begin(), args.end());
  std::string reply;
  protocol::ReplyWriter out(&reply, client_.resp);
  CommandContext ctx{*store_, *server_, client_, out};
  dispatcher_->Dispatch(ctx, views);
  return reply;
}

std::vector<std::string> Harness::RunBatch(const std::vector<std::vector<std::string>>& commands) {
  std::vector<std::string> replies;
  CommitGroup group(*store_, /*defer_durability=*/true);
  for (const std::vector<std::string>& args : commands) {
    std::vector<std::string_view> views(args.begin(), args.end());
    std::string reply;
    protocol::ReplyWriter out(&reply, client_.resp);
    CommandContext ctx{*store_, *server_, client_, out};
    ctx.group = &group;
    dispatcher_->Dispatch(ctx, views);
    replies.push_back(std::move(reply));
  }
  REQUIRE(group.Flush().ok());
  return replies;
}

std::string Harness::Cmd(std::string_view line) {
  std::vector<std::string> args;
  size_t start = 0;
  while (true) {
    size_t space = line.find(' ', start);
    args.emplace_back(line.substr(start, space - start));
    if (space == std::string_view::npos) break;
    start = space + 1;
  }
  return Run(std::move(args));
}

void Harness::Resp3() { client_.resp = 3; }

void Harness::AdvanceMs(int64_t ms) { clock_->AdvanceNs(ms * 1'000'000); }

std::string Ok() { return "+OK\r\n"; }
std::string Int(int64_t v) { return ":" + std::to_string(v) + "\r\n"; }
std::string Bulk(std::string_view s) {
  return "$" + std::to_string(s.size()) + "\r\n" + std::string(s) + "\r\n";
}
std::string Nil() { return "$-1\r\n"; }
std::string NilArray() { return "*-1\r\n"; }
std::string Err(std::string_view msg) { return "-" + std::string(msg) + "\r\n"; }
std::string Simple(std::string_view s) { return "+" + std::string(s) + "\r\n"; }

std::string Arr(std::vector<std::string> items) {
  std::string out = "*" + std::to_string(items.size()) + "\r\n";
  for (const std::string& item : items) out += item;
  return out;
}

std::string Null() { return "_\r\n"; }

std::string Map(std::vector<std::string> kv_items) {
  std::string out = "%" + std::to_string(kv_items.size() / 2) + "\r\n";
  for (const std::string& item : kv_items) out += item;
  return out;
}

std::string Double(double v) {
  if (std::isinf(v)) return v > 0 ? ",inf\r\n" : ",-inf\r\n";
  if (std::isnan(v)) return ",nan\r\n";
  char buf[64];
  std::snprintf(buf, sizeof(buf), ",%.17g\r\n", v);
  return buf;
}

std::string Bool(bool v) { return v ? "#t\r\n" : "#f\r\n"; }

std::string WrongTypeErr() {
  return Err("WRONGTYPE Operation against a key holding the wrong kind of value");
}
std::string NotIntegerErr() { return Err("ERR value is not an integer or out of range"); }
std::string NotFloatErr() { return Err("ERR value is not a valid float"); }
std::string SyntaxErr() { return Err("ERR syntax error"); }
std::string ArityErr(std::string_view command) {
  return Err("ERR wrong number of arguments for '" + std::string(command) + "' command");
}
std::string BadExpireErr(std::string_view cmd) {
  return Err("ERR invalid expire time in '" + std::string(cmd) + "' command");
}

void MakeNonString(Harness& h, std::string_view key) {
  limiter::ConcParams p;
  REQUIRE(limiter::MakeConcParams(3, 60 * limiter::kNsPerSecond, &p) == "");
  REQUIRE(h.store().ConcAcquire(h.client().db, key, p, "holder").ok());
}

HeldKey::HeldKey(Store& store, std::string key, std::string value) {
  holder_ = std::thread([this, &store, key = std::move(key), value = std::move(value)] {
    const KeyRef keys[] = {{0, key}};
    Store::Transaction txn(store, keys);
    REQUIRE(txn.Set(0, key, value, SetOptions{}).ok());
    REQUIRE(txn.Commit().ok());
    held_ = true;
    while (!release_) std::this_thread::yield();
  });
  while (!held_) std::this_thread::yield();
  releaser_ = std::thread([this] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    release_ = true;
  });
}

HeldKey::~HeldKey() {
  releaser_.join();
  holder_.join();
}

}  // namespace sluice::server::testing
