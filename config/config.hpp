// The typed configuration. config/ fills it from YAML (or the embedded
// default) and validates it; everything else only reads it.
//
// Top-level YAML keys: listen, threads, upstreams, default_upstream, limits,
// ledger, profiles, prices. Later features extend these; none is ever renamed.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pruning/profile.hpp"

namespace td::config {

// The providers tokendiet routes to: the names `upstreams`, `default_upstream`
// and `serve --upstream` accept.
inline constexpr std::array<std::string_view, 3> kProviders = {"openai", "gemini", "anthropic"};

// An upstream is an origin plus an optional path prefix. The client's path and
// query are appended unchanged: `openai: https://api.openai.com`, not `.../v1`.
struct Upstream {
  std::string url;          // as written, for logs
  bool tls = false;         // https
  std::string host;         // lower-case; IPv6 without brackets. Also the TLS SNI and verified name
  std::uint16_t port = 0;   // 443 / 80 unless given
  std::string path_prefix;  // "" or "/something" (no trailing slash)
  std::string ca_file;      // extra CA bundle (PEM); empty: the system store
  bool verify_tls = true;   // never false by default
};

struct Limits {
  std::uint64_t max_body_bytes = 32ull << 20;  // request body; 413 above
  std::uint32_t max_header_bytes = 64u << 10;  // request header block; 431 above
  std::uint32_t max_header_count = 128;
  std::uint32_t connect_timeout_ms = 10'000;        // TCP + TLS to the upstream
  std::uint32_t header_timeout_ms = 300'000;        // upstream response headers (slow models)
  std::uint32_t idle_timeout_ms = 300'000;          // no byte either way on a stream
  std::uint32_t client_header_timeout_ms = 30'000;  // client must send its headers
  std::uint32_t keepalive_timeout_ms = 75'000;      // idle client connection
  // SIGTERM: how long /readyz says 503 while requests are still served, so a
  // load balancer stops sending here before the drain (docs/design.md §Network)
  std::uint32_t drain_grace_ms = 0;
  std::uint32_t drain_timeout_ms = 30'000;  // then: wait for in-flight streams
  std::uint32_t pool_max_idle_per_upstream = 64;
  // Chat bodies at least this big are dieted on a diet thread while the
  // request waits, so the I/O thread goes on serving other connections.
  std::uint64_t diet_offload_bytes = 256u << 10;
  // The bytes of such bodies (by Content-Length, any path) in flight at once;
  // a body that does not fit waits, unread, for up to big_body_wait_ms, then
  // gets 503. 0: no bound.
  std::uint64_t big_bodies_in_flight_bytes = 128ull << 20;
  std::uint32_t big_body_wait_ms = 60'000;
};

struct Ledger {
  bool enabled = true;
  std::string path;                   // "": $STATE_DIRECTORY or $XDG_STATE_HOME/tokendiet/usage.db
  std::uint32_t queue_size = 65'536;  // rows waiting for the writer thread
};

// The archive of what semantic eviction took out of requests
// (docs/design.md §The archive; archive/store.hpp).
struct Archive {
  bool enabled = true;                   // false: nothing is archived, so semantic eviction never runs
  std::string path;                      // "": $STATE_DIRECTORY/archive or $XDG_STATE_HOME/tokendiet/archive
  std::uint64_t max_bytes = 1ull << 30;  // all keys together; 0: no bound
  std::uint64_t max_age_ms = 30ull * 24 * 3600 * 1000;  // since an entry was last used; 0: no bound
};

// Where the policy's state lives (docs/design.md §Shared state): the
// replica's own memory (the default), or a Redis server every replica shares
// (`quota_store: redis://...` or `unix:///path?db=N`; config/quota_store.hpp).
struct QuotaStore {
  std::string url;   // as configured; "": this process's own stores
  std::string host;  // redis:// (lower-case)
  std::uint16_t port = 6379;
  std::string socket;  // unix:// path
  std::string user, password;
  unsigned db = 0;
  std::uint64_t timeout_ms = 50;  // quota_store_timeout_ms: one round trip, at most
  bool shared() const { return !url.empty(); }
};

// USD per million tokens, matched by glob on the model name.
struct Price {
  std::string model;  // glob
  double input = 0, cached_input = 0, cache_write = 0, output = 0;
};

struct Config {
  std::string listen_host = "127.0.0.1";
  std::uint16_t listen_port = 8787;           // 0: any free port
  unsigned threads = 0;                       // 0: one per core
  unsigned diet_threads = 0;                  // threads dieting big bodies; 0: one per two cores, at least one
  std::map<std::string, Upstream> upstreams;  // keys: openai, gemini, anthropic, ...
  std::string default_upstream = "openai";    // for paths no rule routes
  // The dashboard's token (docs/design.md §Dashboard): "" serves it to
  // loopback clients only; set, also to clients that send it.
  std::string admin_token;
  // "info", or "debug": also the access lines of the dashboard's own
  // answers (docs/design.md §Ledger and metrics, Access log).
  std::string log_level = "info";
  Limits limits;
  Ledger ledger;
  Archive archive;
  QuotaStore quota_store;
  std::vector<pruning::Profile> profiles;  // first whose glob matches the model wins
  std::vector<Price> prices;
  std::string source = "<embedded>";  // file it came from
};

// An error found while loading: where, and why.
struct ConfigError {
  std::string file;
  int line = 0, column = 0;  // 1-based; 0 when not tied to a place
  std::string reason;
};

}  // namespace td::config
