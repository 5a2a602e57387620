// Splicing a request's parts back into its body (internal to providers/):
// the ParsedRequest-aware half of the splicing, over the generic byte
// splicing of json/splice.hpp (docs/design.md §Splicing).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "json/splice.hpp"
#include "providers/request.hpp"

namespace td::providers::splice {

// The JSON that writes part `p`'s text into its slot; false (with *err) if
// the slot cannot take an edit or the text does not fit it. The text's
// escaped form comes from r.memo where it holds it (append_json_text()).
bool slot_edit(const ParsedRequest& r, const TextSlot& slot, const pruning::Part& p, json::Edit& out, std::string& err);

// Is the message's part list exactly the parsed one (same parts, same order)?
bool same_structure(const ParsedRequest& r, const pruning::Message& m);

// Edits for the edited parts of a message whose structure is unchanged, and
// its cache breakpoint (the format adapter's cache_anchor_edit).
bool part_edits(const ParsedRequest& r, const pruning::Message& m, std::vector<json::Edit>& out, std::string& err);

// The original JSON element of part `p` (origin valid, elem set) with its
// text edit applied.
bool element_bytes(const ParsedRequest& r, std::string_view body, const pruning::Message& m, const pruning::Part& p,
                   std::string& out, std::string& err);

const PartSource* source_of(const ParsedRequest& r, const pruning::Message& m, const pruning::Part& p);

}  // namespace td::providers::splice
