#include <cstdio>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/options.hpp"

namespace td::cli {

int version(int argc, char** argv) {
  auto app = make_app("version", "usage: tokendiet version\n\nPrints the version (also `tokendiet --version`).\n");
  if (auto stop = parse(*app, args_of(argc, argv))) return finish(*stop, std::cout, std::cerr);
  std::printf("tokendiet 0.1.0\n");
  return 0;
}

}  // namespace td::cli
