// Published by a filter that answered one of the proxy's own endpoints (the
// dashboard, docs/design.md §Dashboard): the request was no proxied call, so
// it gets no ledger row and no /metrics count (§Ledger and metrics).
#pragma once

namespace td::proxy {

struct OwnEndpoint {};

}  // namespace td::proxy
