// Splitting of inline command lines ("SET k v\r\n" typed into telnet), with the exact rules of
// Redis 7.0's sdssplitargs. Pure function of its input; no I/O, no shared state.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::protocol {

// Splits `line` (without its trailing "\r\n") into words:
// - words are separated by C-locale whitespace (space, \t, \n, \v, \f, \r); inside an unquoted
//   word only space, \t, \n and \r end it (a \v or \f in the middle is kept, as Redis does);
// - "double quotes" may start anywhere in a word and understand \n \r \t \b \a \xHH (two hex
//   digits) and backslash + any other byte (that byte itself, e.g. \" and \\);
// - 'single quotes' understand only \' ;
// - a closing quote must be followed by whitespace or the end of the line.
// `line` is read as a C string: a NUL byte ends it (the parser never passes one).
// Appends the words' bytes back to back to *bytes and one (offset into *bytes, length) per word
// to *spans. Returns false for unbalanced quotes (unterminated, or a closing quote followed by
// another byte); *bytes and *spans may then hold a partial result.
bool SplitInlineArgs(std::string_view line, std::string* bytes,
                     std::vector<std::pair<size_t, size_t>>* spans);

}  // namespace sluice::protocol
