#include "pruning/line_diff.hpp"

#include <algorithm>
#include <cstdlib>

namespace td::pruning {

namespace {

// Appends a run, merging it into the previous one of the same kind.
void push(std::vector<DiffRun>& runs, bool same, std::uint32_t a0, std::uint32_t a1, std::uint32_t b0,
          std::uint32_t b1) {
  if (a0 == a1 && b0 == b1) return;
  if (!runs.empty() && runs.back().same == same && runs.back().a_end == a0 && runs.back().b_end == b0) {
    runs.back().a_end = a1;
    runs.back().b_end = b1;
    return;
  }
  runs.push_back(DiffRun{same, a0, a1, b0, b1});
}

}  // namespace

std::optional<std::vector<DiffRun>> line_diff(std::span<const std::string_view> a, std::span<const std::string_view> b,
                                              std::uint32_t max_edits) {
  // The common head and tail cost nothing to find and need no search.
  std::size_t head = 0;
  while (head < a.size() && head < b.size() && a[head] == b[head]) ++head;
  std::size_t tail = 0;
  while (tail < a.size() - head && tail < b.size() - head && a[a.size() - 1 - tail] == b[b.size() - 1 - tail]) ++tail;
  const auto A = a.subspan(head, a.size() - head - tail), B = b.subspan(head, b.size() - head - tail);
  const long n = static_cast<long>(A.size()), m = static_cast<long>(B.size());
  const long max_d = std::min<long>(n + m, max_edits);
  if (std::labs(n - m) > max_d) return std::nullopt;

  // v[k + max_d]: the furthest x on diagonal k; trace[d]: v over k in [-d, d]
  // after step d, for the walk back.
  std::vector<long> v(2 * static_cast<std::size_t>(max_d) + 3, 0);
  std::vector<std::vector<long>> trace;
  const long off = max_d + 1;
  long found = -1;
  for (long d = 0; d <= max_d && found < 0; ++d) {
    for (long k = -d; k <= d; k += 2) {
      long x = (k == -d || (k != d && v[k - 1 + off] < v[k + 1 + off])) ? v[k + 1 + off] : v[k - 1 + off] + 1;
      long y = x - k;
      while (x < n && y < m && A[x] == B[y]) ++x, ++y;
      v[k + off] = x;
      if (x >= n && y >= m) found = d;
    }
    trace.emplace_back(v.begin() + (off - d), v.begin() + (off + d + 1));
  }
  if (found < 0) return std::nullopt;

  // Walk back from (n, m), collecting runs in reverse.
  std::vector<DiffRun> rev;
  long x = n, y = m;
  for (long d = found; d > 0; --d) {
    const std::vector<long>& prev = trace[d - 1];  // k in [-(d-1), d-1] at prev[k + d - 1]
    const long k = x - y;
    const bool down = k == -d || (k != d && prev[k - 1 + d - 1] < prev[k + 1 + d - 1]);
    const long pk = down ? k + 1 : k - 1;
    const long px = prev[pk + d - 1], py = px - pk;
    const long mx = down ? px : px + 1, my = down ? py + 1 : py;  // after the edit, before the snake
    rev.push_back(DiffRun{true, std::uint32_t(mx), std::uint32_t(x), std::uint32_t(my), std::uint32_t(y)});
    rev.push_back(DiffRun{false, std::uint32_t(px), std::uint32_t(mx), std::uint32_t(py), std::uint32_t(my)});
    x = px;
    y = py;
  }
  rev.push_back(DiffRun{true, 0, std::uint32_t(x), 0, std::uint32_t(y)});

  std::vector<DiffRun> runs;
  const auto h = static_cast<std::uint32_t>(head);
  push(runs, true, 0, h, 0, h);
  for (auto it = rev.rbegin(); it != rev.rend(); ++it)
    push(runs, it->same, it->a_begin + h, it->a_end + h, it->b_begin + h, it->b_end + h);
  push(runs, true, static_cast<std::uint32_t>(a.size() - tail), static_cast<std::uint32_t>(a.size()),
       static_cast<std::uint32_t>(b.size() - tail), static_cast<std::uint32_t>(b.size()));
  return runs;
}

}  // namespace td::pruning
