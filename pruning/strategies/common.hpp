// Helpers shared by the strategies (internal to pruning/).
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>

#include "pruning/conversation.hpp"
#include <vector>
#include "pruning/tokenizer/hash.hpp"

namespace td::pruning::detail {

inline bool is_system(const Message& m) { return m.role == Role::System || m.system_field; }

inline bool excluded_tool(const std::vector<std::string>& exclude_tools, std::string_view name) {
  return !name.empty() && std::find(exclude_tools.begin(), exclude_tools.end(), name) != exclude_tools.end();
}

// Tool names by call id, learned walking forward: the name of a result is its
// own (where the format carries it) or that of the latest call with its id
// (ids may be reused once answered, so the latest one is the right one).
class ToolNames {
 public:
  // Names are only needed to honour exclude_tools: without any, learn nothing.
  explicit ToolNames(const std::vector<std::string>& exclude_tools) : active_(!exclude_tools.empty()) {}
  void learn(const Message& m) {
    if (!active_) return;
    for (const Part& p : m.parts)
      if (p.kind == PartKind::ToolCall && !p.id.empty()) names_[p.id] = p.name;
  }
  std::string_view of_result(const Part& p) const {
    if (!p.name.empty()) return p.name;
    auto it = names_.find(p.id);
    return it == names_.end() ? std::string_view{} : std::string_view{it->second};
  }

 private:
  bool active_;
  std::unordered_map<std::string, std::string> names_;
};

// A fast hash for maps keyed by whole texts (tool outputs can be 100 KB).
struct TextHash {
  std::size_t operator()(std::string_view s) const {
    return static_cast<std::size_t>(tok::hash_bytes(s.data(), s.size()));
  }
};

}  // namespace td::pruning::detail
