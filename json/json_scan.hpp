// Finds the top-level members of a JSON object without parsing their values.
//
// Usage lives in one small top-level member ("usage", "usageMetadata") of a
// response that may carry kilobytes of text; this scanner walks the bytes once
// (string- and escape-aware, tracking only nesting depth) and reports where each
// top-level member sits, so only the few bytes we need go to a real parser.
// It is incremental: a body can be fed in arbitrary pieces.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace td::json {

// One top-level member. Offsets are absolute positions in the bytes fed so far.
struct JsonMember {
  std::string key;            // raw key text (escapes not decoded; cut at 64 bytes);
                              // kept only when the scanner captures some keys
  std::size_t sep_pos = 0;    // the '{' or ',' that precedes the member
  std::size_t key_pos = 0;    // the key's opening quote
  std::size_t key_end = 0;    // the key's closing quote
  std::size_t value_pos = 0;  // the value's first byte
  std::size_t value_end = 0;  // one past the value's last byte
  std::string value;          // the value's bytes, if the key was captured
  bool truncated = false;     // capture dropped: the value exceeded the cap
};

class JsonTopLevelScanner {
 public:
  // capture: keys whose value bytes are copied (up to max_capture bytes each).
  // Members not captured are still reported with their offsets when
  // record_all is true.
  explicit JsonTopLevelScanner(std::initializer_list<std::string_view> capture = {}, bool record_all = false,
                               std::size_t max_capture = 1 << 20);

  // Returns how many bytes were consumed: all of them, or up to and including
  // the top-level object's closing brace (what follows is not this object's).
  std::size_t feed(std::string_view bytes);

  const std::vector<JsonMember>& members() const { return members_; }
  // The last member with this key, or nullptr.
  const JsonMember* find(std::string_view key) const;
  // The top-level object closed.
  bool complete() const { return phase_ == Phase::done; }
  // Not a JSON object, or malformed at the top level.
  bool failed() const { return phase_ == Phase::failed; }

 private:
  enum class Phase { start, expect_key, in_key, expect_colon, expect_value, in_value, done, failed };

  void end_member();
  const char* skip_nested(const char* p, const char* end, std::size_t p_offset);
  void drop_capture();
  bool wanted(std::string_view key) const;

  std::vector<std::string> capture_;
  bool record_all_;
  std::size_t max_capture_;

  Phase phase_ = Phase::start;
  int depth_ = 0;
  bool in_string_ = false;
  bool escaped_ = false;
  std::size_t offset_ = 0;
  std::size_t value_end_ = 0;
  std::size_t count_ = 0;  // members seen, captured or not
  bool capturing_ = false;
  JsonMember cur_;
  std::vector<JsonMember> members_;
};

// One-shot view of a complete buffer's top-level members: the views point into
// `json`. Empty when `json` is not an object.
struct JsonMemberView {
  std::string_view key;
  std::size_t sep_pos, key_pos, value_pos, value_end;
  std::string_view value;
};
std::vector<JsonMemberView> top_level_members(std::string_view json);

// The value of a top-level member of a complete object (empty view if absent).
std::string_view top_level_value(std::string_view json, std::string_view key);

// The JSON literal `null` (the way OpenAI marks "no usage on this chunk").
inline bool is_json_null(std::string_view v) { return v == "null"; }

}  // namespace td::json
