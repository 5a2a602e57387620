// Helpers shared by the strategies (internal to pruning/).
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>

#include "pruning/conversation.hpp"
#include "pruning/profile.hpp"

namespace td::pruning::detail {

inline bool is_system(const Message& m) { return m.role == Role::System || m.system_field; }

inline bool excluded_tool(const Profile& p, std::string_view name) {
  return !name.empty() &&
         std::find(p.exclude_tools.begin(), p.exclude_tools.end(), name) != p.exclude_tools.end();
}

// Tool names by call id, learned walking forward: the name of a result is its
// own (where the format carries it) or that of the latest call with its id
// (ids may be reused once answered, so the latest one is the right one).
class ToolNames {
 public:
  void learn(const Message& m) {
    for (const Part& p : m.parts)
      if (p.kind == PartKind::ToolCall && !p.id.empty()) names_[p.id] = p.name;
  }
  std::string_view of_result(const Part& p) const {
    if (!p.name.empty()) return p.name;
    auto it = names_.find(p.id);
    return it == names_.end() ? std::string_view{} : std::string_view{it->second};
  }

 private:
  std::unordered_map<std::string, std::string> names_;
};

}  // namespace td::pruning::detail
