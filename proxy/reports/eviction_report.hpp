// The archive filter's report (proxy/filters/archive_filter.hpp): semantic
// eviction's outputs written before the request went (docs/design.md §The
// archive).
#pragma once

#include <string>
#include <vector>

namespace td::proxy {

struct EvictionReport {
  // The tasks whose outputs the request went out without (their titles, in
  // order, once each).
  std::vector<std::string> evicted_tasks{};
  // The archive write that failed instead ("" none): the request then went
  // unpruned of those outputs.
  std::string archive_error{};
};

}  // namespace td::proxy
