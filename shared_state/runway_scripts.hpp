// The runway's and the sessions' arithmetic as Redis server-side scripts
// (docs/design.md §Shared state): each runs atomically on the Redis server,
// on its clock (TIME), so replicas with their own clocks share one bucket.
// They are quota/runway_store.cpp's rules, line for line (refill, the
// effective limit, take, re-base on the headers, a 429's retry-after, the
// bill's correction); tests/unit/shared_state checks both give the same
// numbers.
//
// A runway is a hash (td:rw:<runway key>): per bucket c (combined), i
// (input), o (output) its learnt limit <b>l, level <b>v and started flag
// <b>s; `at`, the levels' time (server ms); fi/fo, the asks in flight; k,
// cc, ci, co, w: the runway's arguments 1-5 below (its latest request's);
// rl, rr, rt, tr, tt, hs: the latest rate-limit headers' note
// (quota::HeaderNote: requests limit, remaining, reset; tokens remaining,
// reset; when seen; times in Unix ms, -1 none). Each write of a runway also
// scores it with the server's time in the index td:rwi (a sorted set,
// trimmed to the runways written within the idle expiry), which the list
// (kRunways) reads.
// Idle for kIdleExpiry (10 minutes, quota::RunwayStore's), it expires: full
// again. A session is a hash (td:s:<16 hex>): lv level, lm latched messages,
// th thinking lowered, ft fit tokens, cp cached prefix, bt its bill's time,
// rc the line ranges its model recalled ("t1a2b3c4d:41-160" words, in the
// order kept, pruning::RecalledLines); idle an hour (quota::SessionStore's),
// it expires.
//
// Every runway script takes the same first arguments (kRunwayArgs):
//   1 kind (0: combined bucket counting output, OpenAI; 1: Anthropic's input
//   and output; 2: Gemini's combined bucket on input), 2-4 the profile's
//   limits of c, i, o (0 none), 5 the window in ms; the scripts that write
//   it take its expiry (ms) last.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace td::shared_state {

enum Script : std::size_t {
  // KEYS runway, session; ARGV the runway's, 6 the cache lifetime (ms). -> {now_ms, c limit, c level,
  // i limit, i level, o limit, o level, lv, lm, th, ft, cp (0 past the cache
  // lifetime), rc}: numbers as strings, rc the recalled ranges ("" none).
  kFacts,
  // KEYS runway, index; ARGV the runway's, 6 ask in, 7 ask out, 8 margin, 9 expiry. Takes the
  // ask -> the wait (ms) the buckets needed for it before it was taken.
  kTake,
  // KEYS runway, index; ARGV the runway's, 6-7 taken in/out, 8-9 billed in/out,
  // 10 counted (0/1), 11-16 header limit/remaining of c, i, o (-1 none),
  // 17 retry-after in ms from the answer (0 none), 18-23 the headers' note
  // (rl, rr, rt, tr, tt, hs; hs 0: no headers), 24 expiry. -> "ok"
  kSettle,
  // KEYS session; ARGV lv, lm, th, ft, expiry -> "ok"
  kSessionPut,
  // KEYS session; ARGV fit tokens (the lowest kept), expiry -> "ok"
  kSessionFit,
  // KEYS session; ARGV cached prefix (its time: the server's now), expiry -> "ok"
  kSessionBilled,
  // KEYS session; ARGV 1 the most ranges kept, 2 expiry, 3.. ranges
  // ("t1a2b3c4d:41-160"), appended to rc while it holds fewer -> "ok"
  kSessionRecalled,
  // KEYS index; ARGV 1 the most runways, 2 the idle expiry (ms) -> {now_ms,
  // then per runway, the most recently written first: its key, its hash's
  // fields and values}
  kRunways,
  kScriptCount
};

// The sources, by Script.
const std::vector<std::string>& scripts();

inline constexpr const char* kRunwayIndexKey = "td:rwi";
inline constexpr long long kRunwayIdleMs = 10 * 60 * 1000;    // quota::RunwayStore::kIdleExpiry
inline constexpr long long kSessionIdleMs = 60 * 60 * 1000;   // quota::SessionStore::kIdleExpiry
inline constexpr long long kCacheLifetimeMs = 5 * 60 * 1000;  // quota::PolicyStore::kCacheLifetime

}  // namespace td::shared_state
