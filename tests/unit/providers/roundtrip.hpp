// Round-trip checks shared by the provider tests: parse a body, edit the
// conversation view one way or another, write, and check that exactly the
// intended bytes changed and that the result parses back to the edited view.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "providers/parsed_message_memo.hpp"
#include "providers/request.hpp"

namespace td::providers::test {

// The parsed-message memo the provider tests parse through, one for the test
// binary as the proxy has one for its requests: a body parsed again (by
// another check, another test) takes its resent messages from it.
ParsedMessageMemo& test_memo();

std::string read_file(const std::string& path);
std::string fixture(const std::string& relative);  // under TD_FIXTURES
std::vector<std::string> fixture_files(const std::string& dir, const std::string& suffix);

// Text full of things JSON escaping gets wrong: quotes, backslashes, control
// characters, multi-byte UTF-8, an astral character, U+2028.
extern const std::string kTricky;

// One line per message: "role[S]: kind=text | kind=text", for comparing views.
std::vector<std::string> summary(const pruning::Conversation& c);

// Parse, then no edit writes nothing.
ParsedRequest parse_ok(Api f, std::string_view body, const std::string& label);

// Sets the text of the first editable part of message `index` (if any), writes,
// and checks: only bytes inside that message changed (for a plain string slot:
// exactly the string token), the body parses back, and that part reads back
// the new text. Returns false if the message has no editable part.
bool check_edit(Api f, std::string_view body, ParsedRequest& r, std::size_t index, const std::string& label);

// Removes message `index` and checks the body stays valid and every other
// message keeps its exact bytes.
void check_remove(Api f, std::string_view body, ParsedRequest& r, std::size_t index, const std::string& label);

// Drops the last part of message `index` (when it has two or more) and checks
// the message parses back to the remaining parts.
void check_drop_part(Api f, std::string_view body, ParsedRequest& r, std::size_t index, const std::string& label);

// Appends a new user message (and, for formats with a system field, replaces
// or adds the system prompt) and checks the result parses back to the view.
void check_insert(Api f, std::string_view body, ParsedRequest& r, const std::string& label);

// All of the above on every message (or a sample of `max_messages`).
void check_all(Api f, std::string_view body, const std::string& label, std::size_t max_messages = 64);

}  // namespace td::providers::test
