#include "pruning/client_compaction.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace td::pruning {

namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

bool contains_ignoring_case(std::string_view haystack, std::string_view needle) {
  if (needle.empty()) return false;
  return std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(),
                     [](char a, char b) { return lower(a) == lower(b); }) != haystack.end();
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
  return std::any_of(conv.fixed_overhead_text.begin(), conv.fixed_overhead_text.end(), [](char c) {
    return c != '[' && c != ']' && c != '\n' && c != ' ' && c != '\t' && c != '\r';
  });
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
