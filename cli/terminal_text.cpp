#include "cli/terminal_text.hpp"

#include <unistd.h>

#include <cstdint>
#include <cstdio>

namespace td::cli {
namespace {

// The valid UTF-8 sequence at s[i]: its length and code point; length 0 when
// invalid (overlongs, surrogates, > U+10FFFF, truncated).
struct Sequence {
  std::size_t length = 0;
  std::uint32_t code = 0;
};

Sequence utf8_at(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const auto cont = [&](std::size_t k) { return i + k < s.size() && (b(k) & 0xC0) == 0x80; };
  const unsigned char c = b(0);
  if (c < 0x80) return {1, c};
  if (c >= 0xC2 && c <= 0xDF && cont(1)) return {2, (c & 0x1Fu) << 6 | (b(1) & 0x3Fu)};
  if (c >= 0xE0 && c <= 0xEF && cont(1) && cont(2)) {
    if ((c == 0xE0 && b(1) < 0xA0) || (c == 0xED && b(1) >= 0xA0)) return {};  // overlong, surrogate
    return {3, (c & 0x0Fu) << 12 | (b(1) & 0x3Fu) << 6 | (b(2) & 0x3Fu)};
  }
  if (c >= 0xF0 && c <= 0xF4 && cont(1) && cont(2) && cont(3)) {
    if ((c == 0xF0 && b(1) < 0x90) || (c == 0xF4 && b(1) >= 0x90)) return {};  // overlong, > U+10FFFF
    return {4, (c & 0x07u) << 18 | (b(1) & 0x3Fu) << 12 | (b(2) & 0x3Fu) << 6 | (b(3) & 0x3Fu)};
  }
  return {};
}

// A code point of two bytes or more that a terminal acts on or that reorders
// the text around it.
bool hidden_control(std::uint32_t code) {
  return (code >= 0x80 && code <= 0x9F) || code == 0x061C || code == 0x200E || code == 0x200F ||
         (code >= 0x202A && code <= 0x202E) || (code >= 0x2066 && code <= 0x2069);
}

void append_escape(std::string& out, const char* format, unsigned value) {
  char buf[8];
  std::snprintf(buf, sizeof buf, format, value);
  out += buf;
}

}  // namespace

std::string terminal_text(std::string_view text, bool keep_lines) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F) {
      out.push_back(text[i++]);
      continue;
    }
    if (c < 0x80) {  // C0 or DEL
      if (keep_lines && (c == '\n' || c == '\t'))
        out.push_back(text[i]);
      else
        append_escape(out, "\\x%02x", c);
      ++i;
      continue;
    }
    const Sequence seq = utf8_at(text, i);
    if (seq.length == 0) {
      append_escape(out, "\\x%02x", c);
      ++i;
    } else if (hidden_control(seq.code)) {
      append_escape(out, "\\u%04x", seq.code);
      i += seq.length;
    } else {
      out.append(text.substr(i, seq.length));
      i += seq.length;
    }
  }
  return out;
}

std::string terminal_json(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  for (std::size_t i = 0; i < json.size();) {
    const auto c = static_cast<unsigned char>(json[i]);
    if ((c >= 0x20 && c < 0x7F) || c == '\n') {
      out.push_back(json[i++]);
      continue;
    }
    if (c < 0x80) {  // a writer escapes C0 in strings; DEL it may not
      append_escape(out, "\\u%04x", c);
      ++i;
      continue;
    }
    const Sequence seq = utf8_at(json, i);
    if (seq.length == 0) {
      out += "\\ufffd";
      ++i;
    } else if (hidden_control(seq.code)) {
      append_escape(out, "\\u%04x", seq.code);
      i += seq.length;
    } else {
      out.append(json.substr(i, seq.length));
      i += seq.length;
    }
  }
  return out;
}

bool stdout_is_terminal() { return isatty(STDOUT_FILENO) == 1; }
bool stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

}  // namespace td::cli
