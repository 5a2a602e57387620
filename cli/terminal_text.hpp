// Text that came from clients or files (task titles, model names, session
// ids, YAML content, trajectory ids), made safe to print where a person reads
// it: a terminal acts on control characters, so an escape sequence in a task
// title could retitle or clear the operator's terminal, or hide lines
// (docs/design.md §Configuration, Command line).
#pragma once

#include <string>
#include <string_view>

namespace td::cli {

// `text` with every character a terminal would act on made visible:
// C0 controls, DEL and each byte of invalid UTF-8 as \xNN (ESC is \x1b, so an
// escape sequence prints as text); C1 controls (U+0080..U+009F) and the
// bidirectional controls that reorder what is shown (U+061C, U+200E, U+200F,
// U+202A..U+202E, U+2066..U+2069) as \uNNNN. Printable ASCII and valid UTF-8
// are kept as they are (a backslash too: the output is for reading, not for
// decoding back). keep_lines keeps '\n' and '\t' (a multi-line text).
std::string terminal_text(std::string_view text, bool keep_lines = false);

// JSON as a writer made it, with the same characters escaped the JSON way
// (\u001b, \u009b, \u202e) and invalid UTF-8 as \ufffd: it parses to the same
// values (invalid bytes aside, which no JSON reader takes), and a terminal
// shows it as text. Outside strings, JSON is ASCII, and '\n' between values
// is kept.
std::string terminal_json(std::string_view json);

// Whether standard output is a terminal.
bool stdout_is_terminal();
// Whether standard error is a terminal (progress lines go there only then).
bool stderr_is_terminal();

}  // namespace td::cli
