// One usage-ledger row: what one request cost and what the diet saved.
//
// Filled by the logging-phase filter from the request context; written to
// SQLite by the ledger's writer thread; read back by `tokendiet usage`.
// Token counts are signed 64-bit because SQLite stores INTEGER that way and
// the providers' usage numbers are parsed into std::int64_t as well.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace td::ledger {

struct LedgerRow {
  std::int64_t time_ms = 0;     // unix epoch ms when the request arrived
  std::string request_id;       // the proxy's id for the request (also in logs)
  std::string session;          // agent session, where one is known
  std::string key_fingerprint;  // key_fingerprint() of the API key, never the key
  std::string provider;         // openai | gemini | anthropic | ...
  std::string model;
  std::string profile;  // name of the profile that applied
  std::string mode;     // none | standard | semantic | survival | shadow ...

  std::int64_t tokens_before = 0;  // prompt tokens as the client sent them (our count)
  std::int64_t tokens_after = 0;   // prompt tokens as forwarded (our count)

  // As the upstream reported them (providers::Usage meanings: prompt includes
  // cache reads and writes, completion includes reasoning).
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  std::int64_t cached_read_tokens = 0;
  std::int64_t cache_write_tokens = 0;
  std::int64_t reasoning_tokens = 0;
  bool usage_present = false;  // false: the upstream said nothing (zeros above)

  int status = 0;             // HTTP status sent to the client; 0: none (aborted)
  std::int64_t ttfb_ms = 0;   // request arrival -> first response byte to the client; -1: none
  std::int64_t total_ms = 0;  // request arrival -> last byte
  bool stream = false;
  std::vector<std::string> strategies;  // names of the strategies that changed something
  bool fail_open = false;               // parsing/pruning failed; original bytes went upstream
  std::int64_t bytes_in = 0;            // request body bytes from the client
  std::int64_t bytes_out = 0;           // response body bytes to the client
  // Semantic eviction: the tasks whose outputs the request went without
  // (archived first), once each, in order (column evicted_tasks, schema 2).
  std::vector<std::string> evicted_tasks;

  // The policy's report (stored, schema 6; /metrics counts it too).
  std::string survival;                       // survival's outcome; "" none
  std::int64_t wait_ms = 0;                   // held for the runway
  std::string quota_group;                    // the runway's group; "" none known
  std::optional<std::int64_t> runway_tokens;  // the runway left after the request
  // Stored (schema 2): context-overflow recovery, "retried" (the request
  // went twice; the row's tokens are the retry's), "no_fit"; "" none.
  std::string recovery;
  // The archive entries tokendiet_recall read back, in order (column recalled, schema 4).
  std::vector<std::string> recalled;
  std::uint32_t recall_rounds = 0;  // continuation rounds those took (stored, schema 7)

  // The control arm and the outcome fields (schema 7; docs/design.md §Ledger
  // and metrics): the row's arm ("treatment", "control", "shadow"; "" not a
  // request the diet read), the tokens the diet would have sent (tokens_after
  // for the treatment; shadow and control sent tokens_before), re-reads
  // (pruning/rereads.hpp), context-length errors the upstream answered, and
  // the input as billed priced with the config's prices of the time (cache
  // reads and writes at theirs; nullopt: no price, or no usage).
  std::string arm;
  std::string session_key;  // 16 hex digits of the key the arm was picked by; "" none
  std::int64_t tokens_diet = 0;
  std::uint32_t rereads = 0;
  std::uint32_t context_errors = 0;
  std::optional<double> input_cost_usd;

  std::int64_t tokens_saved() const { return tokens_before > tokens_after ? tokens_before - tokens_after : 0; }
  bool operator==(const LedgerRow&) const = default;
};

}  // namespace td::ledger
