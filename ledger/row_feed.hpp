// The rows this process's ledger writer committed, handed to the
// dashboard's kept sums (ledger/dashboard_scan) so that a page polling does
// not read back from SQLite what the writer has just written
// (docs/design.md §Dashboard, The feed): SQLite's decoding of a row read
// back costs many times the writer's copy of the few fields the sums read
// (benchmarks.md §The dashboard's stats API).
//
// Rows are kept only while a reader takes them (the last take() within
// kIdle) and at most kMaxRows: a page that stops polling leaves nothing
// growing, and the rows not kept are read from SQLite as before. A row's
// fields are the ones the sums read, as SQLite gives them back.
#pragma once

#include <chrono>
#include <memory>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "ledger/ledger_row.hpp"

namespace td::ledger {

// A row's fields; its texts are views into its chunk's.
struct FedRow {
  std::int64_t id = 0, time_ms = 0;
  std::size_t request_id = 0;  // its hash (request_id_hash()): the reader checks the table holds this row
  std::string_view session_key, session, model, arm, key_fingerprint, mode, survival, recovery;
  std::optional<double> cost;  // input_cost_usd; none: NULL (SQLite stores a NaN as NULL too)
  bool usage_present = false, fail_open = false, recalled = false;
  std::int64_t tokens_before = 0, tokens_after = 0, prompt = 0, completion = 0, cached_read = 0, cache_write = 0,
               rereads = 0, recall_rounds = 0, context_errors = 0, status = 0, wait_ms = 0;
};

// The rows of one commit, their texts in one block (a row's strings would
// be allocated by the writer and freed by the reader, one by one).
struct FedChunk {
  std::unique_ptr<char[]> text;
  std::vector<FedRow> rows;  // consecutive ids, ascending
};

std::size_t request_id_hash(std::string_view request_id);
// `rows` as the table holds them, the last under `last_id`.
FedChunk fed_chunk(std::span<const LedgerRow> rows, std::int64_t last_id);

class RowFeed {
 public:
  static constexpr std::size_t kMaxRows = 131'072;
  static constexpr std::chrono::seconds kIdle{60};

  // The writer: `rows` were committed in one transaction, with the ids up
  // to `last_id` (SQLite gives a transaction's rows consecutive ids).
  void committed(std::span<const LedgerRow> rows, std::int64_t last_id);
  // The reader: the rows kept since the last take, in id order; from now
  // on rows are kept (for kIdle).
  std::vector<FedChunk> take();

 private:
  std::mutex mutex_;
  std::vector<FedChunk> chunks_;
  std::size_t rows_ = 0;
  std::optional<std::chrono::steady_clock::time_point> taken_;
};

}  // namespace td::ledger
