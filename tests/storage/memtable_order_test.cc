// The memtable's key order (storage/engine/memtable_order.h) on its own: keys added in random order
// (sharing their first 16 bytes in groups, so that comparisons go past the integers; short keys,
// bytes 0x00 and 0xff) come back from every snapshot in bytewise order, complete; every seek,
// step and count agrees with a std::set; the merge thread's large merges keep that true while
// snapshots are held, also with writers and readers on many threads; Close stops a merge.
#include "storage/engine/memtable_order.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace sluice::testing {
namespace {

using internal::memtable_nodes::Key;
using internal::memtable_nodes::KeyNode;
using internal::memtable_nodes::KeyOrder;
using internal::memtable_nodes::OrderCursor;
using internal::memtable_nodes::SearchKeyOf;
using internal::memtable_nodes::Version;

// Key nodes as the memtable makes them: a Version holding RocksDB's entry encoding (one-byte
// varint internal-key length, user key, 8-byte tag), and a node whose newest version it is.
class Nodes {
 public:
  struct Made {
    KeyNode* node;
    Key key;
    const char* entry;
  };
  Made Make(const std::string& user) {
    const size_t bytes = sizeof(Version) + 1 + user.size() + 8;
    auto& mem = memory_.emplace_back(new uint64_t[(bytes + 7) / 8]);
    auto* v = new (mem.get()) Version{};
    char* e = v->Entry();
    e[0] = static_cast<char>(user.size() + 8);
    std::memcpy(e + 1, user.data(), user.size());
    const uint64_t tag = (uint64_t{7} << 8) | 1;
    std::memcpy(e + 1 + user.size(), &tag, 8);
    KeyNode& node = nodes_.emplace_back();
    node.newest.store(v);
    node.hash_next.store(nullptr);
    node.hash = 0;
    node.oldest_tag.store(tag);
    return Made{&node, v->GetKey(), e};
  }
  static std::string UserOf(const KeyNode* node) {
    const Key k = node->UserKey();
    return std::string(k.user, k.user_size);
  }

