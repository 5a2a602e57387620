// The tokendiet_recall tool (docs/design.md §Recall): added to a request whose
// notices name what its cuts hid (or tombstones), so the model can read it
// back; the proxy answers its calls itself (proxy/filters/recall_filter.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "providers/api.hpp"

namespace td::providers {

inline constexpr std::string_view kRecallToolName = "tokendiet_recall";

// Appends the tool, in `api`'s own tools shape, after the request's last tool
// (or as a new `tools` member at the end of the body), so the bytes before it
// stay as they were. OpenAI chat: {type:function, function:{name,...}};
// Responses: {type:function, name, ...}; Anthropic: {name, description,
// input_schema}; Gemini: a new {functionDeclarations:[...]} tool. False, with
// `body` untouched, when the body is not an object, its tools are not an
// array, or it already offers the tool.
bool append_recall_tool(Api api, std::string& body);

// A recall call's arguments: the entry id and an optional 1-based inclusive
// line range ("A-B"; "A" alone is one line, "A-" runs to the end).
struct RecallArgs {
  std::string id;
  std::uint32_t first_line = 0;  // 0: the whole text
  std::uint32_t last_line = 0;   // 0: to the end
};
// nullopt when `json` is not an object with a string `id`.
std::optional<RecallArgs> parse_recall_arguments(std::string_view json);

// The tool result the model gets: the archived text (or the asked lines of
// it), or a sentence saying the entry is unknown or the range empty. An
// answer over `max_bytes` is cut at the last whole line that fits and ends
// with a notice naming the lines shown and the range to ask for next
// (docs/design.md §Recall, bounds). `shown` (may be null) gets the lines
// shown whole, 1-based and inclusive ({0, 0}: none).
std::string recall_result_text(const RecallArgs& args, const std::optional<std::string>& archived,
                               std::size_t max_bytes, std::pair<std::uint32_t, std::uint32_t>* shown = nullptr);

}  // namespace td::providers
