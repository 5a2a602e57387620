// The `quota_store` address (docs/design.md §Shared state):
//   redis://[user:password@]host[:port][/db]   TCP (port 6379, db 0 unless given)
//   unix:///path/to/redis.sock[?db=N]          a unix socket
// User and password may be percent-encoded. `rediss://` (TLS) is refused with
// the reason: Debian's hiredis (0.14) has no TLS; reach a remote Redis over a
// tunnel or a unix socket instead.
#pragma once

#include <string_view>

#include "config/config.hpp"
#include "config/parsed.hpp"

namespace td::config {

// Fills every field of QuotaStore but timeout_ms; "" gives the local store.
Parsed<QuotaStore> parse_quota_store(std::string_view text);

}  // namespace td::config
