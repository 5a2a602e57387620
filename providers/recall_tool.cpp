#include "providers/recall_tool.hpp"

#include <rapidjson/document.h>

#include <charconv>
#include <string.h>  // memmem

#include "providers/json_append.hpp"
#include "providers/json_scan.hpp"
#include "providers/json_strings.hpp"
#include "pruning/json_nesting.hpp"

namespace td::providers {
namespace {

constexpr std::string_view kDescription =
    "Reads back a tool output that tokendiet archived when its task was completed. "
    "A tombstone in the conversation names the id (td-...). Give lines as \"A-B\" "
    "(1-based, inclusive) to read only part of a long output.";

constexpr std::string_view kSchema =
    R"({"type":"object","properties":{"id":{"type":"string","description":"the archive id the tombstone names"},)"
    R"("lines":{"type":"string","description":"optional line range A-B, 1-based and inclusive"}},"required":["id"]})";

std::string definition(Api api) {
  std::string name_desc = "\"name\":\"";
  name_desc.append(kRecallToolName).append("\",\"description\":");
  json::append_json_string(name_desc, kDescription);
  switch (api) {
    case Api::openai_chat:
      return R"({"type":"function","function":{)" + name_desc + ",\"parameters\":" + std::string(kSchema) + "}}";
    case Api::openai_responses:
      return R"({"type":"function",)" + name_desc + ",\"parameters\":" + std::string(kSchema) + "}";
    case Api::anthropic:
      return "{" + name_desc + ",\"input_schema\":" + std::string(kSchema) + "}";
    case Api::gemini:
      return R"({"functionDeclarations":[{)" + name_desc + ",\"parameters\":" + std::string(kSchema) + "}]}";
  }
  return {};
}

bool parse_line(std::string_view s, std::uint32_t& out) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && p == s.data() + s.size();
}

}  // namespace

bool append_recall_tool(Api api, std::string& body) {
  const std::string_view tools = top_level_value(body, "tools");
  const std::string quoted = "\"" + std::string(kRecallToolName) + "\"";
  if (!tools.empty() && memmem(tools.data(), tools.size(), quoted.data(), quoted.size())) return false;
  return append_to_array_member(body, "tools", definition(api));
}

std::optional<RecallArgs> parse_recall_arguments(std::string_view json) {
  if (!pruning::json_nesting_within(json)) return std::nullopt;
  rapidjson::Document d;
  d.Parse(json.data(), json.size());
  if (d.HasParseError() || !d.IsObject()) return std::nullopt;
  auto id = d.FindMember("id");
  if (id == d.MemberEnd() || !id->value.IsString()) return std::nullopt;
  RecallArgs a;
  a.id.assign(id->value.GetString(), id->value.GetStringLength());
  auto lines = d.FindMember("lines");
  if (lines != d.MemberEnd() && lines->value.IsString()) {
    std::string_view r(lines->value.GetString(), lines->value.GetStringLength());
    const auto dash = r.find('-');
    std::uint32_t first = 0, last = 0;
    if (dash == std::string_view::npos) {
      if (parse_line(r, first)) a.first_line = a.last_line = first;
    } else if (parse_line(r.substr(0, dash), first)) {
      a.first_line = first;
      if (parse_line(r.substr(dash + 1), last)) a.last_line = last;
    }
  }
  return a;
}

std::string recall_result_text(const RecallArgs& args, const std::optional<std::string>& archived) {
  if (!archived) return "tokendiet_recall: no archived output with id " + args.id + " (unknown id)";
  if (args.first_line == 0) return *archived;
  // Lines first_line..last_line, 1-based and inclusive (0: to the end).
  std::string_view text = *archived;
  std::size_t line = 1, pos = 0, begin = std::string_view::npos;
  while (pos <= text.size()) {
    if (line == args.first_line) begin = pos;
    const std::size_t nl = text.find('\n', pos);
    if (args.last_line != 0 && line == args.last_line && begin != std::string_view::npos)
      return std::string(text.substr(begin, nl == std::string_view::npos ? std::string_view::npos : nl + 1 - begin));
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
    ++line;
  }
  if (begin == std::string_view::npos || begin == text.size())
    return "tokendiet_recall: " + args.id + " has " + std::to_string(line) + " lines; lines " +
           std::to_string(args.first_line) + "-" + (args.last_line ? std::to_string(args.last_line) : "") +
           " are empty";
  return std::string(text.substr(begin));
}

}  // namespace td::providers