 private:
  std::deque<std::unique_ptr<uint64_t[]>> memory_;
  std::deque<KeyNode> nodes_;
};

// Distinct keys: a third share a 20-byte prefix (ties past the two integers), a third are short
// (under 8 bytes, padded with zeros), the rest random; bytes 0x00 and 0xff included.
std::vector<std::string> MakeKeys(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::string shared[] = {std::string("\x01\x02\x03prefix:shared:", 18) + "ab",
                                std::string("\x01\x02\x03prefix:shared:", 18) + "ac",
                                std::string("\x00\xff\x00\xff\x00\xff\x00\xff", 8) + "longer.."};
  const char alphabet[] = {'\0', '\x01', 'a', 'b', 'z', '\x7f', '\x80', '\xff'};
  std::set<std::string> seen;
  std::vector<std::string> keys;
  while (keys.size() < n) {
    std::string k;
    switch (rng() % 3) {
      case 0:
        k = shared[rng() % 3];
        for (int i = 0, len = static_cast<int>(rng() % 6); i < len; ++i) {
          k.push_back(alphabet[rng() % sizeof alphabet]);
        }
        k += std::to_string(rng() % 1000000);
        break;
      case 1:
        for (int i = 0, len = static_cast<int>(rng() % 8); i < len; ++i) {
          k.push_back(alphabet[rng() % sizeof alphabet]);
        }
        break;
      default:
        for (int i = 0, len = 1 + static_cast<int>(rng() % 30); i < len; ++i) {
          k.push_back(static_cast<char>(rng() & 0xff));
        }
    }
    if (seen.insert(k).second) keys.push_back(k);
  }
  return keys;
}

std::vector<std::string> Forward(OrderCursor& c) {
  std::vector<std::string> out;
  for (KeyNode* n = c.SeekToFirst(); n != nullptr; n = c.Next()) out.push_back(Nodes::UserOf(n));
  return out;
}

std::vector<std::string> Backward(OrderCursor& c) {
  std::vector<std::string> out;
  for (KeyNode* n = c.SeekToLast(); n != nullptr; n = c.Prev()) out.push_back(Nodes::UserOf(n));
  return out;
}

std::string Name(const KeyNode* n) { return n == nullptr ? "<end>" : Nodes::UserOf(n); }

// Every seek, step and count of a cursor over `order` agrees with `expected` (the keys added).
void ExpectSameAsSet(KeyOrder& order, const std::set<std::string>& expected,
                     const std::vector<std::string>& probes, uint64_t seed) {
  OrderCursor c(order.Snapshot());
  const std::vector<std::string> sorted(expected.begin(), expected.end());
  REQUIRE(Forward(c) == sorted);
  REQUIRE(Backward(c) == std::vector<std::string>(sorted.rbegin(), sorted.rend()));
  const auto name = [&sorted](size_t i) { return i < sorted.size() ? sorted[i] : "<end>"; };
  std::mt19937_64 rng(seed);
  for (const std::string& p : probes) {
    const Key pk{p.data(), static_cast<uint32_t>(p.size()), 0};
    size_t at =
        static_cast<size_t>(std::lower_bound(sorted.begin(), sorted.end(), p) - sorted.begin());
    CHECK(c.CountBefore(SearchKeyOf(pk)) == at);
    CHECK(Name(c.SeekBefore(SearchKeyOf(pk))) == (at == 0 ? "<end>" : sorted[at - 1]));
    KeyNode* n = c.SeekAtOrAfter(SearchKeyOf(pk));
    REQUIRE(Name(n) == name(at));
    // A random walk from there, both ways.
    for (int step = 0; step < 20 && n != nullptr; ++step) {
      if (rng() % 2 == 0) {
        n = c.Next();
        REQUIRE(Name(n) == name(++at));
      } else if (at > 0) {  // a cursor is not stepped back past the first
        n = c.Prev();
        REQUIRE(Name(n) == name(--at));
      }
    }
  }
}

void WaitForLargeMerges(const KeyOrder& order, uint64_t at_least) {
  for (int i = 0; i < 2000 && order.large_merges() < at_least; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  REQUIRE(order.large_merges() >= at_least);
}

TEST_CASE("memtable order: every snapshot holds the keys added before it, in order") {
  Nodes nodes;
  auto order = std::make_shared<KeyOrder>();
  const std::vector<std::string> keys = MakeKeys(5000, 1);
  const std::vector<std::string> probes = MakeKeys(300, 2);
  std::set<std::string> expected;
  // Checked at sizes around the tail's seal and the writer's merges.
  const std::set<size_t> checks = {0, 1, 2, 255, 256, 257, 511, 512, 513, 1000, 3333, 5000};
  for (size_t i = 0; i <= keys.size(); ++i) {
    if (checks.count(i) != 0) {
      CAPTURE(i);
      ExpectSameAsSet(*order, expected, probes, i);
    }
    if (i == keys.size()) break;
    const auto made = nodes.Make(keys[i]);
    order->Add(made.node, made.key, made.entry);
    expected.insert(keys[i]);
  }
  CHECK(order->MemoryBytes() >= keys.size() * sizeof(internal::memtable_nodes::OrderEntry));
  order->Close();
}

// Keys written in order, as collections write them: a stream's entries (a shared prefix, then
// a big-endian ID) with a node key after every 100th; two sequences interleaved; descending;
// ascending blocks that overlap each other. The tail's sort merges the ascending stretches and
// the merges copy whole blocks (memtable_order.cc), which these exercise at every seam.
std::vector<std::string> OrderedPattern(int pattern, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::string prefix = std::string("\x00\x12\x34\x00\x00\x00\x05queue", 12) + "\x00\x00\x01";
  const auto be = [](uint64_t v) {
    std::string out(8, '\0');
    for (int b = 0; b < 8; ++b) out[b] = static_cast<char>(v >> (56 - 8 * b));
    return out;
  };
  std::vector<std::string> keys;
  std::set<std::string> seen;
  const auto add = [&](std::string k) {
    if (seen.insert(k).second) keys.push_back(std::move(k));
  };
  for (uint64_t i = 0; keys.size() < n; ++i) {
    switch (pattern) {
      case 0:  // a stream: entries, and a node key per 100
        add(prefix + "e" + be(1000 + i));
        if (i % 100 == 0) add(prefix + "n" + be(1000 + i));
        break;
      case 1:  // two sequences, interleaved
        add(prefix + "a" + be(i));
        add(prefix + "b" + be(i));
        break;
      case 2:  // descending
        add(prefix + "d" + be(~i));
        break;
      default: {  // ascending blocks of 1-300 keys from random points, overlapping
        uint64_t at = rng() % (4 * n);
        for (uint64_t b = 0, len = 1 + rng() % 300; b < len && keys.size() < n; ++b) {
          add(prefix + "r" + be(at++));
        }
      }
    }
  }
  keys.resize(n);
  return keys;
}

TEST_CASE("memtable order: keys written in order come back in order at every seam") {
  for (int pattern = 0; pattern < 4; ++pattern) {
    CAPTURE(pattern);
    Nodes nodes;
    auto order = std::make_shared<KeyOrder>();
    const std::vector<std::string> keys = OrderedPattern(pattern, 3000, 11 + pattern);
    const std::vector<std::string> probes = OrderedPattern(pattern, 3000, 99);
    std::vector<std::string> some;
    for (size_t i = 0; i < probes.size(); i += 60) some.push_back(probes[i]);
    std::set<std::string> expected;
    for (size_t i = 0; i <= keys.size(); ++i) {
      // Snapshots mid-tail too, so that a later sort starts from a sorted prefix.
      if (i % 97 == 0 || i == 256 || i == 512 || i == keys.size()) {
        CAPTURE(i);
        ExpectSameAsSet(*order, expected, some, i);
      }
      if (i == keys.size()) break;
      const auto made = nodes.Make(keys[i]);
      order->Add(made.node, made.key, made.entry);
      expected.insert(keys[i]);
    }
    order->Close();
  }
}

TEST_CASE("memtable order: large merges of keys written in order") {
  for (int pattern : {0, 3}) {
    CAPTURE(pattern);
    Nodes nodes;
    auto order = std::make_shared<KeyOrder>();
    const std::vector<std::string> keys =
        OrderedPattern(pattern, 2 * KeyOrder::kInlineMergeEntries + 500, 21);
    for (const std::string& k : keys) {
      const auto made = nodes.Make(k);
      order->Add(made.node, made.key, made.entry);
    }
    WaitForLargeMerges(*order, 1);
    OrderCursor c(order->Snapshot());
    const std::set<std::string> expected(keys.begin(), keys.end());
    CHECK(Forward(c) == std::vector<std::string>(expected.begin(), expected.end()));
    order->Close();
  }
}

TEST_CASE("memtable order: large merges on the merge thread; old snapshots stay whole") {
  Nodes nodes;
  auto order = std::make_shared<KeyOrder>();
  const size_t n = 4 * KeyOrder::kInlineMergeEntries + 1000;
  const std::vector<std::string> keys = MakeKeys(n, 3);
  std::set<std::string> expected;
  std::vector<std::pair<std::unique_ptr<OrderCursor>, size_t>> held;  // a snapshot, its size
  for (size_t i = 0; i < n; ++i) {
    const auto made = nodes.Make(keys[i]);
    order->Add(made.node, made.key, made.entry);
    if (i % 50000 == 0) {
      held.emplace_back(std::make_unique<OrderCursor>(order->Snapshot()), i + 1);
    }
    expected.insert(keys[i]);
  }
  // Four runs of 2^16 make two large merges, then one more of their results.
  WaitForLargeMerges(*order, 3);
  ExpectSameAsSet(*order, expected, MakeKeys(200, 4), 5);
  // Each snapshot taken before those merges still walks exactly the keys added before it.
  std::vector<std::pair<std::string, size_t>> by_key;  // each key and when it was added
  for (size_t i = 0; i < n; ++i) by_key.emplace_back(keys[i], i);
  std::sort(by_key.begin(), by_key.end());
  for (auto& [cursor, size] : held) {
    std::vector<std::string> first;
    for (const auto& [key, added] : by_key) {
      if (added < size) first.push_back(key);
    }
    CHECK(Forward(*cursor) == first);
  }
  order->Close();
}

TEST_CASE("memtable order: Close during a large merge stops it, and no merge starts after") {
  Nodes nodes;
  auto order = std::make_shared<KeyOrder>();
  const std::vector<std::string> keys = MakeKeys(2 * KeyOrder::kInlineMergeEntries + 10, 6);
  for (const std::string& k : keys) {
    const auto made = nodes.Make(k);
    order->Add(made.node, made.key, made.entry);
  }
  order->Close();  // the merge queued by the last seal may be running, or not yet started
  const uint64_t merges = order->large_merges();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(order->large_merges() == merges);
  // Still ordered and complete: a merge stopped midway changes nothing.
  OrderCursor c(order->Snapshot());
  std::set<std::string> expected(keys.begin(), keys.end());
  CHECK(Forward(c) == std::vector<std::string>(expected.begin(), expected.end()));
}

TEST_CASE("memtable order: writers and readers on many threads") {
  constexpr int kWriters = 4;
  constexpr size_t kPerWriter = 60000;
  const std::vector<std::string> keys = MakeKeys(kWriters * kPerWriter, 7);
  auto order = std::make_shared<KeyOrder>();
  std::vector<Nodes> nodes(kWriters);
  std::atomic<size_t> added[kWriters] = {};
  std::atomic<bool> done{false};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      for (size_t i = 0; i < kPerWriter; ++i) {
        const auto made = nodes[w].Make(keys[w * kPerWriter + i]);
        order->Add(made.node, made.key, made.entry);
        added[w].store(i + 1, std::memory_order_release);
      }
    });
  }
  std::atomic<int> failures{0};
  std::atomic<int> snapshots{0};
  std::thread reader([&] {
    while (!done.load()) {
      size_t counts[kWriters];
      for (int w = 0; w < kWriters; ++w) counts[w] = added[w].load(std::memory_order_acquire);
      OrderCursor c(order->Snapshot());
      const std::vector<std::string> seen = Forward(c);
      // In order, and every key added before the snapshot is in it.
      if (!std::is_sorted(seen.begin(), seen.end()) ||
          std::adjacent_find(seen.begin(), seen.end()) != seen.end()) {
        failures.fetch_add(1);
      }
      const std::set<std::string> have(seen.begin(), seen.end());
      for (int w = 0; w < kWriters; ++w) {
        for (size_t i = 0; i < counts[w]; i += 97) {
          if (have.count(keys[w * kPerWriter + i]) == 0) failures.fetch_add(1);
        }
      }
      snapshots.fetch_add(1);
    }
  });
  for (auto& t : writers) t.join();
  done.store(true);
  reader.join();
  CHECK(failures.load() == 0);
  CHECK(snapshots.load() > 0);
  ExpectSameAsSet(*order, std::set<std::string>(keys.begin(), keys.end()), MakeKeys(100, 8), 9);
  order->Close();
}

}  // namespace
}  // namespace sluice::testing
