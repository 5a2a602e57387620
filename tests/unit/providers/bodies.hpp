// Request bodies for the provider tests, serialised the ways clients do:
// compact UTF-8 (JS SDKs: JSON.stringify), pretty, and ASCII-escaped with
// spaces after separators (Python's json.dumps default).
#pragma once

#include <string>
#include <vector>

#include <rapidjson/document.h>

namespace td::providers::test {

enum class Style { Compact, Pretty, PythonAscii };

std::string serialize(const rapidjson::Value& v, Style style);

// A replay trajectory (tests/fixtures/replay/*.json) as OpenAI chat requests:
// request t holds the messages before the t-th assistant message.
struct Trajectory {
  std::string id, model;
  std::vector<std::string> messages;      // each message serialised (Compact)
  std::vector<std::size_t> assistant_at;  // index of each assistant message
};
Trajectory load_trajectory(const std::string& path);
std::string chat_body(const Trajectory& t, std::size_t message_count);

}  // namespace td::providers::test
