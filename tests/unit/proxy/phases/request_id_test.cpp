#include <doctest/doctest.h>

#include "proxy/phases/request_context.hpp"

using td::proxy::first_request_id;

TEST_CASE("request ids: one process's range starts 1,024 per millisecond after the last's, under 2^53") {
  using namespace std::chrono;
  const system_clock::time_point t{milliseconds(1'790'000'000'000)};  // 2026
  CHECK(first_request_id(t + milliseconds(1)) - first_request_id(t) == 1024);
  const system_clock::time_point y2200{seconds(7'258'118'400)};
  CHECK(first_request_id(y2200) < (std::uint64_t{1} << 53));
}
