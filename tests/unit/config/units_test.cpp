#include <doctest/doctest.h>

#include "config/units.hpp"

using namespace td::config;

TEST_CASE("durations: bare milliseconds and units") {
  CHECK(parse_duration_ms("1500").value == 1500);
  CHECK(parse_duration_ms("500ms").value == 500);
  CHECK(parse_duration_ms("30s").value == 30'000);
  CHECK(parse_duration_ms("5m").value == 300'000);
  CHECK(parse_duration_ms("1h").value == 3'600'000);
  CHECK(parse_duration_ms("1.5s").value == 1500);
  CHECK(parse_duration_ms("1m30s").value == 90'000);
  CHECK(parse_duration_ms("1h 30m").value == 5'400'000);
  CHECK(parse_duration_ms("10 S").value == 10'000);
  CHECK(parse_duration_ms("0").value == 0);
}

TEST_CASE("durations: what is refused, and why") {
  CHECK(parse_duration_ms("").error.find("empty") != std::string::npos);
  CHECK(parse_duration_ms("fast").error.find("expected a number") != std::string::npos);
  CHECK(parse_duration_ms("-5s").error.find("negative") != std::string::npos);
  CHECK(parse_duration_ms("5 days").error.find("unknown unit 'days'") != std::string::npos);
  CHECK(parse_duration_ms("1.5").error.find("a unit is needed") != std::string::npos);
  CHECK(parse_duration_ms("1m30").error.find("a unit is needed") != std::string::npos);
  CHECK(parse_duration_ms("0.5ms").error.find("whole number of ms") != std::string::npos);
  CHECK(parse_duration_ms("1..5s").error.find("expected a number") != std::string::npos);
  CHECK(parse_duration_ms("99999999999999999999999h").error.find("too large") != std::string::npos);
}

TEST_CASE("sizes: bytes, decimal and binary units") {
  CHECK(parse_size_bytes("4096").value == 4096);
  CHECK(parse_size_bytes("32MiB").value == 32ull << 20);
  CHECK(parse_size_bytes("64KiB").value == 64ull << 10);
  CHECK(parse_size_bytes("1GiB").value == 1ull << 30);
  CHECK(parse_size_bytes("2KB").value == 2000);
  CHECK(parse_size_bytes("1.5MB").value == 1'500'000);
  CHECK(parse_size_bytes("10 B").value == 10);
  CHECK(parse_size_bytes("32 mib").value == 32ull << 20);
}

TEST_CASE("sizes: what is refused") {
  CHECK_FALSE(parse_size_bytes("big").ok());
  CHECK(parse_size_bytes("32MiBs").error.find("unknown unit") != std::string::npos);
  CHECK(parse_size_bytes("1.5B").error.find("whole number of B") != std::string::npos);
  CHECK_FALSE(parse_size_bytes("MiB").ok());
}
