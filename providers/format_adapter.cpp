#include "providers/format_adapter.hpp"

#include <stdexcept>

namespace td::providers {

namespace {

// Indexed by the Api's value; each entry checked against its index once.
const FormatAdapter* const* by_api() {
  static const FormatAdapter* const table[] = {&openai_chat_adapter(), &openai_responses_adapter(), &gemini_adapter(),
                                               &anthropic_adapter()};
  static const bool checked = [] {
    for (std::size_t i = 0; i < std::size(table); ++i)
      if (static_cast<std::size_t>(table[i]->api) != i) throw std::logic_error("format adapter table out of order");
    return true;
  }();
  (void)checked;
  return table;
}

}  // namespace

const FormatAdapter& adapter(Api api) { return *by_api()[static_cast<std::size_t>(api)]; }

}  // namespace td::providers
