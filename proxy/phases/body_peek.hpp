// A cheap look at a JSON request body for the log line's model and stream
// flag, without parsing it: filters that parse the body overwrite both with
// exact values. Safe because the bytes `"model"` followed by `:` can only be
// an object key in valid JSON (inside a string the quotes would be escaped);
// the first such key with a string value wins, which is the top-level one in
// every provider's request shape. A body over 8 KiB is only looked at in its
// first and last 4 KiB, where SDKs put these keys.
#pragma once

#include <string_view>

namespace td::proxy {

struct BodyPeek {
  std::string_view model;  // "" when not found (or escaped: we do not unescape)
  bool stream = false;     // "stream": true present
};

BodyPeek peek_body(std::string_view body);

}  // namespace td::proxy
