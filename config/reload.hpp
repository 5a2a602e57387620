// SIGHUP reload (F19), the pure part. The proxy's signal handler calls
// load_for_serve(args) again with the ServeArgs it started with (so the
// command-line overrides still win), then:
//   - on errors: keeps the running config and logs each format_error(e);
//   - on success: logs restart_required(old, new) for settings a running
//     server cannot change (the listening socket, the thread count), and
//     swaps the rest in atomically (e.g. std::atomic<std::shared_ptr<const
//     Config>>; requests in flight keep the snapshot they started with).
#pragma once

#include <string>
#include <vector>

#include "config/config.hpp"
#include "config/serve_args.hpp"

namespace td::config {

// Loads the config again, exactly as at start.
LoadResult reload_config(const ServeArgs& args);

// Keys whose change only takes effect after a restart ("listen", "threads"),
// each with old and new value, e.g. "listen: 127.0.0.1:8787 -> 0.0.0.0:8787".
std::vector<std::string> restart_required(const Config& running, const Config& reloaded);

}  // namespace td::config
