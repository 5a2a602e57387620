// The provider-neutral view of a chat request's message array.
//
// providers/ parses a request body into a Conversation and writes edits back
// by splicing: every Message and Part remembers where it came from (`origin`),
// so the writer copies the original bytes of everything not marked edited and
// re-renders only what a strategy changed. Strategies in pruning/ see nothing
// else of the provider's JSON: they read and edit this view only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pruning/shared_text.hpp"

namespace td::pruning {

enum class Role : std::uint8_t { System, User, Assistant, Tool };

enum class PartKind : std::uint8_t {
  Text,        // plain text (system prompt, user text, assistant text)
  ToolCall,    // a call the assistant made: id, name, text = arguments (JSON text)
  ToolResult,  // the answer to call `id`: text = content flattened to text
  Thinking,    // reasoning/thinking; `signature` set when the provider wants it back
  Opaque,      // images, files, redacted thinking, unknown blocks: never edited
};

inline constexpr std::uint32_t kNewOrigin = 0xFFFFFFFFu;

// A part's text hash as pruning/text_hash.hpp computed it, kept until
// set_text() replaces the text (see there).
struct TextDigest {
  std::uint64_t lo = 0, hi = 0;
  std::uint64_t size = 0;  // of the text hashed: a direct write that changed it is caught
  bool valid = false;
};

struct Part {
  PartKind kind = PartKind::Text;
  SharedText text;                    // see PartKind; shared by the part's copies
  SharedText id;                      // ToolCall: call id; ToolResult: the call id it answers
  std::string name;                   // ToolCall: tool name; ToolResult: tool name where known
  SharedText signature;               // Thinking: Gemini thoughtSignature / Anthropic signature
  std::uint64_t opaque_bytes = 0;     // size of an Opaque part's original JSON
  std::uint32_t origin = kNewOrigin;  // index of the part in the original message
  bool editable = true;               // false: the adapter cannot re-render it faithfully
  bool edited = false;                // set through set_text(); the writer re-renders it
  bool is_error = false;              // ToolResult the provider flagged as an error
  // The last part of the prefix that stays as sent until the stale frontier
  // moves again (pipeline.hpp): a provider that caches only at explicit
  // breakpoints (Anthropic) marks it, so a step finds that prefix cached.
  // 1: before the frontier the previous request left; 2: before the first
  // read still held there (a step that releases it changes the history
  // from it on), given a breakpoint only when two are free. 0: none.
  std::uint8_t cache_anchor = 0;
  mutable TextDigest digest;  // of `text`, filled on first use by text_hash()
  // The texts a cut of this part hid, whose recall handles its notices name
  // (hide_text(); docs/design.md §Recall): the pipeline hands them to the
  // recall loop, which answers from them. Shared, never copied.
  std::vector<std::shared_ptr<const std::string>> hidden;
};

struct Message {
  Role role = Role::User;
  std::vector<Part> parts;
  std::string name;                   // OpenAI's optional participant `name` (billed: see tokenizer/message_count.hpp)
  std::uint32_t origin = kNewOrigin;  // index of the message in the original body
  bool changed = false;               // parts edited, added or removed
  bool removed = false;               // drop the whole message
  bool system_field = false;          // Anthropic `system` / Gemini `systemInstruction`
  bool cache_protected = false;       // at or before the client's newest cache breakpoint
};

struct Conversation {
  std::vector<Message> messages;
  std::string model;
  // Bytes of everything outside the messages that is still sent (tool
  // definitions, generation config): counted, never edited.
  std::uint64_t fixed_overhead_bytes = 0;
  std::string fixed_overhead_text;  // tool schemas as text, for exact counting
};

// Edits go through these so the writer knows what to re-render (and so a
// part's cached text hash is never stale: write `text` directly only while
// building a part, before anything hashed it).
inline void set_text(Message& m, Part& p, std::string text) {
  p.text = std::move(text);
  p.digest.valid = false;
  p.edited = true;
  m.changed = true;
}
// set_text() for a cut whose notices name what it hid: the old text is kept
// in `hidden` (shared, not copied) for the recall loop, with `also` (texts
// inside it a notice names on their own: a tool call's long strings).
inline void hide_text(Message& m, Part& p, std::string text,
                      std::vector<std::shared_ptr<const std::string>> also = {}) {
  std::shared_ptr<const std::string> old = p.text.share();  // the same block, not a copy
  p.hidden.push_back(old ? std::move(old) : std::make_shared<const std::string>());
  for (auto& t : also) p.hidden.push_back(std::move(t));
  set_text(m, p, std::move(text));
}
// hide_text() when the cut's notices name what it hid (`recall`), else set_text().
inline void cut_text(Message& m, Part& p, std::string text, bool recall) {
  if (recall)
    hide_text(m, p, std::move(text));
  else
    set_text(m, p, std::move(text));
}
inline void remove_message(Message& m) {
  m.removed = true;
  m.changed = true;
}

}  // namespace td::pruning
