// Chat request bodies of the four wire formats <-> pruning::Conversation.
//
// parse() reads a body into the neutral view and remembers where every
// message and part sits in the original bytes; write() splices the view's
// edits back: unchanged messages are copied byte for byte, an edited part has
// only its text value re-rendered, a restructured message is rebuilt from its
// original pieces (unknown fields kept, in their order), removed messages are
// cut with their separators, and new messages are rendered in the provider's
// form. A conversation with no edits writes nothing: the caller forwards the
// original bytes. Neither function throws on bad input; errors are values.
// The wire format is providers/api.hpp's Api (one enum for requests and usage).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "providers/api.hpp"
#include "json/json_spans.hpp"
#include "json/splice.hpp"
#include "pruning/conversation.hpp"

namespace td::providers {

// Where a part's text lives in the original body, and how an edit is written.
struct TextSlot {
  enum class Kind : std::uint8_t {
    None,        // not editable
    String,      // [begin,end) is any JSON value; the edit writes a JSON string
    JsonObject,  // [begin,end) is a JSON object (tool input/args); the edit must be one
    WrapOutput,  // [begin,end) is an object; the edit writes {"output": "<text>"}
    Insert,      // begin == end is the object's closing '}': the edit adds `"key": "<text>"`
  };
  Kind kind = Kind::None;
  std::uint32_t begin = 0, end = 0;
  const char* key = nullptr;  // Insert: the member to add
  bool object_empty = false;  // Insert: the object has no members yet (no comma)
};

// Format-specific tag: which member of the message a part came from.
enum class Field : std::uint8_t {
  Content,           // content / parts / a content block
  ToolCalls,         // OpenAI tool_calls element
  FunctionCall,      // OpenAI legacy function_call
  ReasoningContent,  // DeepSeek reasoning_content
  Reasoning,         // OpenRouter-style reasoning
  Item,              // OpenAI Responses: the whole input item
};

struct PartSource {
  std::uint32_t elem = json::kNone;  // the JSON element holding the part (block, tool call,
                                     // content part), kNone when the part is a bare value
  Field field = Field::Content;
  TextSlot slot;
};

struct MessageSource {
  std::uint32_t node = json::kNone;  // the message's JSON value (object, or the system value)
  std::uint32_t first_part = 0;      // into ParsedRequest::parts
  std::uint32_t part_count = 0;
  bool system_field = false;  // Anthropic system / Gemini systemInstruction / instructions
};

// A message element's remembered view, and the memo of them
// (providers/parsed_message_memo.hpp).
struct ParsedMessage;
class ParsedMessageMemo;

// A message element the Document took from the parsed-message memo instead
// of parsing it, by its first byte.
struct SplicedMessage {
  std::uint32_t begin = 0;
  std::uint64_t key_lo = 0, key_hi = 0;  // the hash of its bytes (the memo's key)
  std::shared_ptr<const ParsedMessage> view;
};

struct ParsedRequest {
  Api format = Api::openai_chat;  // the wire format
  // Messages resent from earlier requests take their view from this memo
  // (providers/parsed_message_memo.hpp); null parses every one.
  ParsedMessageMemo* memo = nullptr;
  pruning::Conversation conversation;  // Message::origin indexes `messages` below
  std::string model;                   // also conversation.model
  bool stream = false;
  // The provider holds the earlier turns (OpenAI Responses'
  // previous_response_id): the client will not resend what a cut hides, so
  // nothing of it could be recalled, and the diet cuts nothing
  // (docs/design.md §Recall).
  bool server_history = false;

  // The writer's map of the original body.
  json::Document doc;
  std::vector<MessageSource> messages;
  std::vector<PartSource> parts;
  std::uint32_t array = json::kNone;    // messages / contents / input (Responses: maybe a string)
  std::vector<SplicedMessage> spliced;  // ascending by `begin`
  std::uint32_t system = json::kNone;   // the system field's value node, if any
};

struct ParseOutcome {
  std::optional<ParsedRequest> request;  // empty: not parsed (forward untouched)
  std::string error;
};

struct WriteOutcome {
  bool ok = false;       // false: forward the original (error says why)
  bool changed = false;  // false: nothing to write, forward the original bytes
  std::string body;      // the new body when changed
  std::string error;
};

// Parses a request body of the given format. `model` and `stream` are filled
// from the body where the format carries them there (Gemini: from the path).
// `memo`: see ParsedRequest::memo (the result is the same either way).
ParseOutcome parse(Api format, std::string_view body, ParsedMessageMemo* memo = nullptr);

// How many cache breakpoints of tokendiet's the body takes on parts marked
// cache_anchor (the format's cache rule, providers/format_adapter.hpp).
std::uint32_t cache_anchors_free(const ParsedRequest& request);

// Writes the conversation's edits back into `original` (the bytes parse() saw).
WriteOutcome write(const ParsedRequest& request, std::string_view original);
// The same with `extra` edits of `original` (outside the message array and
// system field: generation_settings_edits()) spliced in the same pass; with
// no message edits, `extra` alone.
WriteOutcome write(const ParsedRequest& request, std::string_view original, std::vector<json::Edit> extra);

}  // namespace td::providers
