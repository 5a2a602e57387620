#include "json/json_append.hpp"

#include "json/json_scan.hpp"

namespace td::json {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// The last member with `key`: the one a JSON reader keeps.
const JsonMemberView* find_last(const std::vector<JsonMemberView>& ms, std::string_view key) {
  const JsonMemberView* found = nullptr;
  for (const auto& m : ms)
    if (m.key == key) found = &m;
  return found;
}

}  // namespace

bool append_to_array_member(std::string& body, std::string_view key, std::string_view elements) {
  const auto ms = top_level_members(body);
  if (ms.empty()) return false;
  const JsonMemberView* m = find_last(ms, key);
  if (!m) {
    std::string member = ",\"";
    member.append(key).append("\":[").append(elements).append("]");
    body.insert(ms.back().value_end, member);
    return true;
  }
  if (is_json_null(m->value)) {
    body.replace(m->value_pos, m->value.size(), "[" + std::string(elements) + "]");
    return true;
  }
  if (m->value.size() < 2 || m->value.front() != '[' || m->value.back() != ']') return false;
  bool empty = true;
  for (std::size_t i = 1; i + 1 < m->value.size() && empty; ++i) empty = is_blank(m->value[i]);
  // In place, without a copy of `elements`: only the bytes after the array move.
  std::size_t at = m->value_end - 1;  // the array's ']'
  body.reserve(body.size() + elements.size() + 1);
  if (!empty) body.insert(at++, 1, ',');
  body.insert(at, elements);
  return true;
}

}  // namespace td::json
