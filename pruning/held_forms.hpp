// The reads a plan holds whole past the stale frontier (strategies/
// edited_files.hpp; docs/design.md §The stale frontier, Held reads), as the
// frontier's weighing, the loss cap, semantic mode and the recap count a
// request: a held read is sent whole until the frontier reaches its release,
// and in its pruned form from then on.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace td::pruning {

struct HeldForms {
  struct Hold {
    std::uint32_t message = 0;  // the read's message
    // The frontier (a message index: the start of the hold's grid point) from
    // which its pruned form applies; max: not within the plan.
    std::uint32_t released_at = std::numeric_limits<std::uint32_t>::max();
    std::uint64_t extra = 0;  // its tokens as sent while held less its tokens pruned
    // The part indices of the tool results held, ascending, when those are
    // some of its changes (its other cuts apply once it is stale); empty:
    // the message is sent as the client sent it while held.
    std::vector<std::uint32_t> parts;
  };
  std::vector<Hold> holds;  // ascending by message

  bool empty() const { return holds.empty(); }

  // The tokens the holds add to messages [0, x) of a request whose stale
  // frontier is `frontier` (the plan's forms counted before it): those of
  // the reads before both that the frontier has not released.
  std::uint64_t extra(std::uint32_t x, std::uint32_t frontier) const {
    const std::uint32_t end = x < frontier ? x : frontier;
    std::uint64_t sum = 0;
    for (const Hold& h : holds) {
      if (h.message >= end) break;
      if (h.released_at > frontier) sum += h.extra;
    }
    return sum;
  }

  // The first message a request sends otherwise when the frontier moves from
  // message `from` to `to`: a pruned form of `changed` (ascending) that
  // applies from `from` on (a message whose reads `to` still holds does only
  // for its other cuts), or a read held before `from` that `to` releases;
  // `to` when there is none.
  std::uint32_t first_change(const std::vector<std::uint32_t>& changed, std::uint32_t from, std::uint32_t to) const {
    std::uint32_t first = to;
    for (auto it = std::lower_bound(changed.begin(), changed.end(), from); it != changed.end() && *it < to; ++it)
      if (!whole(*it, to)) {
        first = *it;
        break;
      }
    for (const Hold& h : holds) {
      if (h.message >= from) break;
      if (h.released_at > from && h.released_at <= to) return std::min(first, h.message);
    }
    return first;
  }

  // The first read still held at `frontier` (before it); `frontier` when none is.
  std::uint32_t first_held(std::uint32_t frontier) const {
    for (const Hold& h : holds) {
      if (h.message >= frontier) break;
      if (h.released_at > frontier) return h.message;
    }
    return frontier;
  }

  // Whether part `part` of `message` is a read still held at `frontier`.
  bool held(std::uint32_t message, std::uint32_t part, std::uint32_t frontier) const {
    const Hold* h = find(message);
    return h && h->released_at > frontier &&
           (h->parts.empty() || std::binary_search(h->parts.begin(), h->parts.end(), part));
  }

 private:
  const Hold* find(std::uint32_t message) const {
    const auto it = std::lower_bound(holds.begin(), holds.end(), message,
                                     [](const Hold& h, std::uint32_t m) { return h.message < m; });
    return it != holds.end() && it->message == message ? &*it : nullptr;
  }
  // Whether `message` is sent as the client sent it, its reads held at `frontier`.
  bool whole(std::uint32_t message, std::uint32_t frontier) const {
    const Hold* h = find(message);
    return h && h->released_at > frontier && h->parts.empty();
  }
};

}  // namespace td::pruning
