#include "pruning/client_compaction.hpp"

#include <algorithm>
#include <functional>
#include <string>

namespace td::pruning {

namespace {

// ASCII case folding (the patterns' "case ignored"; what std::tolower does in
// the C locale, without a call per byte).
char fold(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }
struct FoldedHash {
  std::size_t operator()(char c) const { return static_cast<unsigned char>(fold(c)); }
};
struct FoldedEqual {
  bool operator()(char a, char b) const { return fold(a) == fold(b); }
};

// Boyer-Moore-Horspool: a long message is skipped through a pattern's length
// at a time, not compared at every byte (a 31 MB message took seconds).
bool contains_ignoring_case(std::string_view haystack, std::string_view needle) {
  if (needle.empty()) return false;
  const std::boyer_moore_horspool_searcher searcher(needle.begin(), needle.end(), FoldedHash{}, FoldedEqual{});
  return std::search(haystack.begin(), haystack.end(), searcher) != haystack.end();
}

// The first pattern found in any text part of `m`.
std::string_view first_match(const Message& m, const std::vector<std::string>& patterns) {
  for (const std::string& pattern : patterns)
    for (const Part& p : m.parts)
      if (p.kind == PartKind::Text && contains_ignoring_case(p.text, pattern)) return pattern;
  return {};
}

}  // namespace

bool carries_tools(const Conversation& conv) {
  return std::any_of(conv.fixed_overhead_text.begin(), conv.fixed_overhead_text.end(),
                     [](char c) { return c != '[' && c != ']' && c != '\n' && c != ' ' && c != '\t' && c != '\r'; });
}

std::string_view client_compaction(const Conversation& conv, const Profile& profile) {
  if (!profile.client_compaction) return {};
  // The newest message still sent; a compaction prompt is the turn's question.
  auto newest = std::find_if(conv.messages.rbegin(), conv.messages.rend(),
                             [](const Message& m) { return !m.removed && m.role != Role::System; });
  if (newest == conv.messages.rend() || newest->role != Role::User) return {};
  if (std::string_view hit = first_match(*newest, profile.client_compaction_patterns); !hit.empty()) return hit;
  if (carries_tools(conv)) return {};
  return first_match(*newest, profile.client_compaction_patterns_without_tools);
}

}  // namespace td::pruning
