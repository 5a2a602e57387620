// A line diff with a bound on its work, for near-identical tool outputs
// (strategies/similar_tool_outputs.hpp; docs/design.md §Strategies).
//
// Myers' greedy O((N+M)·D) algorithm ("An O(ND) Difference Algorithm and Its
// Variations", 1986) on the lines left once the common head and tail are
// taken off, stopping once more than `max_edits` lines would have to be
// deleted or inserted: the work is at most (N+M)·max_edits comparisons and
// the memory max_edits² positions, whatever the input. Outputs that far apart
// are not near-identical, and a diff is not what would describe them. Why not
// libdtl: its O(NP) variant has no bound on either (it records a position per
// snake), and the bound is the point here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace td::pruning {

// One run of the edit script: `a` lines [a_begin, a_end) of the old text and
// `b` lines [b_begin, b_end) of the new. same: the two ranges hold the same
// lines; otherwise the old range (maybe empty) is replaced by the new one
// (maybe empty). Runs are ascending, cover both texts, and alternate
// same / changed.
struct DiffRun {
  bool same = false;
  std::uint32_t a_begin = 0, a_end = 0, b_begin = 0, b_end = 0;
};

// The edit script from `a` to `b` (lines compared byte for byte), or nothing
// when it takes more than `max_edits` deleted and inserted lines.
std::optional<std::vector<DiffRun>> line_diff(std::span<const std::string_view> a, std::span<const std::string_view> b,
                                              std::uint32_t max_edits);

}  // namespace td::pruning
