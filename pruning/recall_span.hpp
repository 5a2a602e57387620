// What tokendiet_recall answers for a span of messages a notice replaced
// (trim-middle's notice, the recap; docs/design.md §Recall): the messages as
// text, one header line each for its role, tool calls and outputs, so the
// model reads back who said and ran what. Its recall handle
// (pruning/snip.hpp, recall_handle()) is that of this text: a function of the
// messages alone.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "pruning/conversation.hpp"
#include "pruning/memo.hpp"

namespace td::pruning {

// Messages [start, end) of `conv` (system messages and removed ones left
// out), each part under a header line:
//   [user] / [assistant]            its text
//   [call bash call_3]              a tool call's arguments
//   [result call_3]                 a tool output
//   [thinking: not shown]           reasoning (not recallable: design.md §Recall)
//   [part of 1234 bytes: not text]  an image, a file, an unknown block
std::string recall_span_text(const Conversation& conv, std::uint32_t start, std::uint32_t end);

// A span's text and its recall handle.
struct RecallSpan {
  std::shared_ptr<const std::string> text;
  std::string handle;
  std::size_t memo_bytes() const { return sizeof(RecallSpan) + text->size() + handle.size(); }
};

// recall_span_text() of [start, end) and its handle, through `memo` (may be
// null) keyed by everything the text reads of those messages: a recap
// standing over a long session is not rebuilt and hashed again on every
// request (docs/design.md §Memos and caches).
std::shared_ptr<const RecallSpan> recall_span(const Conversation& conv, std::uint32_t start, std::uint32_t end,
                                              Memo<RecallSpan>* memo = nullptr);

}  // namespace td::pruning
