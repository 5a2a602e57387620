// What a replayed model asks `tokendiet_recall` for when the request as sent
// lacks lines it uses, and what the proxy answers (docs/benchmarks.md
// §Charged losses, "The recall call"). The rule:
//   - a lost item (copied line or reference) lies in a line of the output it
//     was first seen in; the model finds that line's gap in a notice naming
//     the output's handle and a line range (`[… t1a2b3c4d:40-380 hidden]`)
//     and asks for the lines it needs plus `margin_lines` on each side,
//     within the gap: several lost lines in one gap make one call covering
//     them all;
//   - a notice naming the handle with no range (an identical output's
//     reference) makes it ask for the whole text;
//   - an answer cut at its bound that lacks a line still needed makes it ask
//     for the rest (the lines the answer's closing notice names), one wave
//     of calls later;
//   - an output no notice of the request names (a fold first changed it, a
//     trim-middle span, the recap) is asked for by its hidden lines, in
//     order, within the bound (hidden_lines()).
// The answer is providers::recall_result_text(), the proxy's own answer to
// such a call, so its size is the size the proxy would send.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace td::cli {

struct RecallAsk {
  std::uint32_t margin_lines = 10;         // lines asked on each side of a needed one
  std::uint64_t max_answer_bytes = 16384;  // recall_max_answer_bytes: one answer's bound
};

struct RecallCall {
  std::uint32_t wave = 0;             // 0: asked at once; k: a follow-up to a cut answer of wave k-1
  std::string answer;                 // the tool result, as the proxy would write it
  std::uint32_t first = 0, last = 0;  // the lines it shows whole (0: none, or not asked by line)
};

// The calls that get `items` (each lost from the request as sent, whose texts
// are `sent_text`, lines `sent_lines`) back from `text`, the output they were
// first seen in. `shown_by[i]`, resized to items.size(), gets the index of
// the call whose answer holds items[i] (SIZE_MAX: none does).
std::vector<RecallCall> recall_calls(std::string_view text, std::string_view sent_text,
                                     const std::unordered_set<std::string_view>& sent_lines,
                                     const std::vector<std::string>& items, const RecallAsk& ask,
                                     std::vector<std::size_t>& shown_by);

// The lines of `output` not among `sent_lines`, in order, cut after the last
// whole line within `max_bytes` (a first line longer than that, in part): the
// answer for an output no notice names by line.
std::string hidden_lines(std::string_view output, const std::unordered_set<std::string_view>& sent_lines,
                         std::size_t max_bytes);

}  // namespace td::cli
