// The service manager's notify protocol (sd_notify(3), libsystemd): what
// `tokendiet serve` tells systemd under `Type=notify` (docs/design.md
// §Network). Outside systemd (no NOTIFY_SOCKET) every call does nothing.
#pragma once

#include <chrono>
#include <string_view>

namespace td::service {

class SystemdNotify {
 public:
  // Reads NOTIFY_SOCKET and WATCHDOG_USEC (with WATCHDOG_PID, if set, naming
  // this process) once.
  SystemdNotify();

  bool enabled() const { return enabled_; }
  // How often to send WATCHDOG=1: half of WATCHDOG_USEC; zero without a watchdog.
  std::chrono::microseconds watchdog_interval() const { return watchdog_interval_; }

  // READY=1 (start-up done, or a reload applied or rejected), with STATUS=.
  void ready(std::string_view status) const;
  // RELOADING=1 and MONOTONIC_USEC=<now>, with STATUS=.
  void reloading(std::string_view status) const;
  // STOPPING=1, with STATUS=.
  void stopping(std::string_view status) const;
  // WATCHDOG=1.
  void watchdog() const;

 private:
  void send(std::string_view state, std::string_view status) const;

  bool enabled_ = false;
  std::chrono::microseconds watchdog_interval_{0};
};

}  // namespace td::service
