// A stand-in for systemd's side of the notify protocol (sd_notify(3)), for
// tests: binds a unix datagram socket at argv[1], prints "BOUND", then each
// datagram received as one line, its newlines written as "\n" (two
// characters), until stdin closes or it is killed.
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
  if (argc != 2 || std::strlen(argv[1]) >= sizeof(sockaddr_un::sun_path)) {
    std::fprintf(stderr, "usage: notify_socket PATH (shorter than %zu bytes)\n", sizeof(sockaddr_un::sun_path));
    return 2;
  }
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, argv[1]);
  unlink(argv[1]);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    std::perror("notify_socket: bind");
    return 1;
  }
  std::printf("BOUND\n");
  std::fflush(stdout);
  pollfd fds[2] = {{fd, POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}};
  char buf[65536];
  while (poll(fds, 2, -1) >= 0) {
    if (fds[1].revents) {
      char c;
      if (read(STDIN_FILENO, &c, 1) <= 0) break;
    }
    if (!(fds[0].revents & POLLIN)) continue;
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n < 0) continue;
    std::string line;
    for (ssize_t i = 0; i < n; ++i) line += buf[i] == '\n' ? std::string("\\n") : std::string(1, buf[i]);
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }
  unlink(argv[1]);
  return 0;
}
