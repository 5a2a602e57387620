// Re-reads (docs/design.md §Ledger and metrics, outcome fields): the file
// reads a request's newest assistant message made of paths the session had
// already read. What a diet that hides too much costs shows up here: the
// agent reads again what it lost. Counted on every request's history as
// sent (the control arm's too), so the arms compare.
//
// Only the newest assistant message is counted, the one the client added
// since its previous request: summed over a session's requests, each call
// counts once. A read is a call strategies/file_reads.hpp calls one
// (reads_a_file()); its paths are the path-like names in its arguments
// (snip.hpp); it is a re-read when an earlier read (earlier in the history,
// or earlier in the same message) named one of them.
#pragma once

#include <cstdint>

#include "pruning/conversation.hpp"
#include "pruning/memo.hpp"
#include "pruning/strategies/file_reads.hpp"

namespace td::pruning {

// `calls` (may be null): the calls' reads and paths memoized
// (PipelineCaches::calls, docs/design.md §Memos and caches).
std::uint32_t count_rereads(const Conversation& conv, Memo<CallReads>* calls = nullptr);

}  // namespace td::pruning
