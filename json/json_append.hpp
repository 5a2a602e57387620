// Appending elements to a top-level array member of a JSON object, as a byte
// splice: every existing byte keeps its place, so the prefix a provider
// caches is unchanged up to the insertion (docs/design.md §Splicing).
#pragma once

#include <string>
#include <string_view>

namespace td::json {

// Inserts `elements` (one or more JSON values separated by commas) at the end
// of the array that is the value of top-level member `key` of the object in
// `body`. A missing (or null) member is created as `"key":[elements]` after
// the last member. False, with `body` untouched, when `body` is not an object
// or the member is neither an array nor null.
bool append_to_array_member(std::string& body, std::string_view key, std::string_view elements);

}  // namespace td::json
