// Recalled lines stay (docs/design.md §Recall, "Recalled lines stay"): the
// line ranges of hidden texts that the model of a session read back with
// tokendiet_recall. A recall answer lives only in its round (the client
// never sees the loop, so its next request does not hold it); an agent that
// keeps quoting a file it read would recall the same lines again and again.
// So the proxy remembers, per session, which `handle:first-last` ranges were
// answered, and the diet keeps those lines visible in the cut of that text
// (stale_tool_outputs, through SnipOptions::keep_ranges): the cut's form
// changes once, and the next quote needs no round.
//
// Pure data: the proxy's session memory keeps it (quota/session_store.hpp,
// shared_state/), `tokendiet replay` its own per trajectory; the pipeline
// reads it as an input (PipelineSettings::recalled) and its fingerprint goes
// into the plan's and the snips' memo keys. Bounded: the first kMaxAdds
// ranges a session recalled count, later ones are refused, so a form once
// widened never narrows again (a narrowing would break the prompt cache once
// more for nothing the model asked).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace td::pruning {

class RecalledLines {
 public:
  static constexpr std::size_t kMaxAdds = 64;  // ranges a session may make stick
  static constexpr std::uint32_t kMaxLine = 1u << 24;

  struct Range {
    std::uint32_t handle = 0;           // the handle's 32 bits (recall_handle(): "t" + 8 hex digits)
    std::uint32_t first = 0, last = 0;  // 1-based, inclusive
    // The stale frontier (turns) of the request whose answer recalled it:
    // the range applies once the frontier has moved past it, at the
    // session's next step, whose rewrite of the cached prefix it shares
    // (applying(); docs/design.md §Recall).
    std::uint32_t since = 0;
    bool operator==(const Range&) const = default;
  };

  // The handle's bits of "t1a2b3c4d"; nullopt for anything else (a "td-" id).
  static std::optional<std::uint32_t> handle_bits(std::string_view handle);

  // Lines first..last of the text named `handle` were answered. False (and
  // nothing kept): not a handle, an empty range, or kMaxAdds reached.
  bool add(std::string_view handle, std::uint32_t first, std::uint32_t last, std::uint32_t since = 0);
  bool add(const Range& r);

  // Those that apply at a frontier of `frontier_turns` turns (since <
  // frontier_turns), their `since` set to 0.
  RecalledLines applying(std::uint32_t frontier_turns) const;

  // The ranges of `handle_bits`, ascending and merged (touching ones joined;
  // `since` not looked at).
  std::vector<std::pair<std::size_t, std::size_t>> of(std::uint32_t handle_bits) const;
  bool empty() const { return ranges_.empty(); }
  std::size_t adds() const { return adds_; }
  const std::vector<Range>& ranges() const { return ranges_; }
  // A hash of the ranges (0 when empty): what a memo key takes.
  std::uint64_t fingerprint() const;
  // The hash of the ranges of one handle (0 when it has none).
  std::uint64_t fingerprint(std::uint32_t handle_bits) const;

  // One add as a word, "t1a2b3c4d:41-160@12" (the form the shared store
  // keeps, in order; "@since" left out when 0), and back.
  static std::string entry(const Range& r);
  static std::optional<Range> parse_entry(std::string_view entry);

  bool operator==(const RecalledLines&) const = default;

 private:
  std::vector<Range> ranges_;  // as added, sorted by (handle, first, since)
  std::size_t adds_ = 0;
};

}  // namespace td::pruning
