#include "config/reload.hpp"

namespace td::config {
namespace {

std::string listen_text(const Config& c) {
  bool v6 = c.listen_host.find(':') != std::string::npos;
  return (v6 ? "[" + c.listen_host + "]" : c.listen_host) + ":" + std::to_string(c.listen_port);
}

}  // namespace

LoadResult reload_config(const ServeArgs& args) { return load_for_serve(args); }

std::vector<std::string> restart_required(const Config& running, const Config& reloaded) {
  std::vector<std::string> out;
  if (listen_text(running) != listen_text(reloaded))
    out.push_back("listen: " + listen_text(running) + " -> " + listen_text(reloaded));
  if (running.threads != reloaded.threads)
    out.push_back("threads: " + std::to_string(running.threads) + " -> " + std::to_string(reloaded.threads));
  if (running.diet_threads != reloaded.diet_threads)
    out.push_back("diet_threads: " + std::to_string(running.diet_threads) + " -> " +
                  std::to_string(reloaded.diet_threads));
  // The shared store's connection is the process's (no password in the log).
  if (running.quota_store.url != reloaded.quota_store.url ||
      running.quota_store.timeout_ms != reloaded.quota_store.timeout_ms)
    out.push_back("quota_store");
  return out;
}

}  // namespace td::config
