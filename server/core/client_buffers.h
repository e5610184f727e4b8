// Redis's CLIENT LIST / CLIENT INFO buffer fields (qbuf, qbuf-free, argv-mem, multi-mem, rbs,
// rbp, obl, oll, omem, tot-mem) and the MULTI count (multi=, flags=x) of each connection,
// published by the connection's own thread and read by CLIENT LIST on any thread. Kept beside
// ClientState (not in it) so that it can grow without rebuilding every command family; the
// mapping of Sluice's buffers onto Redis's fields is in docs/server.md ("CLIENT LIST buffer
// fields").
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace sluice::server {

struct ClientState;

// Written by the owning connection's thread (relaxed stores), read from any thread: each field
// is exact as of its last store, the set of them not a snapshot taken at one instant.
struct ClientBuffers {
  std::atomic<int64_t> multi{-1};  // commands queued since MULTI; -1 outside MULTI
  std::atomic<int64_t> qbuf{0};
  std::atomic<int64_t> qbuf_free{0};
  std::atomic<int64_t> argv_mem{0};
  std::atomic<int64_t> multi_mem{0};
  std::atomic<int64_t> rbs{0};
  std::atomic<int64_t> rbp{0};
  std::atomic<int64_t> obl{0};
  std::atomic<int64_t> oll{0};
  std::atomic<int64_t> omem{0};
  std::atomic<int64_t> tot_mem{0};
};

// Which ClientBuffers belong to which client. Process-wide (ClientBuffersTable()); its own
// mutex, taken inside the client registry's lock by CLIENT LIST and alone by connections (never
// the other way round).
class ClientBuffersTable {
 public:
  // `buffers` must stay valid until Remove(client).
  void Add(const ClientState* client, const ClientBuffers* buffers);
  void Remove(const ClientState* client);
  // nullptr when the client has none (a connection-less client: tests, Lua's fake client).
  const ClientBuffers* Find(const ClientState* client) const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<const ClientState*, const ClientBuffers*> map_;
};

ClientBuffersTable& ClientBuffersOf();

}  // namespace sluice::server
