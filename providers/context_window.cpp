#include "providers/context_window.hpp"

#include <array>
#include <charconv>
#include <optional>

namespace td::providers {

namespace {

// The first number at or after `from` (skipping anything else but never a
// line), or nothing.
std::optional<std::uint64_t> number_after(std::string_view s, std::size_t from) {
  std::size_t i = from;
  while (i < s.size() && (s[i] < '0' || s[i] > '9')) {
    if (s[i] == '\n' || i - from > 40) return std::nullopt;
    ++i;
  }
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data() + i, s.data() + s.size(), v);
  if (ec != std::errc{} || end == s.data() + i) return std::nullopt;
  return v;
}

// The number that follows `phrase` in `s`.
std::uint64_t after(std::string_view s, std::string_view phrase) {
  const std::size_t at = s.find(phrase);
  if (at == std::string_view::npos) return 0;
  return number_after(s, at + phrase.size()).value_or(0);
}

}  // namespace

ContextOverflow context_overflow_in(std::string_view m) {
  ContextOverflow o;
  // OpenAI and compatible servers.
  if (std::uint64_t w = after(m, "maximum context length is")) {
    o.window = w;
    o.prompt = after(m, "your messages resulted in");
    if (!o.prompt) {
      o.prompt = after(m, "you requested");
      if (std::uint64_t p = after(m, "tokens (")) {  // "(P in the messages, O in the completion)"
        o.prompt = p;
        o.output = after(m, "in the messages,");
      }
    }
    return o;
  }
  // Anthropic.
  if (std::size_t at = m.find("prompt is too long:"); at != std::string_view::npos) {
    o.prompt = number_after(m, at + 19).value_or(0);
    o.window = after(m, "tokens >");
    return o;
  }
  if (std::size_t at = m.find("exceed context limit:"); at != std::string_view::npos) {
    o.prompt = number_after(m, at + 21).value_or(0);
    const std::size_t plus = m.find('+', at);
    if (plus != std::string_view::npos) o.output = number_after(m, plus + 1).value_or(0);
    const std::size_t gt = m.find('>', at);
    if (gt != std::string_view::npos) o.window = number_after(m, gt + 1).value_or(0);
    return o;
  }
  // Gemini, then Vertex AI.
  if (std::uint64_t n = after(m, "input token count (")) {
    o.prompt = n;
    o.window = after(m, "maximum number of tokens allowed (");
    return o;
  }
  if (std::uint64_t n = after(m, "input token count is")) {
    o.prompt = n;
    o.window = after(m, "only supports up to");
  }
  return o;
}

std::uint64_t known_context_window(std::string_view model) {
  if (const std::size_t slash = model.rfind('/'); slash != std::string_view::npos) model = model.substr(slash + 1);
  // Prefixes, the more specific first. Sources: each provider's model pages.
  struct Row {
    std::string_view prefix;
    std::uint64_t window;
  };
  static constexpr std::array<Row, 19> kRows{{
      {"gpt-4o", 128000},       {"gpt-4.1", 1047576},  {"gpt-4.5", 128000},
      {"gpt-4-turbo", 128000},  {"gpt-4-32k", 32768},  {"gpt-4", 8192},
      {"gpt-3.5-turbo", 16385}, {"gpt-5", 400000},     {"o1-mini", 128000},
      {"o1", 200000},           {"o3", 200000},        {"o4", 200000},
      {"codex-", 200000},       {"claude-", 200000},   {"gemini-1.5-pro", 2097152},
      {"gemini-1.5", 1048576},  {"gemini-2", 1048576}, {"gemini-3", 1048576},
      {"deepseek", 128000},
  }};
  for (const Row& r : kRows)
    if (model.substr(0, r.prefix.size()) == r.prefix) return r.window;
  return 0;
}

}  // namespace td::providers
