// Text from the analysed files made safe for a terminal or a log.
#pragma once

#include <string>
#include <string_view>

namespace depscan {

// Text for a terminal or a log: the control characters file names and library strings may carry
// (ESC sequences that clear the screen or move the cursor) and bytes that are not UTF-8 shown as
// \xNN, C1 controls and the bidirectional and zero-width formatting characters as \uNNNN,
// newlines and tabs kept, and with `keep_colour` colour sequences (ESC [ digits ; m): names in
// the text must already have been through one_line for that.
std::string terminal_safe(std::string_view text, bool keep_colour);
// A name or message from the analysed files, for one line of text: every control character
// escaped, newlines and tabs too, so a file name cannot start a line of its own.
std::string one_line(std::string_view text);

}  // namespace depscan
