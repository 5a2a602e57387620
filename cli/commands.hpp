// The subcommands of the `tokendiet` binary. Each lives in its own
// cli/<name>_command.cpp and takes the arguments after its own name.
#pragma once

namespace td::cli {

int serve(int argc, char** argv);
int version(int argc, char** argv);
int check_config(int argc, char** argv);
int usage(int argc, char** argv);
int count(int argc, char** argv);
int replay(int argc, char** argv);
int archive(int argc, char** argv);

}  // namespace td::cli
