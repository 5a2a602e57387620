#include "providers/recall_tool.hpp"

#include <rapidjson/document.h>

#include <algorithm>
#include <charconv>
#include <vector>
#include <string.h>  // memmem

#include "json/json_append.hpp"
#include "json/json_scan.hpp"
#include "json/json_strings.hpp"
#include "providers/format_adapter.hpp"
#include "pruning/json_nesting.hpp"

namespace td::providers {
namespace {

constexpr std::string_view kDescription =
    "Reads back what tokendiet hid from earlier in this conversation. A notice names it: "
    "t1a2b3c4d:41-160 (lines 41-160 of that text), t1a2b3c4d (all of it) or td-... (an archived output). "
    "Pass the name as id.";

constexpr std::string_view kSchema =
    R"({"type":"object","properties":{"id":{"type":"string","description":"the name a notice gives, as written"},)"
    R"("lines":{"type":"string","description":"optional line range A-B, 1-based and inclusive"}},"required":["id"]})";

std::string definition(Api api) {
  std::string name_desc = "\"name\":\"";
  name_desc.append(kRecallToolName).append("\",\"description\":");
  json::append_json_string(name_desc, kDescription);
  return adapter(api).recall_tool(name_desc, kSchema);
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
  const std::string_view tools = json::top_level_value(body, "tools");
  const std::string quoted = "\"" + std::string(kRecallToolName) + "\"";
  if (!tools.empty() && memmem(tools.data(), tools.size(), quoted.data(), quoted.size())) return false;
  return json::append_to_array_member(body, "tools", definition(api));
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
  std::string_view r;  // the line range: "lines", else the id's ":A-B" (a notice's "t1a2b3c4d:41-160")
  auto lines = d.FindMember("lines");
  if (lines != d.MemberEnd() && lines->value.IsString()) r = {lines->value.GetString(), lines->value.GetStringLength()};
  std::string in_id;
  if (const auto colon = a.id.find(':'); colon != std::string::npos) {
    in_id = a.id.substr(colon + 1);
    a.id.resize(colon);
    if (r.empty()) r = in_id;
  }
  if (!r.empty()) {
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

std::string recall_result_text(const RecallArgs& args, const std::optional<std::string>& archived,
                               std::size_t max_bytes, std::pair<std::uint32_t, std::uint32_t>* shown) {
  if (shown) *shown = {0, 0};
  if (!archived) return "tokendiet_recall: nothing hidden or archived is known as " + args.id + " (unknown id)";
  const std::string_view text = *archived;
  // Line starts: lines are 1-based, a last line without '\n' counts.
  std::vector<std::size_t> starts{0};
  for (std::size_t p = text.find('\n'); p != std::string_view::npos; p = text.find('\n', p + 1))
    if (p + 1 < text.size()) starts.push_back(p + 1);
  const std::size_t lines = text.empty() ? 0 : starts.size();
  const std::size_t first = args.first_line ? args.first_line : 1;
  const std::size_t last = args.last_line ? std::min<std::size_t>(args.last_line, lines) : lines;
  if (args.first_line != 0 && (first > lines || first > last))
    return "tokendiet_recall: " + args.id + " has " + std::to_string(lines) + " lines; lines " +
           std::to_string(args.first_line) + "-" + (args.last_line ? std::to_string(args.last_line) : "") +
           " are empty";
  if (lines == 0) return std::string(text);
  const std::size_t begin = starts[first - 1];
  const std::size_t end = last < lines ? starts[last] : text.size();
  const std::string_view part = text.substr(begin, end - begin);
  if (part.size() <= max_bytes) {
    if (shown) *shown = {std::uint32_t(first), std::uint32_t(last)};
    return std::string(part);
  }
  // Cut at the last line end that fits, and say where the rest is.
  std::string out;
  const std::size_t nl = max_bytes ? part.rfind('\n', max_bytes - 1) : std::string_view::npos;
  std::size_t shown_last = first;  // the last line shown whole (or, when none fits, the line shown in part)
  if (nl != std::string_view::npos) {
    out.assign(part.substr(0, nl + 1));
    shown_last = first + static_cast<std::size_t>(std::count(out.begin(), out.end(), '\n')) - 1;
    if (shown) *shown = {std::uint32_t(first), std::uint32_t(shown_last)};
    out += "[tokendiet_recall: lines " + std::to_string(first) + "-" + std::to_string(shown_last) + " of " +
           std::to_string(lines) + " shown";
  } else {
    std::size_t cut = max_bytes;
    while (cut > 0 && (static_cast<unsigned char>(part[cut]) & 0xC0) == 0x80) --cut;  // a whole UTF-8 character
    const std::size_t line_end = part.find('\n');
    const std::size_t line_bytes = line_end == std::string_view::npos ? part.size() : line_end;
    out.assign(part.substr(0, cut));
    out += "\n[tokendiet_recall: line " + std::to_string(first) + " of " + std::to_string(lines) +
           " shown in part (its first " + std::to_string(cut) + " of " + std::to_string(line_bytes) + " bytes)";
  }
  out += "; an answer holds at most " + std::to_string(max_bytes) + " bytes";
  if (shown_last < last)
    out += ": ask for lines " + std::to_string(shown_last + 1) + "-" + std::to_string(last) + " next";
  out += "]";
  return out;
}

}  // namespace td::providers
