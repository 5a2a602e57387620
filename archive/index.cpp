#include "archive/index.hpp"

#include <charconv>

namespace td::archive {
namespace {

bool lower_hex(std::string_view s) {
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

template <class T>
bool parse_number(std::string_view s, T& out) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

// The next space-separated field of `rest`, removed from it.
std::string_view take_field(std::string_view& rest) {
  const auto space = rest.find(' ');
  std::string_view field = rest.substr(0, space);
  rest.remove_prefix(space == std::string_view::npos ? rest.size() : space + 1);
  return field;
}

std::optional<IndexLine> parse_line(std::string_view text) {
  IndexLine line;
  std::string_view rest = text;
  if (!parse_number(take_field(rest), line.created)) return std::nullopt;
  line.id = std::string(take_field(rest));
  if (!valid_id(line.id)) return std::nullopt;
  if (!parse_number(take_field(rest), line.tokens)) return std::nullopt;
  if (!parse_number(take_field(rest), line.bytes)) return std::nullopt;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] != '\\') {
      line.task.push_back(rest[i]);
      continue;
    }
    if (++i == rest.size()) return std::nullopt;
    if (rest[i] == 'n')
      line.task.push_back('\n');
    else if (rest[i] == '\\')
      line.task.push_back('\\');
    else
      return std::nullopt;
  }
  return line;
}

}  // namespace

std::string render_index_line(const IndexLine& line) {
  std::string out = std::to_string(line.created) + ' ' + line.id + ' ' + std::to_string(line.tokens) + ' ' +
                    std::to_string(line.bytes) + ' ';
  for (char c : line.task) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else
      out.push_back(c);
  }
  out.push_back('\n');
  return out;
}

std::vector<IndexLine> parse_index(std::string_view text) {
  std::vector<IndexLine> out;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    if (nl == std::string_view::npos) break;  // a last line without its newline was torn
    if (auto line = parse_line(text.substr(0, nl))) out.push_back(std::move(*line));
    text.remove_prefix(nl + 1);
  }
  return out;
}

bool valid_id(std::string_view id) { return id.size() == 3 + 32 && id.starts_with("td-") && lower_hex(id.substr(3)); }

bool valid_key_fp(std::string_view key_fp) { return key_fp.empty() || (key_fp.size() == 16 && lower_hex(key_fp)); }

}  // namespace td::archive
