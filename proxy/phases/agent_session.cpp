#include "proxy/phases/agent_session.hpp"

namespace td::proxy {
namespace {

// An id as agents write them (UUIDs, hex): anything else is not taken, so a
// stray value never becomes a session key or a ledger column.
bool plausible_id(std::string_view id) {
  if (id.empty() || id.size() > 128) return false;
  for (char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                    c == '_' || c == '.' || c == ':';
    if (!ok) return false;
  }
  return true;
}

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The raw (still escaped) string value of the first `"key":` in `text`, or
// nullopt-like "" with found=false. A `"key"` followed by `:` is an object
// key in valid JSON: inside a string its quotes would be escaped.
bool string_value(std::string_view text, std::string_view quoted_key, std::string_view& out) {
  for (std::size_t from = 0;;) {
    const std::size_t hit = text.find(quoted_key, from);
    if (hit == std::string_view::npos) return false;
    std::size_t i = hit + quoted_key.size();
    while (i < text.size() && is_ws(text[i])) ++i;
    if (i < text.size() && text[i] == ':') {
      ++i;
      while (i < text.size() && is_ws(text[i])) ++i;
      if (i >= text.size() || text[i] != '"') return false;
      const std::size_t start = ++i;
      for (; i < text.size(); ++i) {
        if (text[i] == '\\') {
          ++i;
        } else if (text[i] == '"') {
          out = text.substr(start, i - start);
          return true;
        }
      }
      return false;
    }
    from = hit + 1;
  }
}

// Claude Code's metadata.user_id, as its raw JSON string value.
std::string claude_code_session(std::string_view user_id) {
  // Newer: a JSON text in the string, its quotes escaped:
  // {\"device_id\":\"…\",\"account_uuid\":\"…\",\"session_id\":\"<uuid>\"}
  static constexpr std::string_view kKey = "\\\"session_id\\\"";
  if (const std::size_t k = user_id.find(kKey); k != std::string_view::npos) {
    std::size_t i = k + kKey.size();
    while (i < user_id.size() && (is_ws(user_id[i]) || user_id[i] == ':')) ++i;
    if (!user_id.substr(i).starts_with("\\\"")) return {};
    i += 2;
    const std::size_t end = user_id.find('\\', i);
    if (end == std::string_view::npos) return {};
    const std::string_view id = user_id.substr(i, end - i);
    return plausible_id(id) ? std::string(id) : std::string();
  }
  // Older: user_<hash>_account_<uuid or "">_session_<uuid>.
  static constexpr std::string_view kSession = "_session_";
  if (!user_id.starts_with("user_")) return {};
  const std::size_t s = user_id.rfind(kSession);
  if (s == std::string_view::npos) return {};
  const std::string_view id = user_id.substr(s + kSession.size());
  return plausible_id(id) ? std::string(id) : std::string();
}

}  // namespace

std::string session_from_head(const HeaderMap& headers) {
  if (std::string_view own = headers.get("x-tokendiet-session"); !own.empty()) return std::string(own);
  // Claude Code (2.1): the header, the same id as in the body's metadata.
  if (std::string_view id = headers.get("x-claude-code-session-id"); plausible_id(id)) return std::string(id);
  // Codex CLI: its thread's id in every request of the thread (0.171 sends
  // session-id; older versions session_id and conversation_id).
  for (std::string_view name : {"session-id", "session_id", "conversation_id"})
    if (std::string_view id = headers.get(name); plausible_id(id)) return std::string(id);
  return {};
}

std::string session_from_body(std::string_view body) {
  constexpr std::size_t kEnd = 4096;
  const std::string_view tail = body.size() > 2 * kEnd ? body.substr(body.size() - kEnd) : body;
  std::string_view user_id;
  if (!string_value(tail, "\"user_id\"", user_id)) return {};
  return claude_code_session(user_id);
}

}  // namespace td::proxy
