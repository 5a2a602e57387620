#include "service/systemd_notify.hpp"

#include <systemd/sd-daemon.h>

#include <cstdlib>
#include <ctime>
#include <string>

namespace td::service {

namespace {
std::uint64_t monotonic_usec() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000u + static_cast<std::uint64_t>(ts.tv_nsec) / 1000u;
}

// STATUS= is one line: a newline would start another assignment.
std::string one_line(std::string_view text) {
  std::string out(text.substr(0, 1024));
  for (char& c : out)
    if (c == '\n' || c == '\r') c = ' ';
  return out;
}
}  // namespace

SystemdNotify::SystemdNotify() {
  const char* socket = std::getenv("NOTIFY_SOCKET");
  enabled_ = socket && *socket;
  std::uint64_t usec = 0;
  if (enabled_ && sd_watchdog_enabled(0, &usec) > 0 && usec > 0)
    watchdog_interval_ = std::chrono::microseconds(usec / 2);
}

void SystemdNotify::send(std::string_view state, std::string_view status) const {
  if (!enabled_) return;
  std::string message(state);
  if (!status.empty()) message += "\nSTATUS=" + one_line(status);
  // A failed notification changes nothing for the clients: systemd then
  // judges the service by its own timeouts.
  sd_notify(0, message.c_str());
}

void SystemdNotify::ready(std::string_view status) const { send("READY=1", status); }

void SystemdNotify::reloading(std::string_view status) const {
  send("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(monotonic_usec()), status);
}

void SystemdNotify::stopping(std::string_view status) const { send("STOPPING=1", status); }

void SystemdNotify::watchdog() const { send("WATCHDOG=1", {}); }

}  // namespace td::service
