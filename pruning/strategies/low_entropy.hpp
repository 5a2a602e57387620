// Low-entropy folding of stale tool output (F11; docs/design.md §Strategies).
//
// Removes, from stale tool outputs (before the frontier):
//   - carriage-return redraws: of a line drawn over itself with '\r'
//     (progress bars, spinners) only what was drawn last is kept;
//   - runs of at least `low_entropy_min_run` identical lines: the first is kept,
//     then "[… previous line repeated 41 more times]";
//   - runs of at least `low_entropy_min_run` near-identical lines (equal once digit
//     runs, progress-bar blocks and repeated spaces are masked, and with a
//     letter in them: "Downloading 12%", "Downloading 13%"...): the first
//     and the last are kept, with "[… 38 similar lines folded]" between,
//     naming the paths the hidden lines hold that the kept ones do not
//     ("[… 8 similar lines folded, naming src/rules/L019.py src/rules/L020.py …]");
//     a run hiding more than `low_entropy_names` such paths is not folded
//     (the names are what tells its lines apart);
//   - base64 / hex blobs of at least `low_entropy_blob_min_bytes` bytes in one run
//     (hex: only hex digits; base64: letters of both cases and digits): the
//     first 16 characters are kept, then "[... 4096-byte base64 blob folded ...]".
// Why it is safe: what is dropped repeats what is kept, or is encoded data a
// model cannot read; every fold says how much it hid. Assistant, user and
// system text are never touched, nor results of `exclude_tools`.
// Reports: hits = outputs folded, bytes_saved = bytes removed net of notices.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "pruning/conversation.hpp"
#include "pruning/memo.hpp"
#include "pruning/profile.hpp"
#include "pruning/strategy_options.hpp"
#include "pruning/strategy_stats.hpp"

namespace td::pruning {

// The profile fields it reads (pruning/strategy_options.hpp).
// clang-format off
#define TD_LOW_ENTROPY_OPTIONS(X) \
  X(low_entropy) \
  X(low_entropy_min_run) \
  X(low_entropy_blob_min_bytes) \
  X(low_entropy_names) \
  X(exclude_tools) \
  X(recall)
// clang-format on
TD_STRATEGY_OPTIONS(LowEntropyOptions, TD_LOW_ENTROPY_OPTIONS);

// `folds` (may be null) remembers each output's folded form.
StrategyStats low_entropy(Conversation& conv, const LowEntropyOptions& opt, std::uint32_t limit,
                          Memo<std::string>* folds = nullptr);

// The folding itself (exposed for tests): `text` folded, or unchanged; with
// `recall`, each fold's notice names `text`'s handle and the lines it hid
// (pruning/snip.hpp, recall_ref()).
std::string fold_text(std::string_view text, std::uint32_t min_run, std::uint64_t blob_min_bytes,
                      std::uint32_t max_names = 16, bool recall = false);

}  // namespace td::pruning
