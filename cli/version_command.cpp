#include <cstdio>

#include "cli/commands.hpp"

namespace td::cli {

int version(int, char**) {
  std::printf("tokendiet 0.1.0\n");
  return 0;
}

}  // namespace td::cli
